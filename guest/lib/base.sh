# SPDX-License-Identifier: GPL-2.0
# hotplug-rig guest verbs: liveness, kernel log markers, debug shell.
# Sourced by the agent; every verb_* runs in a subshell with output captured.

verb_ping() {
	echo pong
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

verb_sysrq() {
	echo "$1" >/proc/sysrq-trigger
}

verb_poweroff() {
	sync
	poweroff -f
}
