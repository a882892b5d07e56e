# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Device kind pc-dimm: hot-added and removed over QMP (object-add +
# device_add, device_del + object-del), one ACPI memory device each. This
# file owns what the rest of the rig knows about the kind: its operations,
# the memory blocks it maps to, and its share of the expectations. It needs
# no header line and no QEMU arguments of its own (slots and maxmem are the
# machine's). Sourced by rig; calls the model, QMP, the agent and observe.

EVENT_TIMEOUT_MS=${EVENT_TIMEOUT_MS:-30000}

# dimm_hang WHAT: no event came while QEMU runs: the guest hangs.
dimm_hang() {
	qemu_alive || { diag "$QMP_ERROR"; return 2; }
	GUEST_HUNG=1
	diag "INFO: guest hang in $1"
	return 1
}

# dimm_plug NAME BYTES NODE XF: XF is '' (the add must succeed), expect-fail
# (it must fail whole) or may-fail (either, but whole). 0 done (the live
# model moved), 1 the kernel misbehaved, 2 the rig failed.
dimm_plug() {
	local name=$1 size=$2 node=$3 xf=$4 line id addr
	qmp_forget "\"$name\""
	qmp_object_add_ram "mem-$name" "$size" || { qmp_failed; return; }
	qmp_device_add_dimm "$name" "mem-$name" "$node" || { qmp_failed; return; }
	# Linux evaluates _OST once its ACPI scan has handled the device; 6.1
	# reports success there even when adding the memory failed, so the
	# guest's blocks are what decide.
	qmp_wait_event "$EVENT_TIMEOUT_MS" "ACPI_DEVICE_OST:\"device\": \"$name\"" ||
		{ dimm_hang "plug $name: no ACPI_DEVICE_OST within $((EVENT_TIMEOUT_MS / 1000)) s"; return; }
	model_dimm_plug "$name" "$size" "$node" added
	qmp_memory_devices || { qmp_failed; return; }
	for line in "${QMP_MEMDEVS[@]}"; do
		read -r id addr _ <<<"$line"
		[[ $id == "$name" ]] && model_dimm_place "$name" "$addr"
	done
	[[ -n ${MD_ADDR[$name]:-} ]] || { diag "query-memory-devices does not list $name"; return 2; }
	model_dimm_blocks "$name"
	case $xf in
	may-fail)
		# Either outcome, but whole: all the DIMM's blocks or none.
		agent_call state && guest_state || { diag "unreadable guest state"; return 2; }
		dimm_present "$name"
		if ((DB_PRESENT == 0)); then
			model_dimm_plug "$name" "$size" "$node" absent
			diag "plug $name: the add failed (allowed), no block left"
		else
			diag "plug $name: the add succeeded"
		fi
		return 0
		;;
	expect-fail)
		# The add must fail whole: no block of the DIMM in the guest.
		model_dimm_plug "$name" "$size" "$node" absent
		[[ $QMP_EVENT == *'"status": 0'[,\}]* ]] || diag "guest reported the failed insert: $QMP_EVENT"
		return 0
		;;
	esac
	[[ $QMP_EVENT == *'"status": 0'[,\}]* ]] ||
		{ diag "guest reported a failed insert: $QMP_EVENT"; return 1; }
	agent_call wait-blocks "$DB_FIRST" "$DB_COUNT" 10
	agent_failed $? "plug $name: memory blocks $DB_FIRST..$((DB_FIRST + DB_COUNT - 1))"
}

