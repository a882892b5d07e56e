#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Re-provokes a triage golden log: boots BZIMAGE under QEMU TCG with a busybox
# initramfs running ./init, case CASE, and saves the raw console (CRLF) to OUT.
# Needs qemu-system-x86_64, busybox-static, cpio, socat.  Cases: see init.
# Usage: provoke.sh BZIMAGE CASE OUT [EXTRA_KERNEL_ARGS]
# e.g. provoke.sh obj/arch/x86/boot/bzImage lkdtm-WARNING warning.raw
#      (lkdtm-* cases need the kernel of ../lkdtm.config or VARIANT=debug;
#       KMEMLEAK_KO=path adds samples/kmemleak/kmemleak-test.ko for lkdtm-KMEMLEAK,
#       LOCKDEP_KO=path the module of lockdep_inversion/ for lockdep-inversion)
set -euo pipefail

kernel=${1:?usage: provoke.sh BZIMAGE CASE OUT [EXTRA_KERNEL_ARGS]}
case_name=${2:?usage: provoke.sh BZIMAGE CASE OUT [EXTRA_KERNEL_ARGS]}
out=${3:?usage: provoke.sh BZIMAGE CASE OUT [EXTRA_KERNEL_ARGS]}
extra=${4:-}
timeout_s=${TIMEOUT:-150}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/root/bin" "$work/root/"{proc,sys,dev,tmp,mnt}
cp /bin/busybox "$work/root/bin/"
for a in sh mount umount echo cat sed sleep ls insmod poweroff taskset grep dd timeout; do
	ln -s busybox "$work/root/bin/$a"
done
cp "$here/init" "$work/root/init"
[[ -n ${KMEMLEAK_KO:-} ]] && cp "$KMEMLEAK_KO" "$work/root/kmemleak-test.ko"
[[ -n ${LOCKDEP_KO:-} ]] && cp "$LOCKDEP_KO" "$work/root/lockdep_inversion.ko"
(cd "$work/root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initrd.gz"

sock=$work/monitor.sock
timeout "$timeout_s" qemu-system-x86_64 -accel tcg -M pc -m 512M,slots=4,maxmem=4G -smp 2 \
	-nographic -no-reboot -kernel "$kernel" -initrd "$work/initrd.gz" \
	-monitor "unix:$sock,server,nowait" \
	-append "console=ttyS0 panic=-1 rdinit=/init triage.case=$case_name $extra" \
	>"$out" 2>&1 &
qemu=$!
# hot-add cases: the guest says when it is armed, the host plugs a 128M DIMM
if [[ $case_name == vmemmap || $case_name == offline-full* ]]; then
	for _ in $(seq 600); do
		grep -q TRIAGE-READY "$out" && break
		sleep 0.2
	done
	printf '%s\n' 'object_add memory-backend-ram,id=m1,size=128M' \
		'device_add pc-dimm,id=d1,memdev=m1' | socat - "UNIX-CONNECT:$sock" >/dev/null
fi
rc=0
wait "$qemu" || rc=$?
# lockup cases never reach poweroff: the timeout (124) is expected there
echo "provoke: $case_name: qemu exit $rc, console in $out" >&2
