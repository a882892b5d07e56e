# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# KERNEL_MODULES: the drivers a distribution builds as modules, for a
# KERNEL_IMAGE. The folder (an extracted linux-image package's root, or its
# lib/modules/<release>) must match the image's release; the modules a
# scenario may need (KMOD_FOR) and their dependencies (modules.dep when the
# folder has one, else each module's own .modinfo "depends=") are packed
# into a second cpio that the kernel unpacks over the guest image, and the
# guest's init loads them in order at boot. Sourced by rig.

# The options whose module the guest can load, and the module each builds.
declare -rA KMOD_FOR=(
	[CONFIG_VIRTIO_PCI]=virtio_pci
	[CONFIG_VIRTIO_MEM]=virtio_mem
	[CONFIG_MEMORY_NOTIFIER_ERROR_INJECT]=memory_notifier_error_inject
)

# kmod_is_dir DIR: DIR is a lib/modules/<release> folder as a kernel's
# modules_install (or a package) leaves it.
kmod_is_dir() {
	[[ -d $1/kernel ]] && [[ -f $1/modules.order || -f $1/modules.builtin || -f $1/modules.dep ]]
}

# kmod_check_vars: KERNEL_MODULES checked and turned into KMOD_DIR, the
# lib/modules/<release> folder of the image's release; exit 2 with one line
# otherwise.
kmod_check_vars() {
	KMOD_DIR=''
	[[ -n ${KERNEL_MODULES:-} ]] || return 0
	[[ -n ${KERNEL_IMAGE:-} ]] ||
		die "KERNEL_MODULES goes with KERNEL_IMAGE (a kernel the rig builds has its drivers built in)"
	[[ -d $KERNEL_MODULES ]] || die "KERNEL_MODULES=$KERNEL_MODULES: no such folder"
	local d rel=${KRELEASE:-}
	[[ -n $rel ]] || die "KERNEL_MODULES: $KERNEL_IMAGE does not say its release, so its modules cannot be matched"
	for d in "$KERNEL_MODULES/lib/modules/$rel" "$KERNEL_MODULES/usr/lib/modules/$rel" \
		"$KERNEL_MODULES/$rel" "$KERNEL_MODULES"; do
		kmod_is_dir "$d" && [[ $(basename "$(realpath "$d")") == "$rel" ]] &&
			{ KMOD_DIR=$(realpath "$d"); return 0; }
	done
	local have=''
	for d in "$KERNEL_MODULES"/lib/modules/* "$KERNEL_MODULES"/* "$KERNEL_MODULES"; do
		kmod_is_dir "$d" && have+=" $(basename "$(realpath "$d")")"
	done
	die "KERNEL_MODULES=$KERNEL_MODULES has no modules for release $rel (the image's)${have:+; it has modules for:$have}; give the package root or lib/modules/$rel"
}

# kmod_name FILE: the module name of a .ko file (dashes as underscores).
kmod_name() {
	local n=${1##*/}
	n=${n%%.ko*}
	echo "${n//-/_}"
}

# kmod_index: KMOD_PATH[name] for every module file under KMOD_DIR.
kmod_index() {
	declare -gA KMOD_PATH=()
	local f n
	while IFS= read -r f; do
		n=${f##*/} n=${n%%.ko*}
		KMOD_PATH[${n//-/_}]=$f
	done < <(find "$KMOD_DIR" -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz')
}

# kmod_info FILE FIELD: a field of a module's .modinfo section.
kmod_info() {
	local f=$1
	case $f in
	*.xz) xz -dc "$f" ;;
	*.zst) zstd -dcq "$f" ;;
	*.gz) gzip -dc "$f" ;;
	*) cat "$f" ;;
	esac 2>/dev/null | tr '\0' '\n' | sed -n "s/^$2=//p" | head -1
}