# dimm_unplug NAME XF: device_del until DEVICE_DELETED (or the guest's
# refusal), then object-del. XF expect-fail: the guest must refuse;
# may-fail: either (the model says which).
dimm_unplug() {
	local name=$1 xf=$2 refused=''
	qmp_forget "\"$name\""
	qmp_device_del "$name" || { qmp_failed; return; }
	while :; do
		qmp_wait_event "$EVENT_TIMEOUT_MS" "DEVICE_DELETED:\"device\": \"$name\"" \
			"DEVICE_UNPLUG_GUEST_ERROR:\"device\": \"$name\"" \
			"ACPI_DEVICE_OST:\"device\": \"$name\"" ||
			{ dimm_hang "unplug $name: no DEVICE_DELETED within $((EVENT_TIMEOUT_MS / 1000)) s"; return; }
		case $QMP_MATCH in
		0) break ;;
		1) refused=$QMP_EVENT; break ;;
		2)
			# source 3 is the eject request; 0 done, 0x84 ejection in progress.
			if [[ $QMP_EVENT == *'"source": 3'* && $QMP_EVENT != *'"status": 0'[,\}]* &&
				$QMP_EVENT != *'"status": 132'* ]]; then
				refused=$QMP_EVENT
				break
			fi
			;;
		esac
	done
	if [[ -n $refused ]]; then
		[[ $xf == may-fail ]] && { diag "unplug $name: the guest refused (allowed): $refused"; return 0; }
		[[ -n $xf ]] && { diag "unplug $name refused as expected"; return 0; }
		diag "guest refused to eject $name: $refused"
		return 1
	fi
	if [[ $xf == expect-fail ]]; then
		diag "unplug $name succeeded, expected the guest to refuse"
		qmp_object_del "mem-$name" || true
		model_dimm_unplug "$name"
		return 1
	fi
	qmp_object_del "mem-$name" || { qmp_failed; return; }
	model_dimm_unplug "$name"
	RUN_CYCLES=$((RUN_CYCLES + 1))
}

# dimm_present NAME: DB_PRESENT, how many of the DIMM's blocks the last
# guest_state saw.
dimm_present() {
	local i
	model_dimm_blocks "$1"
	DB_PRESENT=0
	for ((i = DB_FIRST; i < DB_FIRST + DB_COUNT; i++)); do
		[[ -n ${G_BLOCK[$i]:-} ]] && DB_PRESENT=$((DB_PRESENT + 1))
	done
	return 0
}

# dimm_expect: the kind's share of the expectations (see expect_reset in
# checks.sh for the outputs). A DIMM owns its blocks whatever its state,
# unless its add failed whole; online, it adds its size to MemTotal (less
# its own memmap with memmap_on_memory on a one-block DIMM: that part never
# reaches the buddy allocator).
dimm_expect() {
	local d i kb
	for d in "${!MD_SIZE[@]}"; do
		EXP_DEVICES=$((EXP_DEVICES + 1))
		EXP_QEMU[$d]="pc-dimm ${MD_ADDR[$d]} ${MD_SIZE[$d]} ${MD_NODE[$d]}"
		model_dimm_blocks "$d"
		if [[ ${MD_STATE[$d]} == absent ]]; then
			for ((i = DB_FIRST; i < DB_FIRST + DB_COUNT; i++)); do EXP_GONE[$i]=$d; done
			continue
		fi
		EXP_MEMMAP=$((EXP_MEMMAP + MD_SIZE[$d] / 4096 / MEMMAP_DIV))
		for ((i = DB_FIRST; i < DB_FIRST + DB_COUNT; i++)); do
			EXP_BLOCK[$i]=$d
			EXP_BLOCK_NODE[$i]=${MD_NODE[$d]}
			EXP_BLOCK_STATE[$i]=${MD_STATE[$d]}
			EXP_BLOCK_ZONE[$i]=${MD_ZONE[$d]}
		done
		[[ ${MD_STATE[$d]} == online ]] || continue
		kb=$((MD_SIZE[$d] / 1024))
		if ((MEMMAP_ON_MEMORY && MD_SIZE[$d] == BLOCK_BYTES)); then
			kb=$((kb - MD_SIZE[$d] / MEMMAP_DIV / 1024))
		fi
		EXP_KB=$((EXP_KB + kb))
		EXP_NODE_KB[${MD_NODE[$d]}]=$((${EXP_NODE_KB[${MD_NODE[$d]}]:-0} + kb))
	done
}
