# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox ash, sourced by the guest agent
# hotplug-rig guest verbs: liveness, kernel log markers, debug shell.
# Sourced by the agent; every verb_* runs in the agent's own shell, its output
# going straight to the port (guest/agent says why).

verb_ping() {
	echo pong
}

# hello: the READY line again, for a host that missed the first one.
verb_hello() {
	local hex
	read -r hex </sys/devices/system/memory/block_size_bytes
	printf 'READY %s block_size=%d\n' "$(uname -r)" "0x$hex"
}

# Verbs run in the agent's shell: they keep their variables local.

# Markers let the triage tag each kernel report with the step it came in.
verb_mark() {
	echo "rig: $*" >/dev/kmsg
}

# sh CMDLINE: the agent runs the host's command line in a subshell (used by
# the rig's own tests and for debugging).
verb_sh() {
	:
}

# exists PATH...: "yes PATH" or "no PATH" for each, so the host learns in
# one request which injectors, counters and drivers this kernel has.
verb_exists() {
	local p
	for p in "$@"; do
		if [ -e "$p" ]; then echo "yes $p"; else echo "no $p"; fi
	done
}

verb_sysrq() {
	echo "$1" >/proc/sysrq-trigger
}

verb_poweroff() {
	sync
	poweroff -f
}

# kmemleak-baseline: what the boot itself leaves is marked as seen, so only
# leaks of the run are reported later (a debug kernel has kmemleak).
verb_kmemleak_baseline() {
	[ -w /sys/kernel/debug/kmemleak ] || { echo "no kmemleak"; return 0; }
	echo scan >/sys/kernel/debug/kmemleak
	echo clear >/sys/kernel/debug/kmemleak
	echo "kmemleak baseline taken"
}

# kmemleak-scan: scan, let young objects age past kmemleak's 5 s, scan
# again, and print only what both scans call unreferenced (as syzkaller
# does, to keep transient pointers from looking like leaks).
verb_kmemleak_scan() {
	[ -w /sys/kernel/debug/kmemleak ] || return 0
	echo scan >/sys/kernel/debug/kmemleak
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak
}
