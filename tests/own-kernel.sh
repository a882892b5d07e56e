# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Your own kernel, fast tier (no kernel build, no QEMU): a distribution-style
# image (a fake bzImage that says its release, config-<release> beside it,
# lib/modules/<release> of fake modules) has its needs judged on its config,
# its modules resolved in load order, its random draws limited to what it
# has, bad module folders refused; a git tree's describe and HEAD recorded.
# Sourced by tests/tier-check.sh; needs ROOT, RIG, TMP and bad_input.

OWN_REL=6.1.0-99-fake

# own_image DIR: DIR/boot/vmlinuz-REL, whose setup header points at its
# release string as a bzImage's does, and config-REL beside it: memory
# hotplug built in, virtio as modules, no fault injection (as Debian's).
own_image() {
	local d=$1/boot
	mkdir -p "$d"
	head -c 4096 /dev/zero >"$d/vmlinuz-$OWN_REL"
	printf 'HdrS' | dd of="$d/vmlinuz-$OWN_REL" bs=1 seek=$((0x202)) conv=notrunc status=none
	# kernel_version: the string is at this value + 0x200
	printf '\x00\x01' | dd of="$d/vmlinuz-$OWN_REL" bs=1 seek=$((0x20E)) conv=notrunc status=none
	printf '%s (test@rig) #1 SMP\0' "$OWN_REL" |
		dd of="$d/vmlinuz-$OWN_REL" bs=1 seek=$((0x300)) conv=notrunc status=none
	cat >"$d/config-$OWN_REL" <<-'EOF'
	CONFIG_MEMORY_HOTPLUG=y
	CONFIG_MEMORY_HOTREMOVE=y
	CONFIG_ACPI_HOTPLUG_MEMORY=y
	CONFIG_NUMA=y
	CONFIG_MIGRATION=y
	CONFIG_HUGETLBFS=y
	CONFIG_VIRTIO_PCI=m
	CONFIG_VIRTIO_MEM=m
	CONFIG_MEMORY_NOTIFIER_ERROR_INJECT=m
	# CONFIG_FAULT_INJECTION is not set
	EOF
}

# own_ikconfig_image DIR: DIR/vmlinuz alone in its folder, whose payload
# (gzip, as a bzImage's compressed kernel) carries the config between
# IKCFG_ST and IKCFG_ED, as CONFIG_IKCONFIG builds it in.
own_ikconfig_image() {
	mkdir -p "$1"
	head -c 4096 "$2" >"$1/vmlinuz"
	{
		head -c 1000 /dev/urandom
		printf 'IKCFG_ST'
		gzip -c "$3"
		printf 'IKCFG_ED'
		head -c 1000 /dev/zero
	} | gzip -c >>"$1/vmlinuz"
}

# own_module DIR NAME DEPENDS [RELEASE]: a file with a .modinfo's strings.
own_module() {
	mkdir -p "$1/kernel/drivers"
	printf 'ELF\0name=%s\0depends=%s\0vermagic=%s SMP mod_unload\0' "$2" "$3" "${4:-$OWN_REL}" \
		>"$1/kernel/drivers/$2.ko"
}

own_modules() {
	local m=$1/lib/modules/$OWN_REL
	own_module "$m" virtio ''
	own_module "$m" virtio_ring virtio
	own_module "$m" virtio_mem virtio,virtio_ring
	own_module "$m" virtio_pci_modern_dev ''
	own_module "$m" virtio_pci virtio,virtio_ring,virtio_pci_modern_dev
	own_module "$m" memory-notifier-error-inject notifier-error-inject
	own_module "$m" notifier-error-inject ''
	own_module "$m" virtio_net virtio,virtio_ring
	: >"$m/modules.order"
}

# own_rig FUNCTION...: a shell with the rig's kernel layers sourced (as
# rig sources them) runs the commands, each line a command; for the parts
# that no run variable reaches without a boot.
own_rig() {
	RIG_ROOT=$ROOT RIG_BUILD=$TMP/build bash -c 'set -euo pipefail
		. "$RIG_ROOT/monitor-scripts/lib.sh"
		. "$RIG_ROOT/monitor-scripts/kbuild.sh"
		. "$RIG_ROOT/monitor-scripts/kmodules.sh"
		eval "$1"' own-rig "$1" 2>&1
}

