# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox ash, sourced by the guest agent
# hotplug-rig guest verbs for kernel coverage (VARIANT=coverage): zero the
# gcov counters at the start of a run, list the .gcda files, and send one
# file as base64 lines. The host only decodes and stores what it gets.

GCOV_DIR=/sys/kernel/debug/gcov

# gcov_walk DIR: every .gcda file below DIR, one path a line (busybox has
# no find here).
gcov_walk() {
	local e
	for e in "$1"/*; do
		if [ -d "$e" ] && [ ! -L "$e" ]; then
			gcov_walk "$e"
		elif [ "${e%.gcda}" != "$e" ]; then
			echo "$e"
		fi
	done
}

# gcov-reset: zero every counter (exit 4 when the kernel has no gcov).
verb_gcov_reset() {
	[ -e "$GCOV_DIR/reset" ] || { echo "no $GCOV_DIR: kernel without CONFIG_GCOV_KERNEL"; return 4; }
	echo 1 >"$GCOV_DIR/reset" || { echo "cannot write $GCOV_DIR/reset"; return 1; }
	echo "gcov counters reset"
}

# gcov-list: the .gcda files, as paths below /sys/kernel/debug/gcov.
verb_gcov_list() {
	[ -d "$GCOV_DIR" ] || { echo "no $GCOV_DIR: kernel without CONFIG_GCOV_KERNEL"; return 4; }
	gcov_walk "$GCOV_DIR"
}

# gcov-read PATH: one .gcda file, base64 (the serial line carries text).
verb_gcov_read() {
	case "$1" in
	"$GCOV_DIR"/*.gcda) ;;
	*) echo "not a gcov data file: $1"; return 2 ;;
	esac
	case "$1" in */../*) echo "not a gcov data file: $1"; return 2 ;; esac
	base64 -w 76 "$1"
}