# kmod_deps NAME: NAME's direct dependencies, from modules.dep when there
# is one, else from the module itself.
kmod_deps() {
	local name=$1 rel line
	if [[ -f $KMOD_DIR/modules.dep ]]; then
		rel=${KMOD_PATH[$name]#"$KMOD_DIR"/}
		line=$(grep -m1 "^$rel:" "$KMOD_DIR/modules.dep") || true
		for rel in ${line#*:}; do kmod_name "$rel"; done
	else
		kmod_info "${KMOD_PATH[$name]}" depends | tr ',' '\n' | sed '/^$/d;s/-/_/g'
	fi
}

# kmod_order NAME...: the modules and their dependencies, each once, every
# dependency before the modules that need it (KMOD_LOAD); a name with no file is
# in KMOD_MISSING.
kmod_order() {
	local n
	for n in "$@"; do
		[[ -n ${kmod_seen[$n]:-} ]] && continue
		kmod_seen[$n]=1
		if [[ -z ${KMOD_PATH[$n]:-} ]]; then
			KMOD_MISSING+=("$n")
			continue
		fi
		# shellcheck disable=SC2046 # names are words
		kmod_order $(kmod_deps "$n")
		KMOD_LOAD+=("$n")
	done
}

# kmod_config OPTION: y, m or nothing, as the image's config has OPTION.
kmod_config() {
	[[ -n ${KCONFIG:-} ]] || return 0
	sed -n "s/^$1=//p" "$KCONFIG" | head -1
}

# kmod_resolve: KMOD_LOAD, the modules the guest loads (those of the
# KMOD_FOR options the image builds as modules, or all of them when the
# image has no config), with their dependencies; every file checked
# against the image's release.
kmod_resolve() {
	KMOD_LOAD=() KMOD_MISSING=()
	[[ -n ${KMOD_DIR:-} ]] || return 0
	local opt v
	local -a want=()
	local -A kmod_seen=()
	kmod_index
	for opt in "${!KMOD_FOR[@]}"; do
		v=$(kmod_config "$opt")
		[[ -z ${KCONFIG:-} || $v == m ]] && want+=("${KMOD_FOR[$opt]}")
	done
	((${#want[@]})) || return 0
	mapfile -t want < <(printf '%s\n' "${want[@]}" | sort)
	kmod_order "${want[@]}"
	local n magic
	for n in "${KMOD_LOAD[@]}"; do
		magic=$(kmod_info "${KMOD_PATH[$n]}" vermagic)
		[[ ${magic%% *} == "$KRELEASE" ]] ||
			die "KERNEL_MODULES: ${KMOD_PATH[$n]} is for ${magic%% *}, the image is $KRELEASE"
	done
}

# kmod_has OPTION: the guest will have OPTION's module loaded.
kmod_has() {
	local m=${KMOD_FOR[$1]:-} n
	[[ -n $m ]] || return 1
	for n in "${KMOD_LOAD[@]}"; do [[ $n == "$m" ]] && return 0; done
	return 1
}

# kmod_cpio BASE: INITRAMFS becomes BASE with the modules appended as a
# second cpio (the kernel unpacks one after the other), cached by the
# modules' content; /lib/modules/rig/load lists them in load order.
kmod_cpio() {
	local base=$1 out=$RIG_BUILD/guest tag stage n f list
	((${#KMOD_LOAD[@]})) || return 0
	tag=$({ basename "$base"; for n in "${KMOD_LOAD[@]}"; do
		echo "$n"; sha256sum <"${KMOD_PATH[$n]}"; done; } | sha256sum | cut -c1-12)
	INITRAMFS=$out/initramfs-mods-$tag.cpio
	[[ -f $INITRAMFS ]] && return 0
	stage=$(mktemp -d "$out/mods.XXXXXX")
	list=$stage/list
	{
		echo "dir /lib/modules 0755 0 0"
		echo "dir /lib/modules/rig 0755 0 0"
		echo "file /lib/modules/rig/load $stage/load 0644 0 0"
	} >"$list"
	: >"$stage/load"
	for n in "${KMOD_LOAD[@]}"; do
		f=${KMOD_PATH[$n]}
		case $f in
		*.xz) xz -dc "$f" >"$stage/$n.ko" ;;
		*.zst) zstd -dcq "$f" >"$stage/$n.ko" ;;
		*.gz) gzip -dc "$f" >"$stage/$n.ko" ;;
		*) cp "$f" "$stage/$n.ko" ;;
		esac || die "cannot unpack $f"
		echo "$n" >>"$stage/load"
		echo "file /lib/modules/rig/$n.ko $stage/$n.ko 0644 0 0" >>"$list"
	done
	"$RIG_BUILD/tools/gen_init_cpio" "$list" >"$stage/mods.cpio" || die "gen_init_cpio failed on the modules"
	cat "$base" "$stage/mods.cpio" >"$INITRAMFS.tmp" && mv "$INITRAMFS.tmp" "$INITRAMFS"
	rm -rf "$stage"
	say "initramfs with modules ${KMOD_LOAD[*]} ($(du -k "$INITRAMFS" | cut -f1) KiB)"
}