# own_modules_order IMAGE MODULES: what the guest would load, in order.
own_modules_order() {
	own_rig "KERNEL_IMAGE='$1' KERNEL_MODULES='$2'
		kernel_image_inspect; kmod_check_vars; kmod_resolve
		echo \"\${KMOD_LOAD[*]}\""
}

# own_expect DESC STATUS PATTERN CMD...: CMD exits STATUS, PATTERN in its output.
own_expect() {
	local desc=$1 status=$2 pattern=$3 st=0
	shift 3
	"$@" >"$TMP/own.out" 2>&1 || st=$?
	if ((st == status)) && grep -qF -- "$pattern" "$TMP/own.out"; then
		t_ok "$desc"
	else
		note "status $st (want $status), output:"
		tail -4 "$TMP/own.out" | sed 's/^/#   /'
		t_fail "$desc"
	fi
}

# own_same DESC WANT GOT
own_same() {
	if [[ $3 == "$2" ]]; then
		t_ok "$1"
	else
		note "got: $3"
		t_fail "$1"
	fi
}

check_own_kernel() {
	local d=$TMP/own img order
	own_image "$d"
	own_modules "$d"
	img=$d/boot/vmlinuz-$OWN_REL
	own_expect "an image's config-<release> beside it judges needs: pgtable-alloc-fails skips before the boot" \
		4 "kernel lacks CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS" "$RIG" run pgtable-alloc-fails KERNEL_IMAGE="$img"
	own_ikconfig_image "$TMP/ik" "$img" "$d/boot/config-$OWN_REL"
	own_expect "an image with its config built in (IKCONFIG) and none beside it: needs judged on it" \
		4 "kernel lacks CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS" "$RIG" run pgtable-alloc-fails KERNEL_IMAGE="$TMP/ik/vmlinuz"
	own_expect "a variant booting a series-only parameter (fail_vmemmap=1,100,0,-1,pmd) skips on a kernel without it" \
		4 "kernel lacks CONFIG_FAIL_VMEMMAP" "$RIG" run smoke VARIANT=vmemmap-basepages KERNEL_IMAGE="$img"
	own_expect "an image's virtio-mem built as a module: virtio-mem skips and names KERNEL_MODULES" \
		4 "CONFIG_VIRTIO_PCI=m, CONFIG_VIRTIO_MEM=m (built as modules: set KERNEL_MODULES" \
		"$RIG" run virtio-mem KERNEL_IMAGE="$img"
	order="notifier_error_inject memory_notifier_error_inject virtio virtio_ring virtio_mem virtio_pci_modern_dev virtio_pci"
	own_same "KERNEL_MODULES: the needed modules and their dependencies, each once, dependencies first" \
		"$order" "$(own_modules_order "$img" "$d")"
	own_same "KERNEL_MODULES: lib/modules/<release> serves as well as the package root" \
		"$order" "$(own_modules_order "$img" "$d/lib/modules/$OWN_REL")"
	mkdir -p "$TMP/other/lib/modules/6.1.0-98-fake/kernel"
	: >"$TMP/other/lib/modules/6.1.0-98-fake/modules.order"
	bad_input "KERNEL_MODULES of another release" "has no modules for release $OWN_REL (the image's); it has modules for: 6.1.0-98-fake" \
		"$RIG" run smoke KERNEL_IMAGE="$img" KERNEL_MODULES="$TMP/other"
	bad_input "KERNEL_MODULES without KERNEL_IMAGE" "KERNEL_MODULES goes with KERNEL_IMAGE" \
		"$RIG" run smoke KERNEL_MODULES="$d"
	cp -r "$d" "$TMP/own-bad"
	own_module "$TMP/own-bad/lib/modules/$OWN_REL" virtio_mem virtio 6.1.0-98-fake
	bad_input "a module built for another release" "virtio_mem.ko is for 6.1.0-98-fake, the image is $OWN_REL" \
		"$RIG" run smoke KERNEL_IMAGE="$TMP/own-bad/boot/vmlinuz-$OWN_REL" KERNEL_MODULES="$TMP/own-bad"
	mkdir -p "$TMP/inplace/mm"
	: >"$TMP/inplace/Makefile"
	: >"$TMP/inplace/.config"
	bad_input "a tree built in place: one line with the fix" "configured or built in place.*make mrproper" \
		"$RIG" run smoke KERNEL_SRC="$TMP/inplace"
	# random draws fail_vmemmap plugs only where the kernel has it
	"$RIG" steps random SEED=3 >"$TMP/own.series" 2>&1
	"$RIG" steps random SEED=3 KERNEL_IMAGE="$img" >"$TMP/own.image" 2>&1
	if grep -q '^inject fail_vmemmap' "$TMP/own.series" && grep -q '^plug ' "$TMP/own.image" &&
		! grep -q '^inject' "$TMP/own.image"; then
		t_ok "random draws injections on the series kernel, none on an image without them"
	else
		t_fail "random draws injections on the series kernel, none on an image without them"
	fi
	check_own_git
	check_own_link_copy
}

