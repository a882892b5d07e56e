# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Debian packages the rig needs on the host; installs what is missing when
# run as root, otherwise prints the exact apt-get line and exits 2. The
# kernel source package is the one KERNEL= picks (kbuild.sh: KERNEL_PKG).

RIG_PACKAGES=(
	# kernel source and build
	xz-utils gcc libc6-dev make bc flex bison libelf-dev libssl-dev
	# the kernel image is LZ4-compressed: it unpacks a second faster under TCG
	lz4
	# guest image and machine
	busybox-static cpio qemu-system-x86 socat
	# host scripts: JSON for summary.json and QMP, shellcheck for make test
	bash jq shellcheck
	# soak plots
	gnuplot-nox
	# make coverage: geninfo, lcov and genhtml read the guest's gcov data
	lcov
)

missing_packages() {
	local p
	for p in "$KERNEL_PKG" "${RIG_PACKAGES[@]}"; do
		[[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] ||
			echo "$p"
	done
}

ensure_packages() {
	local -a miss
	mapfile -t miss < <(missing_packages)
	((${#miss[@]})) || return 0
	local cmd="apt-get install -y --no-install-recommends ${miss[*]}"
	if ((EUID != 0)); then
		echo "rig: error: missing packages; as root run: apt-get update && $cmd" >&2
		exit 2
	fi
	say "installing ${miss[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 ||
		die "apt-get update failed"
	# shellcheck disable=SC2086 # the command line is built word by word
	DEBIAN_FRONTEND=noninteractive $cmd >&2 || die "$cmd failed"
}
