# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The operations the sweep verb (verbs-sweep.sh) walks through, one set of
# functions each:
#   sweep_do_OP      runs it once; SW_DONE 1 when it completed, 0 when it
#                    failed (and the device is whole in its start state)
#   sweep_back_OP    returns the device to the start state (no injection)
#   sweep_setup_OP   the scenario lines that lead to the start state (a
#                    replay scenario runs them before the one case)
#   sweep_undo_OP    the lines that clear up after it
# do and back return 0, 1 (the kernel misbehaved, diag lines) or 2 (the
# rig). SW_VOLD is the start size of a resized virtio-mem device, SW_USIZE
# and SW_UNODE those of a DIMM being unplugged. Sourced by rig.

# A virtio-mem resize in a case stops, for the sweep, when QEMU's size has
# not moved for this long: after an injected -ENOMEM the 6.1 driver waits
# 50 s before it retries, a wait the sweep need not sit through.
SWEEP_VMEM_STALL_MS=${SWEEP_VMEM_STALL_MS:-4000}

# --- plug NAME SIZE node=N: start absent ------------------------------------------
sweep_do_plug() {
	dimm_plug "$ST_NAME" "$ST_BYTES" "$ST_NODE" may-fail || return
	SW_DONE=1
	[[ ${MD_STATE[$ST_NAME]} == absent ]] && SW_DONE=0
	return 0
}

sweep_back_plug() {
	# device_del also when the add failed: QEMU still holds the DIMM.
	dimm_unplug "$ST_NAME" ''
}

sweep_setup_plug() { :; }
sweep_undo_plug() { :; }

# --- unplug NAME: start plugged and offline ---------------------------------------
sweep_do_unplug() {
	SW_USIZE=${MD_SIZE[$ST_NAME]} SW_UNODE=${MD_NODE[$ST_NAME]}
	dimm_unplug "$ST_NAME" may-fail || return
	SW_DONE=1
	[[ -n ${MD_STATE[$ST_NAME]:-} ]] && SW_DONE=0
	return 0
}

sweep_back_unplug() {
	((SW_DONE)) || return 0
	dimm_plug "$ST_NAME" "$SW_USIZE" "$SW_UNODE" ''
}

sweep_setup_unplug() {
	echo "plug $ST_NAME $(human "${MD_SIZE[$ST_NAME]}") node=${MD_NODE[$ST_NAME]}"
}

sweep_undo_unplug() {
	echo "unplug $ST_NAME"
}

# --- online NAME movable|kernel: start plugged and offline ------------------------
sweep_do_online() {
	local type st
	online_type "$SW_ZONE"
	type=$ONLINE_TYPE
	model_dimm_blocks "$ST_NAME"
	agent_call online "$DB_FIRST" "$DB_COUNT" "$type"
	st=$?
	if ((st == 0)); then
		model_dimm_online "$ST_NAME" "$type"
		SW_DONE=1
		return 0
	fi
	((st == 1)) || { agent_failed $st "online $ST_NAME"; return; }
	SW_DONE=0
	diag "online $ST_NAME failed: ${AGENT_OUT[*]}"
	# the blocks of a multi-block DIMM that came online before the failure
	agent_call -t 60000 offline "$DB_FIRST" "$DB_COUNT" "$OFFLINE_TIMEOUT_S" rest
	agent_failed $? "offline $ST_NAME after the failure"
}

# Blocks onlined to ZONE_NORMAL may take unmovable pages (a node's first
# memory gets the slab caches' per-node structures), which no offline can
# move: that is no kernel problem, but the next case needs a fresh guest.
sweep_back_online() {
	local st
	((SW_DONE)) || return 0
	model_dimm_blocks "$ST_NAME"
	agent_call -t $(((OFFLINE_TIMEOUT_S * DB_COUNT + 30) * 1000)) offline "$DB_FIRST" "$DB_COUNT" "$OFFLINE_TIMEOUT_S"
	st=$?
	if ((st == 1)) && [[ $SW_ZONE == kernel && ${AGENT_OUT[*]} == *EBUSY* ]]; then
		diag "offline $ST_NAME: EBUSY: its ZONE_NORMAL blocks hold unmovable pages now"
		return 3
	fi
	agent_failed $st "offline $ST_NAME" || return
	model_dimm_offline "$ST_NAME"
}

sweep_setup_online() {
	echo "plug $ST_NAME $(human "${MD_SIZE[$ST_NAME]}") node=${MD_NODE[$ST_NAME]}"
}

sweep_undo_online() {
	echo "unplug $ST_NAME"
}

