# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox ash, sourced by the guest agent
# hotplug-rig guest verbs for memory load: thin wrappers around /bin/rigload
# (guest/src/rigload.c), one daemon per named load; each returns its status.

# load-start NAME NODE BYTES SEED [PIN_BYTES]: allocate, fill, optionally hold.
verb_load_start() {
	rigload start "$@"
}

# load-verify NAME: "ok BYTES", or "mismatch at vaddr ..." and status 1.
verb_load_verify() {
	rigload verify "$@"
}

# load-release NAME: drop the vmsplice references.
verb_load_release() {
	rigload release "$@"
}

# load-stop NAME: the daemon exits and its memory is freed.
verb_load_stop() {
	rigload stop "$@"
}

# load-where NAME: pages per node and per memory block.
verb_load_where() {
	rigload where "$@"
}

# load-stop-all: every daemon, at the end of a run; 1 if any was gone.
verb_load_stop_all() {
	local f name st=0
	for f in /tmp/rigload/*.ctl; do
		[ -e "$f" ] || continue
		name=${f##*/}
		rigload stop "${name%.ctl}" || st=1
	done
	return "$st"
}
