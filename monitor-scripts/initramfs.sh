# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The guest image: busybox-static, guest/ and the static helpers, packed by
# the kernel's own gen_init_cpio from the explicit list guest/initramfs.list.
# One image per version of the kernel's selftest (the tree under test's),
# rebuilt only when something in guest/ is newer than it.

initramfs_build() {
	local out=$RIG_BUILD/guest gen=$RIG_BUILD/tools/gen_init_cpio
	local cpio src tree=${KTREE:-} tag
	mkdir -p "$out" "$RIG_BUILD/tools"
	# the kernel's memory-hotplug selftest, from the tree under test (an
	# image has none: the tarball of KERNEL stands in), so each tree gets
	# an image of its own
	local st=tools/testing/selftests/memory-hotplug/mem-on-off-test.sh
	MEMHP_SELFTEST=$(mktemp "$out/mem-on-off-test.XXXXXX")
	[[ -n $tree && -f $tree/$st ]] || tree=$KERNEL_TREE
	if [[ -f $tree/$st ]]; then
		cp "$tree/$st" "$MEMHP_SELFTEST"
	else
		tar -xJf "$KERNEL_TARBALL" -O "$KERNEL_PKG/$st" >"$MEMHP_SELFTEST" ||
			die "cannot extract $st from $KERNEL_TARBALL"
	fi
	# and the guest/ it packs: worktrees sharing one RIG_BUILD each get
	# their own image, instead of the last one built
	tag=$({ sha256sum <"$MEMHP_SELFTEST"; cd "$RIG_ROOT" &&
		find guest -type f -print0 | sort -z | xargs -0 sha256sum; } | sha256sum | cut -c1-12)
	cpio=$out/initramfs-$tag.cpio
	INITRAMFS=$cpio
	mv "$MEMHP_SELFTEST" "$out/mem-on-off-test-$tag.sh"
	MEMHP_SELFTEST=$out/mem-on-off-test-$tag.sh
	if [[ -f $cpio && -z $(find "$RIG_ROOT/guest" -newer "$cpio" -print -quit) ]]; then
		return 0
	fi
	if [[ ! -x $gen ]]; then
		src=$tree/usr/gen_init_cpio.c
		if [[ -f $src ]]; then
			cp "$src" "$gen.c"
		else
			tar -xJf "$KERNEL_TARBALL" -O "$KERNEL_PKG/usr/gen_init_cpio.c" >"$gen.c" ||
				die "cannot extract usr/gen_init_cpio.c from $KERNEL_TARBALL"
		fi
		gcc -O2 -o "$gen" "$gen.c" || die "cannot build gen_init_cpio"
	fi
	local c
	for c in "$RIG_ROOT"/guest/src/*.c; do
		gcc -static -O2 -Wall -Wextra -o "$out/$(basename "$c" .c)" "$c" ||
			die "cannot build $c (static: needs libc6-dev)"
	done
	(cd "$RIG_ROOT" && BUSYBOX=/bin/busybox GUEST_BUILD=$out MEMHP_SELFTEST=$MEMHP_SELFTEST \
		"$gen" guest/initramfs.list >"$cpio.tmp") || die "gen_init_cpio failed on guest/initramfs.list"
	mv "$cpio.tmp" "$cpio"
	say "initramfs $(du -k "$cpio" | cut -f1) KiB"
}

# guest_image: the guest image of this run: initramfs_build's, with the
# image's modules appended when KERNEL_MODULES brings some (kmodules.sh).
guest_image() {
	initramfs_build
	kmod_cpio "$INITRAMFS"
}