# --- offline NAME: start online -----------------------------------------------------
sweep_do_offline() {
	local st
	model_dimm_blocks "$ST_NAME"
	agent_call -t $(((OFFLINE_TIMEOUT_S * DB_COUNT + 30) * 1000)) offline "$DB_FIRST" "$DB_COUNT" "$OFFLINE_TIMEOUT_S"
	st=$?
	if ((st == 0)); then
		model_dimm_offline "$ST_NAME"
		SW_DONE=1
		return 0
	fi
	((st == 1)) || { agent_failed $st "offline $ST_NAME"; return; }
	SW_DONE=0
	diag "offline $ST_NAME failed: ${AGENT_OUT[*]}"
	agent_call online "$DB_FIRST" "$DB_COUNT" "${MD_OTYPE[$ST_NAME]:-online}" rest
	agent_failed $? "online $ST_NAME after the failure"
}

sweep_back_offline() {
	((SW_DONE)) || return 0
	model_dimm_blocks "$ST_NAME"
	agent_call online "$DB_FIRST" "$DB_COUNT" "${MD_OTYPE[$ST_NAME]:-online}"
	agent_failed $? "online $ST_NAME" || return
	model_dimm_online "$ST_NAME" "${MD_OTYPE[$ST_NAME]:-online}"
	# the offline moved the node's loads away: new ones land on the
	# DIMM again, so that every case migrates as much as the dry run
	load_restart_on "${MD_NODE[$ST_NAME]}"
}

sweep_setup_offline() {
	local zone=movable
	[[ ${MD_ZONE[$ST_NAME]:-} == Normal ]] && zone=kernel
	echo "plug $ST_NAME $(human "${MD_SIZE[$ST_NAME]}") node=${MD_NODE[$ST_NAME]}"
	echo "online $ST_NAME $zone"
}

sweep_undo_offline() {
	echo "offline $ST_NAME"
	echo "unplug $ST_NAME"
}

# --- resize NAME SIZE (virtio-mem): start at the device's size now ----------------
# The driver plugs (or unplugs) in steps, so an injected failure may leave
# it part of the way: that is a clean error when the guest holds exactly
# what QEMU reports as plugged, and the way back must reach the start size.
sweep_do_resize() {
	local st
	SW_VOLD=${MD_VSIZE[$ST_NAME]}
	RESIZE_STALL_MS=$SWEEP_VMEM_STALL_MS vmem_resize "$ST_NAME" "$ST_BYTES"
	st=$?
	if ((st == 0)); then
		resize_settle
		# a memory block the guest failed to add after its subblocks
		# were plugged is unplugged again: QEMU's size falls back
		qmp_qom_get "/machine/peripheral/$ST_NAME" size || { diag "resize $ST_NAME: $QMP_ERROR"; return 2; }
		if [[ $QOM_VALUE =~ ^[0-9]+$ ]] && ((QOM_VALUE != ST_BYTES)); then
			diag "resize $ST_NAME reached $(vmem_human "$ST_BYTES"), then the guest gave it back to $(vmem_human "$QOM_VALUE")"
			VW_SIZE=$QOM_VALUE st=1
		fi
	fi
	case $st in
	0)
		SW_DONE=1
		;;
	1)
		SW_DONE=0
		diag "resize $ST_NAME stopped at $(vmem_human "$VW_SIZE")"
		# the request follows what the guest plugged, so that QEMU, the
		# guest and the model agree on where it stopped
		vmem_resize "$ST_NAME" "$VW_SIZE"
		st=$?
		((st == 2)) && { diag "resize $ST_NAME: $QMP_ERROR"; return 2; }
		((st == 0)) || { diag "resize $ST_NAME: it did not hold at $(vmem_human "$VW_SIZE") either"; return 1; }
		resize_settle
		;;
	*)
		diag "resize $ST_NAME: $QMP_ERROR"
		return 2
		;;
	esac
	return 0
}

sweep_back_resize() {
	local st
	# also when the guest is at the start size: QEMU still requests the new one
	vmem_resize "$ST_NAME" "$SW_VOLD"
	st=$?
	((st == 2)) && { diag "resize $ST_NAME: $QMP_ERROR"; return 2; }
	if ((st == 1)); then
		diag "resize $ST_NAME back to $(vmem_human "$SW_VOLD") stopped at $(vmem_human "$VW_SIZE")"
		return 1
	fi
	resize_settle
}

sweep_setup_resize() {
	((${MD_VSIZE[$ST_NAME]} == ${M_VMEM_REQ[$ST_NAME]:-0})) ||
		echo "resize $ST_NAME $(vmem_human "${MD_VSIZE[$ST_NAME]}")"
}

sweep_undo_resize() { :; }