# KERNEL_SRC with patches: the hard-link copy gets the patched files, and
# the tree it links to keeps its own.
check_own_link_copy() {
	local u=$TMP/own-link
	mkdir -p "$u/tree/mm"
	echo one >"$u/tree/mm/a.c"
	cp -al "$u/tree" "$u/copy"
	printf '%s\n' '--- a/mm/a.c' '+++ b/mm/a.c' '@@ -1 +1 @@' '-one' '+two' >"$u/p.patch"
	own_rig "apply_patches '$u/copy' '$u/tree' '$u/state' '$u/p.patch'" >"$TMP/own.link"
	own_same "KERNEL_SRC with patches: the copy is patched, your tree is not written through its hard links" \
		"one two" "$(cat "$u/tree/mm/a.c") $(cat "$u/copy/mm/a.c")"
}

# A git tree: describe --dirty and HEAD, as summary.json records them.
check_own_git() {
	local g=$TMP/own-git out head
	mkdir -p "$g/mm"
	echo 'VERSION = 6' >"$g/Makefile"
	if ! { git -C "$g" init -q && git -C "$g" add Makefile &&
		git -C "$g" -c user.name=t -c user.email=t@t commit -qm one &&
		git -C "$g" -c user.name=t -c user.email=t@t tag -a -m v6.99 v6.99; }; then
		t_fail "a git tree's describe --dirty and HEAD are recorded (git init)"
		return
	fi
	echo 'PATCHLEVEL = 99' >>"$g/Makefile"
	head=$(git -C "$g" rev-parse HEAD)
	out=$(own_rig "KERNEL_SRC='$g' KSOURCE=tree; kernel_src_git; echo \"\$KGIT_DESCRIBE \$KGIT_HEAD\"")
	own_same "a git tree's describe --dirty and HEAD are recorded" "v6.99-dirty $head" "$out"
}

# --- the boots (make check-all) ------------------------------------------------

# own_stock_tree: Debian's linux-source-6.1 extracted as a user would, into
# a folder of its own (build/src's copy carries the series), once.
own_stock_tree() {
	local top=$ROOT/build/stock
	# shellcheck disable=SC2034 # for tests/check-all, which sources this
	OWN_STOCK=$top/linux-source-6.1
	[[ -f $top/.extracted ]] && return 0
	rm -rf "$top"
	mkdir -p "$top"
	tar -xf /usr/src/linux-source-6.1.tar.xz -C "$top" && touch "$top/.extracted"
}

# own_distro: Debian's newest linux-image-6.1.0-N-amd64, downloaded with
# apt-get and extracted (boot/vmlinuz-*, boot/config-*, lib/modules/*);
# OWN_DEB is its root, OWN_DEB_IMAGE its vmlinuz. 1 when apt cannot get it.
own_distro() {
	local top=$ROOT/build/distro pkg
	OWN_DEB=$top/root
	if [[ ! -f $top/.extracted ]]; then
		pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | awk '{ print $1 }' | sort -V | tail -1)
		[[ -n $pkg ]] || return 1
		rm -rf "$top"
		mkdir -p "$top/root"
		(cd "$top" && apt-get download "$pkg" >/dev/null 2>&1) || return 1
		dpkg-deb -x "$top"/"$pkg"_*.deb "$top/root" && rm -f "$top"/*.deb && touch "$top/.extracted" || return 1
	fi
	OWN_DEB_IMAGE=$(find "$OWN_DEB/boot" -name 'vmlinuz-*' | head -1)
	[[ -n $OWN_DEB_IMAGE ]]
}
