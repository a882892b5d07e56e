#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Makes again the golden logs that come from the rig's debug kernel (VARIANT=debug:
# KASAN, lockdep, kmemleak, DEBUG_PAGEALLOC, UBSAN bounds, LKDTM): one boot per
# LKDTM crash type (and once for a lock inversion module), the console trimmed
# to the step and written to ../NAME.log.
# The titles in ../NAME.expected stay hand-checked: run ../run.sh afterwards.
# Needs what provoke.sh needs, and a kernel build (about 10 minutes the first
# time); not run by make test or make check.
# Usage: regen.sh [NAME...]   (default: every name in the table below)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
golden=$(dirname "$here")
root=$(cd "$golden/../.." && pwd)
# Lines of boot context kept before the step's begin marker.
readonly CONTEXT=4

# NAME CASE: the golden log and init's case (lkdtm-TYPE writes TYPE to
# /sys/kernel/debug/provoke-crash/DIRECT; lockdep-inversion loads the module
# of lockdep_inversion/, built here against the same kernel).
cases=(
	ubsan-array-bounds lkdtm-ARRAY_BOUNDS
	warning-message lkdtm-WARNING_MESSAGE
	refcount-dec-zero lkdtm-REFCOUNT_DEC_ZERO
	refcount-inc-overflow lkdtm-REFCOUNT_INC_OVERFLOW
	kasan-write-after-free lkdtm-WRITE_AFTER_FREE
	kasan-slab-out-of-bounds lkdtm-SLAB_LINEAR_OVERFLOW
	kasan-buddy-after-free lkdtm-READ_BUDDY_AFTER_FREE
	exec-data lkdtm-EXEC_DATA
	write-ro lkdtm-WRITE_RO
	lockdep-inversion lockdep-inversion
)

# trim RAW OUT: CRs dropped; CONTEXT lines before "rig: step 1 begin" up to
# "rig: step 1 end", or to the end when the guest died inside the step.
trim() {
	tr -d '\r' <"$1" | awk -v ctx="$CONTEXT" '
		{ line[NR] = $0 }
		!begin && /rig: step 1 begin/ { begin = NR }
		begin && !end && /rig: step 1 end/ { end = NR }
		END {
			if (!begin) exit 1
			if (!end) end = NR
			for (i = (begin > ctx ? begin - ctx : 1); i <= end; i++) print line[i]
		}' >"$2"
}

want=" $* "
bzimage=$("$root/monitor-scripts/rig" kernel VARIANT=debug | tail -n 1)
[[ -f $bzimage ]] || { echo "regen: no kernel image ($bzimage)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The module is built out of tree against the debug kernel's objects, where
# `rig kernel` left them (modules_prepare writes what an external build
# needs). The rig builds no modules, so there is no Module.symvers: the
# kernel's own symbols come from vmlinux.symvers (modpost still says the
# file is missing; without MODVERSIONS that changes nothing).
build=${RIG_BUILD:-$root/build}
obj=$build/kernel/6.1-debug
cp -r "$here/lockdep_inversion" "$work/"
make -s -C "$build/src/linux-source-6.1" O="$obj" modules_prepare
make -s -C "$build/src/linux-source-6.1" O="$obj" M="$work/lockdep_inversion" \
	KBUILD_EXTRA_SYMBOLS="$obj/vmlinux.symvers" modules
export LOCKDEP_KO=$work/lockdep_inversion/lockdep_inversion.ko
for ((i = 0; i < ${#cases[@]}; i += 2)); do
	name=${cases[i]} case_name=${cases[i + 1]}
	[[ $# -eq 0 || $want == *" $name "* ]] || continue
	# page_owner=on: the debug variant's own command line (debug.cmdline)
	TIMEOUT=150 "$here/provoke.sh" "$bzimage" "$case_name" "$work/$name.raw" page_owner=on
	trim "$work/$name.raw" "$golden/$name.log" ||
		{ echo "regen: $name: no step marker in the console" >&2; exit 1; }
	echo "regen: $name: $(wc -l <"$golden/$name.log") lines" >&2
done
