# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The guest kernel: extract the linux-source tarball of KERNEL (6.1 or 6.12)
# once, apply that kernel's series quilt-style (only files whose patched
# content changed get a new mtime, so an edit to one patch rebuilds only
# what it touches), merge the config
# fragments onto tinyconfig, build out of tree, and cache the image by a hash
# of every input. Sourced by rig.

# Bump when the recipe below changes what an image is built from.
readonly KBUILD_RECIPE=2

# KERNEL=6.1|6.12: the Debian linux-source package the rig builds by default.
# Each has its own series (kernel-series/ for 6.1, kernel-series/6.12/) and
# fixes; the config fragments are shared.
readonly KERNEL_VERSIONS="6.1 6.12"

# kernel_select VERSION: the package, tarball and extracted tree of VERSION.
kernel_select() {
	KERNEL_PKG=linux-source-$1
	KERNEL_TARBALL=/usr/src/$KERNEL_PKG.tar.xz
	KERNEL_TREE=$RIG_BUILD/src/$KERNEL_PKG
}
kernel_select 6.1

# kernel_series_dir VERSION: where the series for VERSION lives (6.1's is
# the original one at the top of kernel-series/).
kernel_series_dir() {
	if [[ $1 == 6.1 ]]; then
		echo "$RIG_ROOT/kernel-series"
	else
		echo "$RIG_ROOT/kernel-series/$1"
	fi
}

# tree_version DIR: VERSION.PATCHLEVEL of a kernel tree, from its Makefile.
tree_version() {
	awk '$1 == "VERSION" { v = $3 } $1 == "PATCHLEVEL" { p = $3 }
	     END { if (v != "" && p != "") print v "." p }' "$1/Makefile"
}

# kernel_series_version: the kernel whose series and fixes apply.
kernel_series_version() {
	if [[ -n ${KERNEL_SRC:-} ]]; then tree_version "$KERNEL_SRC"; else echo "$KERNEL"; fi
}

# Kernel variants. `vmemmap` is the default kernel: tinyconfig plus every
# fragment in kernel-series/config/. A variant NAME is known when
# kernel-series/config/variants/ has NAME.config, NAME.cmdline or both:
# NAME.config is merged last (it may override the common fragments) and makes
# a build of its own, with its own object folder and cached image;
# NAME.cmdline holds kernel arguments for every run of the variant (one or
# more per line, '#' comments). A variant with only a .cmdline boots the
# default kernel (same image, same input hash).
KVARIANT_DIR=$RIG_ROOT/kernel-series/config/variants

kernel_variants() {
	echo vmemmap
	local f
	for f in "$KVARIANT_DIR"/*.config "$KVARIANT_DIR"/*.cmdline; do
		[[ -e $f ]] || continue
		f=${f##*/}
		echo "${f%.*}"
	done | sort -u | { grep -vx vmemmap || true; }
}

# kernel_build_variant: the variant whose kernel VARIANT boots (itself when
# it has a .config, else the default).
kernel_build_variant() {
	if [[ $VARIANT != vmemmap && -f $KVARIANT_DIR/$VARIANT.config ]]; then
		echo "$VARIANT"
	else
		echo vmemmap
	fi
}

