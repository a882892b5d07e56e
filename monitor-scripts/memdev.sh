# SPDX-License-Identifier: GPL-2.0
# Memory verbs, driven from both sides: the host plugs and unplugs pc-dimms
# over QMP, the guest agent waits for, onlines and offlines their blocks.
# Each verb updates the runner's model (D_*) that checks.sh compares both
# sides against. A verb returns 0 done, 1 the kernel misbehaved, 2 the rig
# failed; STEP_DIAG holds the why. Sourced by rig.

declare -A D_SIZE D_NODE D_ADDR D_STATE D_ZONE
EVENT_TIMEOUT_MS=${EVENT_TIMEOUT_MS:-30000}
OFFLINE_TIMEOUT_S=${OFFLINE_TIMEOUT_S:-10}

diag() {
	STEP_DIAG+=("$*")
}

# A failed agent call: the guest misbehaved (1) unless the rig's side broke.
agent_failed() {
	local st=$1 what=$2
	case $st in
	1) diag "$what failed in the guest (status $AGENT_STATUS): ${AGENT_OUT[*]}"; return 1 ;;
	2) diag "$what: agent channel closed"; return 1 ;;
	3) GUEST_HUNG=1; diag "INFO: guest hang in $what: no agent reply"; return 1 ;;
	esac
}

qmp_failed() {
	diag "$QMP_ERROR"
	return 2
}

# dimm_blocks NAME: DB_FIRST and DB_COUNT of a plugged DIMM's memory blocks.
dimm_blocks() {
	DB_FIRST=$((D_ADDR[$1] / GUEST_BLOCK_SIZE)) DB_COUNT=$((D_SIZE[$1] / GUEST_BLOCK_SIZE))
}

verb_plug() { # NAME SIZE node=N
	local name=$1 size node=${3#node=} st line
	to_bytes "$2"
	size=$BYTES
	qmp_forget "\"$name\""
	qmp_object_add_ram "mem-$name" "$size" || { qmp_failed; return; }
	qmp_device_add_dimm "$name" "mem-$name" "$node" || { qmp_failed; return; }
	# Linux evaluates _OST once its ACPI scan has added the memory.
	qmp_wait_event "$EVENT_TIMEOUT_MS" "ACPI_DEVICE_OST:\"device\": \"$name\"" || {
		qemu_alive || { diag "$QMP_ERROR"; return 2; }
		GUEST_HUNG=1
		diag "INFO: guest hang in plug $name: no ACPI_DEVICE_OST within $((EVENT_TIMEOUT_MS / 1000)) s"
		return 1
	}
	D_SIZE[$name]=$size D_NODE[$name]=$node D_STATE[$name]=$GUEST_DEFAULT_STATE D_ZONE[$name]=
	[[ $QMP_EVENT == *'"status": 0'[,}]* ]] ||
		diag "guest reported a failed insert: $QMP_EVENT"
	qmp_memory_devices || { qmp_failed; return; }
	for line in "${QMP_MEMDEVS[@]}"; do
		# shellcheck disable=SC2086
		set -- $line
		[[ $1 == "$name" ]] && D_ADDR[$name]=$2
	done
	[[ -n ${D_ADDR[$name]:-} ]] || { diag "query-memory-devices does not list $name"; return 2; }
	local first count
	dimm_blocks "$name"; first=$DB_FIRST count=$DB_COUNT
	agent_call wait-blocks "$first" "$count" 10
	agent_failed $? "plug $name: memory blocks $first..$((first + count - 1))" || return
	return 0
}

verb_online() { # NAME movable|kernel|auto
	local name=$1 how first count
	case $2 in
	movable) how=online_movable D_ZONE[$name]=Movable ;;
	kernel) how=online_kernel D_ZONE[$name]=Normal ;;
	*) how=online D_ZONE[$name]= ;;
	esac
	dimm_blocks "$name"; first=$DB_FIRST count=$DB_COUNT
	agent_call online "$first" "$count" "$how"
	agent_failed $? "online $name ($how)" || return
	D_STATE[$name]=online
}

verb_offline() { # NAME
	local name=$1 first count
	dimm_blocks "$name"; first=$DB_FIRST count=$DB_COUNT
	agent_call -t $(((OFFLINE_TIMEOUT_S * count + 30) * 1000)) offline "$first" "$count" "$OFFLINE_TIMEOUT_S"
	agent_failed $? "offline $name" || return
	D_STATE[$name]=offline
}

verb_unplug() { # NAME
	local name=$1
	qmp_forget "\"$name\""
	qmp_device_del "$name" || { qmp_failed; return; }
	while :; do
		qmp_wait_event "$EVENT_TIMEOUT_MS" "DEVICE_DELETED:\"device\": \"$name\"" \
			"DEVICE_UNPLUG_GUEST_ERROR:\"device\": \"$name\"" \
			"ACPI_DEVICE_OST:\"device\": \"$name\"" || {
			qemu_alive || { diag "$QMP_ERROR"; return 2; }
			GUEST_HUNG=1
			diag "INFO: guest hang in unplug $name: no DEVICE_DELETED within $((EVENT_TIMEOUT_MS / 1000)) s"
			return 1
		}
		case $QMP_MATCH in
		0) break ;;
		1) diag "guest refused to eject $name: $QMP_EVENT"; return 1 ;;
		2)
			# source 3 is the eject request; 0 done, 0x84 ejection in progress.
			if [[ $QMP_EVENT == *'"source": 3'* && $QMP_EVENT != *'"status": 0'[,}]* &&
				$QMP_EVENT != *'"status": 132'* ]]; then
				diag "guest refused to eject $name: $QMP_EVENT"
				return 1
			fi
			;;
		esac
	done
	qmp_object_del "mem-$name" || { qmp_failed; return; }
	unset "D_SIZE[$name]" "D_NODE[$name]" "D_ADDR[$name]" "D_STATE[$name]" "D_ZONE[$name]"
}

verb_check() {
	return 0
}

# guest-sh COMMAND...: a shell command in the guest that must exit 0; the
# rig's model does not follow what it does, so the checks see any change.
verb_guest_sh() {
	agent_call sh "$*"
	agent_failed $? "guest-sh" || return
	local l
	for l in "${AGENT_OUT[@]}"; do diag "guest: $l"; done
}

# floor NAME CYCLES: the in-guest online_movable/offline loop over the DIMM's
# blocks; FLOOR_NS gets the time of one cycle.
verb_floor() {
	local first count
	dimm_blocks "$1"; first=$DB_FIRST count=$DB_COUNT
	agent_call floor "$first" "$count" "$2"
	agent_failed $? "floor $1" || return
	[[ ${AGENT_OUT[0]:-} =~ cycle_ns\ ([0-9]+)$ ]] || { diag "floor: no timing from the guest"; return 2; }
	FLOOR_NS=${BASH_REMATCH[1]}
	diag "floor: $((FLOOR_NS / 1000)) us per online_movable/offline cycle of $count blocks"
}
