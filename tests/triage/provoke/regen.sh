#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Makes again the golden logs that come from the rig's debug kernel (VARIANT=debug:
# KASAN, lockdep, kmemleak, DEBUG_PAGEALLOC, UBSAN bounds, LKDTM): one boot per
# LKDTM crash type, the console trimmed to the step and written to ../NAME.log.
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

# NAME LKDTM_TYPE: the golden log and the crash type written to
# /sys/kernel/debug/provoke-crash/DIRECT from init (see init, case lkdtm-*).
cases=(
	ubsan-array-bounds ARRAY_BOUNDS
	warning-message WARNING_MESSAGE
	refcount-dec-zero REFCOUNT_DEC_ZERO
	refcount-inc-overflow REFCOUNT_INC_OVERFLOW
	kasan-write-after-free WRITE_AFTER_FREE
	kasan-slab-out-of-bounds SLAB_LINEAR_OVERFLOW
	kasan-buddy-after-free READ_BUDDY_AFTER_FREE
	exec-data EXEC_DATA
	write-ro WRITE_RO
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
for ((i = 0; i < ${#cases[@]}; i += 2)); do
	name=${cases[i]} type=${cases[i + 1]}
	[[ $# -eq 0 || $want == *" $name "* ]] || continue
	# page_owner=on: the debug variant's own command line (debug.cmdline)
	TIMEOUT=150 "$here/provoke.sh" "$bzimage" "lkdtm-$type" "$work/$name.raw" page_owner=on
	trim "$work/$name.raw" "$golden/$name.log" ||
		{ echo "regen: $name: no step marker in the console" >&2; exit 1; }
	echo "regen: $name: $(wc -l <"$golden/$name.log") lines" >&2
done