# kernel_variant_cmdline NAME: the kernel arguments of NAME.cmdline, on one
# line (comments and blank lines dropped).
kernel_variant_cmdline() {
	local f=$KVARIANT_DIR/$1.cmdline line args=''
	local -a words
	[[ -f $f ]] || return 0
	while IFS= read -r line || [[ -n $line ]]; do
		read -ra words <<<"${line%%#*}"
		((${#words[@]} == 0)) || args+=${args:+ }${words[*]}
	done <"$f"
	echo "$args"
}

# kernel_check_variant NAME: exit 2 with one line unless NAME is known;
# sets KVARIANT_CMDLINE (exported), the arguments the runner appends to the
# kernel command line of every run of the variant.
kernel_check_variant() {
	case ${1,,} in
	flatmem)
		die "VARIANT=$1: FLATMEM cannot hot-plug memory (MEMORY_HOTPLUG needs SPARSEMEM) and x86_64 cannot even select it; VARIANT=classic is SPARSEMEM without VMEMMAP"
		;;
	discontigmem)
		die "VARIANT=$1: DISCONTIGMEM was removed in Linux 5.14 (6.1 has only FLATMEM and SPARSEMEM) and never hot-plugged memory on x86_64; VARIANT=classic is SPARSEMEM without VMEMMAP"
		;;
	esac
	local v known=0
	for v in $(kernel_variants); do
		[[ $v == "$1" ]] && known=1
	done
	((known)) || die "VARIANT=$1 is not a known kernel variant (known: $(kernel_variants | tr '\n' ' '))"
	KVARIANT_CMDLINE=$(kernel_variant_cmdline "$1")
	export KVARIANT_CMDLINE
}

# kernel_variant_note BUILD_VARIANT: what the variant boots, for messages.
kernel_variant_note() {
	[[ $VARIANT != vmemmap || -n ${KVARIANT_CMDLINE:-} ]] || return 0
	printf ', variant %s' "$VARIANT"
	[[ $1 == "$VARIANT" ]] || printf ' (the %s kernel)' "$1"
	[[ -z ${KVARIANT_CMDLINE:-} ]] || printf ' booted with %s' "$KVARIANT_CMDLINE"
}

# Config fragments: config/*.config is what any kernel with memory hotplug
# takes; config/series/*.config asks for what the series adds, and is merged
# only as far as the tree's Kconfig offers it (see kernel_merge_fragments).
kernel_fragments() {
	local f bv
	for f in "$RIG_ROOT"/kernel-series/config/*.config \
		"$RIG_ROOT"/kernel-series/config/series/*.config; do
		[[ -e $f ]] && echo "$f"
	done
	bv=$(kernel_build_variant)
	[[ $bv == vmemmap ]] || echo "$KVARIANT_DIR/$bv.config"
}

# kernel_merge_fragments SRC CFGDIR: the fragments to merge into SRC's
# config. A series fragment keeps only the options some Kconfig file of SRC
# declares: a tree without the series (or with part of it merged) builds,
# and says what it left out; an option the tree declares but cannot turn on
# still stops the build in kernel_verify_config.
kernel_merge_fragments() {
	local src=$1 cfgdir=$2 f line opt out
	local -A declared=()
	local -a missing
	while read -r opt; do
		declared[$opt]=1
	done < <(grep -rhoE --include='Kconfig*' '^[[:space:]]*(menu)?config[[:space:]]+[A-Za-z0-9_]+' "$src" |
		awk '{ print $2 }')
	for f in $(kernel_fragments); do
		if [[ $f != "$RIG_ROOT/kernel-series/config/series/"* ]]; then
			echo "$f"
			continue
		fi
		out=$cfgdir/series-${f##*/} missing=()
		: >"$out"
		while IFS= read -r line || [[ -n $line ]]; do
			case $line in
			CONFIG_*=*) opt=${line%%=*} ;;
			"# CONFIG_"*" is not set") opt=${line#\# } opt=${opt%% *} ;;
			*) echo "$line" >>"$out"; continue ;;
			esac
			if [[ -n ${declared[${opt#CONFIG_}]+set} ]]; then
				echo "$line" >>"$out"
			else
				missing+=("$opt")
			fi
		done <"$f"
		((${#missing[@]} == 0)) ||
			say "series/${f##*/}: the tree's Kconfig has no ${missing[*]}; left out (no series in this tree)" >&2
		echo "$out"
	done
}

# series_patches DIR: the patches listed in DIR/series, in order.
series_patches() {
	local dir=$1 name _
	[[ -f $dir/series ]] || return 0
	while read -r name _; do
		[[ -z $name || $name == \#* ]] && continue
		[[ -f $dir/$name ]] || die "$dir/series names $name, which does not exist"
		echo "$dir/$name"
	done <"$dir/series"
}

kernel_patches() {
	local dir
	dir=$(kernel_series_dir "$(kernel_series_version)")
	if [[ ${SERIES:-} == 1 ]]; then
		series_patches "$dir"
	fi
	if [[ ${FIXES:-0} == 1 ]]; then
		series_patches "$dir/fixes"
	fi
	# A variant's own patch (coverage: GCOV_PROFILE lines) is written for
	# the 6.1 tarball and applies only to the variant that builds with it.
	local vp=$KVARIANT_DIR/$(kernel_build_variant).patch
	[[ ! -f $vp || -n ${KERNEL_SRC:-} || $(kernel_series_version) != 6.1 ]] || echo "$vp"
	local p
	for p in ${EXTRA_PATCHES:-}; do
		realpath "$p"
	done
}

# Validate the kernel variables before anything is built or booted.
kernel_check_vars() {
	local p sv sdir
	if [[ -n ${KERNEL:-} ]]; then
		[[ " $KERNEL_VERSIONS " == *" $KERNEL "* ]] ||
			die "KERNEL=$KERNEL: use one of $KERNEL_VERSIONS (Debian's linux-source-* packages)"
		[[ -z ${KERNEL_SRC:-}${KERNEL_IMAGE:-} ]] ||
			die "KERNEL=$KERNEL picks a packaged source; KERNEL_SRC and KERNEL_IMAGE bring their own kernel"
	fi
	KERNEL=${KERNEL:-6.1}
	kernel_select "$KERNEL"
	if [[ -n ${KERNEL_IMAGE:-} ]]; then
		[[ -f $KERNEL_IMAGE ]] || die "KERNEL_IMAGE=$KERNEL_IMAGE: no such file"
		[[ -z ${KERNEL_SRC:-} ]] || die "KERNEL_IMAGE and KERNEL_SRC exclude each other"
		[[ -z ${EXTRA_PATCHES:-} && ${FIXES:-0} != 1 ]] ||
			die "KERNEL_IMAGE is used as it is: EXTRA_PATCHES and FIXES=1 need a build"
		kernel_image_inspect
	fi
	if [[ -n ${KERNEL_SRC:-} ]]; then
		[[ -f $KERNEL_SRC/Makefile && -d $KERNEL_SRC/mm ]] ||
			die "KERNEL_SRC=$KERNEL_SRC is not a kernel tree"
		KERNEL_SRC=$(realpath "$KERNEL_SRC")
		# Kbuild refuses an O= build of a tree configured in place
		# ("source tree is not clean"); say so before anything runs.
		[[ ! -e $KERNEL_SRC/.config && ! -e $KERNEL_SRC/include/config ]] ||
			die "KERNEL_SRC=$KERNEL_SRC was configured or built in place (it has .config or include/config), and Kbuild refuses to build such a tree out of tree: run 'make mrproper' in it (keep your .config first), or boot what you built with KERNEL_IMAGE=$KERNEL_SRC/arch/x86/boot/bzImage"
	fi
	local f
	for p in ${EXTRA_PATCHES:-}; do
		[[ -f $p ]] || die "EXTRA_PATCHES: $p: no such file"
		# a patch writes inside the tree, or not at all
		while IFS= read -r f; do
			[[ $f == /* || /$f/ == */../* ]] &&
				die "EXTRA_PATCHES: $p touches $f, outside the kernel tree"
		done < <(patch_files "$p")
	done
	[[ ${FIXES:-0} =~ ^[01]$ ]] || die "FIXES=$FIXES: use 0 or 1"
	kernel_check_variant "$VARIANT"
	[[ ! -f $KVARIANT_DIR/$VARIANT.patch || -n ${KERNEL_IMAGE:-} ||
		( -z ${KERNEL_SRC:-} && $KERNEL == 6.1 ) ]] ||
		die "VARIANT=$VARIANT: its patch ($VARIANT.patch) is written for KERNEL=6.1's packaged tree only"
	# The series is ours and applies to the tarball it was written for; a
	# tree of your own gets it only when asked (SERIES=1).
	sv=$(kernel_series_version) sdir=$(kernel_series_dir "$sv")
	if [[ -z ${SERIES:-} ]]; then
		if [[ -z ${KERNEL_SRC:-} && -f $sdir/series ]]; then SERIES=1; else SERIES=0; fi
	fi
	[[ $SERIES =~ ^[01]$ ]] || die "SERIES=$SERIES: use 0 or 1"
	if [[ -z ${KERNEL_IMAGE:-} ]]; then
		[[ $SERIES == 0 || -f $sdir/series ]] ||
			die "SERIES=1: there is no series for Linux ${sv:-of unknown version} (${sdir#"$RIG_ROOT"/}/series); SERIES=0 builds without it"
		[[ ${FIXES:-0} == 0 || -f $sdir/fixes/series ]] ||
			die "FIXES=1: there are no fixes for Linux ${sv:-of unknown version} (${sdir#"$RIG_ROOT"/}/fixes/series)"
	fi
	kmod_check_vars
	kmod_resolve
	# Patches into a tree of your own would change your files: we do not.
	if [[ -n ${KERNEL_SRC:-} && ( $SERIES == 1 || -n ${EXTRA_PATCHES:-} || ${FIXES:-0} == 1 ) ]]; then
		KERNEL_SRC_COPY=1
	fi
	return 0
}

# kernel_offers CONFIG_X: the kernel this run boots will have CONFIG_X, as
# far as can be told before it is built: an image's config says =y; a build
# gets it when a patch it applies adds the option, or the tree's Kconfig
# already declares it (the series fragments ask for what is declared). For
# seeded draws (random.sh), which must pick only steps the kernel can take.
kernel_offers() {
	local opt=${1#CONFIG_} tree p
	if [[ -n ${KERNEL_IMAGE:-} ]]; then
		[[ -n ${KCONFIG:-} ]] && grep -qx "CONFIG_$opt=y" "$KCONFIG"
		return
	fi
	for p in $(kernel_patches); do
		grep -qE "^\+(menu)?config $opt\$" "$p" && return 0
	done
	tree=${KERNEL_SRC:-$KERNEL_TREE}
	[[ -d $tree ]] || return 1
	grep -rqE --include='Kconfig*' "^[[:space:]]*(menu)?config[[:space:]]+$opt\$" "$tree"
}

# patch_files PATCH...: every path a patch touches, as patch -p1 reads it:
# both names of each "--- "/"+++ " header pair, whatever their first
# component (a/, orig/, ...), and git's rename and copy lines. An absolute
# name stays absolute, so the caller can refuse it.
patch_files() {
	awk '
	function name(s) {
		sub(/\t.*/, "", s)
		gsub(/^"|"$/, "", s)
		return s
	}
	function p1(s) {
		s = name(s)
		if (s == "/dev/null")
			return ""
		if (s !~ /^\//)
			sub(/^[^\/]*\//, "", s)
		return s
	}
	# a "+++ " right after a "--- " is a header pair, not hunk lines
	hdr != "" && /^\+\+\+ / {
		a = p1(substr(hdr, 5)); b = p1(substr($0, 5))
		if (a != "") print a
		if (b != "") print b
	}
	{ hdr = /^--- / ? $0 : "" }
	/^(rename|copy) from / { print name(substr($0, length($1) + 7)) }
	/^(rename|copy) to / { print name(substr($0, length($1) + 5)) }
	' "$@" | sort -u
}

# apply_patches TREE PRISTINE STATE PATCH...: bring TREE to PRISTINE plus the
# patches. Original files are saved in STATE/orig the first time a patch
# touches them; only files whose content changes are rewritten.
apply_patches() {
	local tree=$1 pristine=$2 state=$3 f p stage
	shift 3
	mkdir -p "$state/orig"
	touch "$state/touched"
	local -a now old all
	mapfile -t now < <(patch_files /dev/null "$@")
	mapfile -t old <"$state/touched"
	mapfile -t all < <(printf '%s\n' "${now[@]}" "${old[@]}" | sed '/^$/d' | sort -u)
	for f in "${all[@]}"; do
		[[ -e $state/orig/$f || -e $state/orig/$f.rig-absent ]] && continue
		mkdir -p "$state/orig/$(dirname "$f")"
		if [[ -e $pristine/$f ]]; then
			cp -p "$pristine/$f" "$state/orig/$f"
		else
			touch "$state/orig/$f.rig-absent"
		fi
	done
	stage=$(mktemp -d "$state/stage.XXXXXX")
	for f in "${all[@]}"; do
		[[ -e $state/orig/$f ]] || continue
		mkdir -p "$stage/$(dirname "$f")"
		cp "$state/orig/$f" "$stage/$f"
	done
	for p in "$@"; do
		if ! patch -p1 -d "$stage" -s -f --no-backup-if-mismatch -i "$p" >"$state/patch.log" 2>&1; then
			sed 's/^/  /' "$state/patch.log" >&2
			rm -rf "$stage"
			die "$p does not apply (on top of the patches before it)"
		fi
	done
	for f in "${all[@]}"; do
		if [[ -e $stage/$f ]]; then
			cmp -s "$stage/$f" "$tree/$f" && continue
			mkdir -p "$tree/$(dirname "$f")"
			# a new file, never a write into the old one: in a
			# hard-link copy of your tree the old one is yours
			cp --remove-destination "$stage/$f" "$tree/$f"
		else
			rm -f "$tree/$f"
		fi
	done
	printf '%s\n' "${now[@]}" >"$state/touched"
	rm -rf "$stage"
}

# The input hash: everything an image is built from.
kernel_input_hash() {
	{
		echo "recipe $KBUILD_RECIPE variant $(kernel_build_variant)"
		if [[ -n ${KERNEL_SRC:-} ]]; then
			echo "src $KERNEL_SRC"
		else
			echo "tarball $KERNEL_PKG $(kernel_pkg_version) $(stat -c %s "$KERNEL_TARBALL")"
		fi
		gcc --version | head -1
		local f
		for f in $(kernel_fragments) $(kernel_patches); do
			echo "$(basename "$f") $(sha256sum <"$f")"
		done
	} | sha256sum | cut -c1-16
}

# kernel_verify_config CONFIG FRAGMENT...: every option the fragments ask
# for is in the final CONFIG. Fragments are merged in order, so the last
# fragment that mentions an option wins (a variant may turn off what
# base.config turns on, or what drops out with it).
kernel_verify_config() {
	local cfg=$1 f line opt want have
	shift
	local -A last=() from=()
	local -a order=() bad=()
	for f in "$@"; do
		while read -r line || [[ -n $line ]]; do
			case $line in
			CONFIG_*=*) opt=${line%%=*} ;;
			"# CONFIG_"*" is not set") opt=${line#\# } opt=${opt%% *} ;;
			*) continue ;;
			esac
			[[ -n ${last[$opt]+set} ]] || order+=("$opt")
			last[$opt]=$line from[$opt]=${f##*/}
		done <"$f"
	done
	for opt in "${order[@]}"; do
		want=${last[$opt]}
		if [[ $want == "#"* ]]; then
			grep -q "^$opt=" "$cfg" || continue
		else
			grep -qxF "$want" "$cfg" && continue
		fi
		have=$(grep -m1 -e "^$opt=" -e "^# $opt is not set" "$cfg") || have="not in .config (a dependency is missing)"
		bad+=("$want (from ${from[$opt]}; have: $have)")
	done
	((${#bad[@]} == 0)) && return 0
	echo "rig: error: the final .config lacks what the fragments ask for:" >&2
	printf '  %s\n' "${bad[@]}" >&2
	die "requested config options did not make it into the kernel config ($cfg)"
}

# kernel_pkg_version: the installed version of KERNEL's linux-source package.
kernel_pkg_version() {
	dpkg-query -W -f='${Version}' "$KERNEL_PKG" 2>/dev/null || true
}

kernel_extract() {
	local top=$1
	[[ -f $top/.rig-extracted ]] && return 0
	[[ -f $KERNEL_TARBALL ]] || die "$KERNEL_TARBALL missing (package $KERNEL_PKG)"
	say "extracting $(basename "$KERNEL_TARBALL")"
	rm -rf "$top" "$top.rig"
	mkdir -p "$(dirname "$top")"
	tar -xf "$KERNEL_TARBALL" -C "$(dirname "$top")" || die "cannot extract $KERNEL_TARBALL"
	touch "$top/.rig-extracted"
}

# image_release IMAGE: the release a bzImage says it is (the string its
# setup header's kernel_version field points at), empty when it has none.
image_release() {
	local img=$1 off magic
	magic=$(dd if="$img" bs=1 skip=$((0x202)) count=4 status=none 2>/dev/null | tr -d '\0')
	[[ $magic == HdrS ]] || return 0
	off=$(od -An -tu2 -j $((0x20E)) -N2 "$img" | tr -d ' ')
	[[ -n $off ]] && ((off > 0)) || return 0
	dd if="$img" bs=1 skip=$((off + 0x200)) count=256 status=none 2>/dev/null |
		tr '\0' '\n' | head -1 | awk '{ print $1 }'
}

# image_config IMAGE RELEASE: the config an image was built with, as a
# distribution or a build leaves it: config-RELEASE beside the image (Debian's
# /boot, an extracted linux-image package), ../../../.config (an O= build's
# arch/x86/boot/bzImage), config beside it (the rig's own cache), or the
# one built into the image (IKCONFIG).
image_config() {
	local dir c
	dir=$(dirname "$1")
	for c in ${2:+"$dir/config-$2"} "$dir/../../../.config" "$dir/config" "$dir/.config"; do
		[[ -f $c ]] && grep -q '^CONFIG_' "$c" && { realpath "$c"; return 0; }
	done
	image_ikconfig "$1"
}

# image_ikconfig IMAGE: the config built into IMAGE (CONFIG_IKCONFIG), as
# scripts/extract-ikconfig finds it: the compressed kernel inside the
# bzImage is unpacked, and the gzip blob between IKCFG_ST and IKCFG_ED is
# the config. Kept under build/ikconfig by the image's hash; nothing when
# the image has none.
image_ikconfig() {
	local img=$1 out tmp sig tool off n
	out=$RIG_BUILD/ikconfig/$(sha256sum <"$img" | cut -c1-16).config
	[[ -s $out ]] && { echo "$out"; return 0; }
	mkdir -p "$RIG_BUILD/ikconfig"
	tmp=$(mktemp "$out.XXXXXX")
	for sig in '\x1f\x8b\x08:gzip' '\xfd7zXZ\x00:xz' '\x28\xb5\x2f\xfd:zstd' '\x5d\x00\x00:lzma'; do
		tool=${sig#*:} sig=${sig%:*}
		command -v "$tool" >/dev/null || continue
		n=0
		while IFS=: read -r off _; do
			((++n <= 4)) || break
			tail -c +$((off + 1)) "$img" | "$tool" -dc 2>/dev/null >"$tmp.k" || true
			off=$(LC_ALL=C grep -obUa 'IKCFG_ST' "$tmp.k" | head -1 | cut -d: -f1)
			[[ -n $off ]] || continue
			tail -c +$((off + 9)) "$tmp.k" | gzip -dc 2>/dev/null >"$tmp" || true
			if grep -q '^CONFIG_' "$tmp"; then
				mv "$tmp" "$out"
				rm -f "$tmp.k"
				echo "$out"
				return 0
			fi
		done < <(LC_ALL=C grep -obUaP "$sig" "$img" 2>/dev/null)
	done
	rm -f "$tmp" "$tmp.k"
	return 0
}

# kernel_image_inspect: KIMAGE, KRELEASE and KCONFIG of KERNEL_IMAGE, as
# soon as the variables are checked, so scenario needs and random draws
# are judged on what the image has before anything boots.
kernel_image_inspect() {
	KIMAGE=$(realpath "$KERNEL_IMAGE")
	KRELEASE=$(image_release "$KIMAGE")
	KCONFIG=$(image_config "$KIMAGE" "$KRELEASE")
}

# kernel_src_git: KGIT_DESCRIBE and KGIT_HEAD of KERNEL_SRC when it is the
# top of a git work tree (`git describe --dirty`, so a result names the exact
# code, local changes included); empty otherwise. Trees owned by another
# user are read too (safe.directory): git only reads them here.
kernel_src_git() {
	KGIT_DESCRIBE='' KGIT_HEAD=''
	local -a git=(git -c safe.directory="$KERNEL_SRC" -C "$KERNEL_SRC")
	command -v git >/dev/null || return 0
	[[ $("${git[@]}" rev-parse --show-toplevel 2>/dev/null) == "$KERNEL_SRC" ]] || return 0
	KGIT_HEAD=$("${git[@]}" rev-parse HEAD 2>/dev/null) || KGIT_HEAD=''
	KGIT_DESCRIBE=$("${git[@]}" describe --dirty --always 2>/dev/null) || KGIT_DESCRIBE=''
	[[ -z $KGIT_HEAD ]] || KSOURCE+=" git $KGIT_DESCRIBE $KGIT_HEAD"
}

# kernel_build: sets KIMAGE, KCONFIG, KRELEASE, KHASH, KSOURCE (where the
# kernel came from, for summary.json) and KTREE (the source tree, whose
# selftests the guest runs; empty for an image).
kernel_build() {
	if [[ -n ${KERNEL_IMAGE:-} ]]; then
		kernel_image_inspect
		KHASH=image KTREE=''
		KSOURCE="image $KIMAGE"
		if [[ -n $KCONFIG ]]; then
			say "kernel image ${KRELEASE:-of unknown release}, config $KCONFIG"
		else
			say "no config for $KERNEL_IMAGE (config-${KRELEASE:-RELEASE} beside it, or the O= build's .config): the guest is probed for what scenarios need"
		fi
		return 0
	fi
	local build=$RIG_BUILD src pristine state objdir imgdir bv
	bv=$(kernel_build_variant)
	KHASH=$(kernel_input_hash)
	imgdir=$build/images/$KHASH
	if [[ -z ${KERNEL_SRC:-} && -f $imgdir/bzImage ]]; then
		KIMAGE=$imgdir/bzImage KCONFIG=$imgdir/config KRELEASE=$(cat "$imgdir/release")
		KSOURCE=$(cat "$imgdir/source") KTREE=$KERNEL_TREE
		say "kernel $KRELEASE (cached, inputs $KHASH)$(kernel_variant_note "$bv")"
		return 0
	fi
	mkdir -p "$build"
	local lockfd
	exec {lockfd}>"$build/.kbuild.lock"
	# One build at a time (the source tree is shared): a run that needs
	# the same image waits here, then finds it built.
	if ! flock -n "$lockfd"; then
		say "waiting for another kernel build to finish ($build/.kbuild.lock)"
		flock "$lockfd"
	fi
	# Another run may have built it while we waited.
	if [[ -z ${KERNEL_SRC:-} && -f $imgdir/bzImage ]]; then
		exec {lockfd}>&-
		kernel_build
		return
	fi
	local -a patches
	mapfile -t patches < <(kernel_patches)
	if [[ -n ${KERNEL_SRC:-} ]]; then
		local tag
		tag=ext-$(echo "$KERNEL_SRC" | sha256sum | cut -c1-8)
		objdir=$build/kernel/$tag-$bv
		if [[ ${KERNEL_SRC_COPY:-0} == 1 ]]; then
			# the patched copy builds apart from the tree as it is:
			# each keeps its objects and image, and switching costs
			# nothing once both are built
			objdir=$build/kernel/$tag-patched-$bv
			# A hard-link farm of your tree: patched files are replaced,
			# never written through, so your tree stays as it is.
			src=$build/src/$tag pristine=$KERNEL_SRC state=$build/src/$tag.rig
			if [[ ! -d $src ]]; then
				say "linking $KERNEL_SRC into $src"
				mkdir -p "$build/src"
				# Hard links cannot cross filesystems: copy instead,
				# which still never writes into your tree.
				if ! cp -al "$KERNEL_SRC" "$src" 2>/dev/null; then
					rm -rf "$src"
					say "cannot link across filesystems, copying $KERNEL_SRC into $src"
					cp -a "$KERNEL_SRC" "$src" || die "cannot copy $KERNEL_SRC into $src"
				fi
			fi
			apply_patches "$src" "$pristine" "$state" "${patches[@]}"
		else
			src=$KERNEL_SRC
		fi
		imgdir=$objdir/image
		KSOURCE="tree $KERNEL_SRC"
		kernel_src_git
	else
		src=$KERNEL_TREE
		kernel_extract "$src"
		apply_patches "$src" "$src" "$src.rig" "${patches[@]}"
		objdir=$build/kernel/$KERNEL-$bv
		KSOURCE="$KERNEL_PKG $(kernel_pkg_version)"
	fi
	KTREE=$src
	local cfgdir=$objdir.cfg
	local -a mk=(make -C "$src" ARCH=x86_64) frags
	[[ ${V:-0} == 1 ]] || mk+=(-s)
	mkdir -p "$objdir" "$cfgdir"
	mapfile -t frags < <(kernel_merge_fragments "$src" "$cfgdir")
	say "configuring ($bv): tinyconfig + ${frags[*]##*/}"
	"${mk[@]}" O="$cfgdir" tinyconfig >"$cfgdir/config.log" 2>&1 ||
		{ tail -20 "$cfgdir/config.log" >&2; die "make tinyconfig failed"; }
	"$src/scripts/kconfig/merge_config.sh" -m -O "$cfgdir" "$cfgdir/.config" "${frags[@]}" \
		>>"$cfgdir/config.log" 2>&1 || die "merge_config.sh failed (see $cfgdir/config.log)"
	"${mk[@]}" O="$cfgdir" olddefconfig >>"$cfgdir/config.log" 2>&1 ||
		die "make olddefconfig failed (see $cfgdir/config.log)"
	kernel_verify_config "$cfgdir/.config" "${frags[@]}"
	cmp -s "$cfgdir/.config" "$objdir/.config" || cp "$cfgdir/.config" "$objdir/.config"
	local t0 jobs
	now_ms t0
	jobs=${JOBS:-$(nproc)}
	say "building $( [[ -n ${KERNEL_SRC:-} ]] && echo "$KERNEL_SRC" || echo "$KERNEL_PKG") with ${#patches[@]} patches, -j$jobs (log: $objdir/build.log)"
	if ! "${mk[@]}" O="$objdir" -j"$jobs" bzImage >"$objdir/build.log" 2>&1; then
		tail -30 "$objdir/build.log" >&2
		die "kernel build failed (see $objdir/build.log)"
	fi
	now_ms KBUILD_MS
	KBUILD_MS=$((KBUILD_MS - t0))
	mkdir -p "$imgdir"
	cp "$objdir/arch/x86/boot/bzImage" "$imgdir/bzImage.tmp"
	cp "$objdir/.config" "$imgdir/config"
	cat "$objdir/include/config/kernel.release" >"$imgdir/release"
	printf '%s\n' "${patches[@]}" >"$imgdir/patches"
	echo "$KSOURCE" >"$imgdir/source"
	coverage_save_sources "$src" "$imgdir"
	mv "$imgdir/bzImage.tmp" "$imgdir/bzImage"
	exec {lockfd}>&-
	KIMAGE=$imgdir/bzImage KCONFIG=$imgdir/config KRELEASE=$(cat "$imgdir/release")
	say "kernel $KRELEASE built in $((KBUILD_MS / 1000)) s$(kernel_variant_note "$bv")"
}
