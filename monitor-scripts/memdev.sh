# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # a part of rig: what it sets, the other parts read
# Memory verbs, driven from both sides: the host plugs and unplugs pc-dimms
# over QMP, the guest agent waits for, onlines and offlines their blocks.
# Each verb updates the runner's model (D_*) that checks.sh compares both
# sides against. A verb returns 0 done, 1 the kernel misbehaved, 2 the rig
# failed; STEP_DIAG holds the why. Sourced by rig.

declare -A D_SIZE=() D_NODE=() D_ADDR=() D_STATE=() D_ZONE=() D_ONLINE_TYPE=() LOADS=()
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
	2)
		# socat gone while QEMU runs: the rig's side broke, not the guest
		if qemu_alive && ! chan_alive agent; then
			diag "$what: the rig's socat for the agent channel died"
			return 2
		fi
		diag "$what: agent channel closed"
		return 1
		;;
	3) GUEST_HUNG=1; diag "INFO: guest hang in $what: no agent reply"; return 1 ;;
	esac
}

qmp_failed() {
	diag "$QMP_ERROR"
	return 2
}

# dimm_present NAME: DB_PRESENT, how many of the DIMM's blocks the last
# guest_state saw.
dimm_present() {
	local i
	dimm_blocks "$1"
	DB_PRESENT=0
	for ((i = DB_FIRST; i < DB_FIRST + DB_COUNT; i++)); do
		[[ -n ${G_BLOCK[$i]:-} ]] && DB_PRESENT=$((DB_PRESENT + 1))
	done
	return 0
}

# dimm_blocks NAME: DB_FIRST and DB_COUNT of a plugged DIMM's memory blocks.
dimm_blocks() {
	DB_FIRST=$((D_ADDR[$1] / GUEST_BLOCK_SIZE)) DB_COUNT=$((D_SIZE[$1] / GUEST_BLOCK_SIZE))
}

# split_xf ARGS...: XF=1 and XF_ERRNOS when the step ends in expect-fail,
# XF=2 when it ends in may-fail; the other words in XF_ARGS.
split_xf() {
	XF=0 XF_ERRNOS='' XF_ARGS=()
	while (($#)); do
		if [[ $1 == expect-fail ]]; then
			XF=1 XF_ERRNOS=${2:-}
			return
		fi
		if [[ $1 == may-fail ]]; then
			XF=2
			return
		fi
		XF_ARGS+=("$1")
		shift
	done
}

# xf_check WHAT: after an expected failure of the guest write, the errno
# must be one of XF_ERRNOS (when given). AGENT_OUT holds "ERRNO FILE".
xf_errno_ok() {
	local got=${AGENT_OUT[0]%% *}
	[[ -z $XF_ERRNOS || ",$XF_ERRNOS," == *",$got,"* ]] && return 0
	diag "$1 failed with $got, expected one of $XF_ERRNOS"
	return 1
}

verb_plug() { # NAME SIZE node=N [expect-fail]
	split_xf "$@"
	set -- "${XF_ARGS[@]}"
	local name=$1 size node=${3#node=} line first count
	to_bytes "$2"
	size=$BYTES
	qmp_forget "\"$name\""
	qmp_object_add_ram "mem-$name" "$size" || { qmp_failed; return; }
	qmp_device_add_dimm "$name" "mem-$name" "$node" || { qmp_failed; return; }
	# Linux evaluates _OST once its ACPI scan has handled the device; 6.1
	# reports success there even when adding the memory failed, so the
	# guest's blocks are what decide.
	qmp_wait_event "$EVENT_TIMEOUT_MS" "ACPI_DEVICE_OST:\"device\": \"$name\"" || {
		qemu_alive || { diag "$QMP_ERROR"; return 2; }
		GUEST_HUNG=1
		diag "INFO: guest hang in plug $name: no ACPI_DEVICE_OST within $((EVENT_TIMEOUT_MS / 1000)) s"
		return 1
	}
	D_SIZE[$name]=$size D_NODE[$name]=$node D_STATE[$name]=$GUEST_DEFAULT_STATE D_ZONE[$name]=${AUTO_ZONE:-}
	qmp_memory_devices || { qmp_failed; return; }
	for line in "${QMP_MEMDEVS[@]}"; do
		# shellcheck disable=SC2086
		set -- $line
		[[ $1 == "$name" ]] && D_ADDR[$name]=$2
	done
	[[ -n ${D_ADDR[$name]:-} ]] || { diag "query-memory-devices does not list $name"; return 2; }
	dimm_blocks "$name"; first=$DB_FIRST count=$DB_COUNT
	if ((XF == 2)); then
		# Either outcome, but whole: all the DIMM's blocks or none.
		agent_call state && guest_state || { diag "unreadable guest state"; return 2; }
		dimm_present "$name"
		if ((DB_PRESENT == 0)); then
			D_STATE[$name]=absent
			diag "plug $name: the add failed (allowed), no block left"
		else
			diag "plug $name: the add succeeded"
		fi
		return 0
	fi
	if ((XF)); then
		# The add must fail whole: no block of the DIMM in the guest.
		D_STATE[$name]=absent
		[[ $QMP_EVENT == *'"status": 0'[,\}]* ]] || diag "guest reported the failed insert: $QMP_EVENT"
		return 0
	fi
	[[ $QMP_EVENT == *'"status": 0'[,\}]* ]] ||
		{ diag "guest reported a failed insert: $QMP_EVENT"; return 1; }
	agent_call wait-blocks "$first" "$count" 10
	agent_failed $? "plug $name: memory blocks $first..$((first + count - 1))" || return
	return 0
}

online_type() { # movable|kernel|auto
	case $1 in
	movable) ONLINE_TYPE=online_movable ZONE=Movable ;;
	kernel) ONLINE_TYPE=online_kernel ZONE=Normal ;;
	*) ONLINE_TYPE=online ZONE='' ;;
	esac
}

verb_online() { # NAME movable|kernel|auto [expect-fail [ERRNOS]]
	split_xf "$@"
	set -- "${XF_ARGS[@]}"
	local name=$1 first count st
	online_type "${2:-auto}"
	dimm_blocks "$name"; first=$DB_FIRST count=$DB_COUNT
	agent_call online "$first" "$count" "$ONLINE_TYPE"
	st=$?
	if ((XF == 2 && st == 1)); then
		diag "online $name failed (allowed): ${AGENT_OUT[*]}; the blocks that came online go back"
		agent_call -t 60000 offline "$first" "$count" "$OFFLINE_TIMEOUT_S" rest
		agent_failed $? "offline $name after the failure" || return
		return 0
	fi
	if ((XF == 1)); then
		((st == 1)) || { agent_failed $st "online $name" || return; diag "online $name succeeded, expected a failure"; return 1; }
		xf_errno_ok "online $name" || return
		diag "online $name failed as expected: ${AGENT_OUT[*]}"
		# Blocks before the failing one did come online: take them back.
		agent_call -t 60000 offline "$first" "$count" "$OFFLINE_TIMEOUT_S" rest
		agent_failed $? "offline $name after the expected failure" || return
		return 0
	fi
	agent_failed $st "online $name ($ONLINE_TYPE)" || return
	D_STATE[$name]=online D_ZONE[$name]=$ZONE D_ONLINE_TYPE[$name]=$ONLINE_TYPE
}

# auto-online offline|online|online_kernel|online_movable: the kernel's
# auto_online_blocks; DIMMs plugged after it come up in that state (and
# zone, where the type names one).
verb_auto_online() {
	agent_call auto-online "$1"
	agent_failed $? "auto-online $1" || return
	AUTO_CHANGED=1
	case $1 in
	offline) GUEST_DEFAULT_STATE=offline ;;
	*) GUEST_DEFAULT_STATE=online ;;
	esac
	AUTO_ZONE=''
	[[ $1 == online_movable ]] && AUTO_ZONE=Movable
	[[ $1 == online_kernel ]] && AUTO_ZONE=Normal
	return 0
}

verb_offline() { # NAME [expect-fail [ERRNOS]]
	split_xf "$@"
	set -- "${XF_ARGS[@]}"
	local name=$1 first count st
	dimm_blocks "$name"; first=$DB_FIRST count=$DB_COUNT
	agent_call -t $(((OFFLINE_TIMEOUT_S * count + 30) * 1000)) offline "$first" "$count" "$OFFLINE_TIMEOUT_S"
	st=$?
	if ((XF)); then
		((st == 1)) || { agent_failed $st "offline $name" || return; diag "offline $name succeeded, expected a failure"; return 1; }
		xf_errno_ok "offline $name" || return
		diag "offline $name failed as expected: ${AGENT_OUT[*]}"
		# Blocks offlined before the failing one: online them again.
		agent_call online "$first" "$count" "${D_ONLINE_TYPE[$name]:-online}" rest
		agent_failed $? "online $name after the expected failure" || return
		return 0
	fi
	agent_failed $st "offline $name" || return
	D_STATE[$name]=offline
}

verb_unplug() { # NAME [expect-fail]
	split_xf "$@"
	local name=${XF_ARGS[0]} refused=''
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
		((XF)) && { diag "unplug $name refused as expected"; return 0; }
		diag "guest refused to eject $name: $refused"
		return 1
	fi
	if ((XF)); then
		diag "unplug $name succeeded, expected the guest to refuse"
		qmp_object_del "mem-$name" || true
		unset "D_SIZE[$name]" "D_NODE[$name]" "D_ADDR[$name]" "D_STATE[$name]" "D_ZONE[$name]"
		return 1
	fi
	qmp_object_del "mem-$name" || { qmp_failed; return; }
	unset "D_SIZE[$name]" "D_NODE[$name]" "D_ADDR[$name]" "D_STATE[$name]" "D_ZONE[$name]"
	SOAK_CYCLES=$((${SOAK_CYCLES:-0} + 1))
}

# expect vmemmap.COUNTER OP N: a counter of the series' vmemmap/stats (or
# fail_vmemmap/injected as injected_KIND) against its boot value.
verb_expect() {
	local counter=${1#vmemmap.} op=$2 n=$3 now base delta
	agent_call state
	agent_failed $? "expect" || return
	guest_state || { diag "unreadable guest state"; return 2; }
	now=${G_VMEMMAP[$counter]:-} base=${B_VMEMMAP[$counter]:-}
	[[ -n $now && -n $base ]] || { diag "the kernel has no vmemmap counter $counter"; return 2; }
	delta=$((now - base))
	[[ ${EXPECT_BOOT:-0} == 1 ]] && delta=$base
	case $op in
	'=') ((delta == n)) ;;
	'>=') ((delta >= n)) ;;
	'<=') ((delta <= n)) ;;
	esac && { diag "vmemmap.$counter: $base -> $now (change $delta)"; return 0; }
	if [[ ${EXPECT_BOOT:-0} == 1 ]]; then
		diag "vmemmap.$counter was $base at boot, expected $op $n"
	else
		diag "vmemmap.$counter changed by $delta since boot ($base -> $now), expected $op $n"
	fi
	return 1
}

# sweep-nth NAME SIZE node=N KINDS [MAX]: fail the 1st, 2nd, ... vmemmap
# allocation (fail_vmemmap nth, KINDS as its kinds file takes them) of one
# hot-add of the DIMM, until an add goes through with nothing injected.
# After each injected failure the add must have failed whole (no blocks,
# memmap pages and vmemmap/check at boot values) or, where the kernel has a
# fallback (a PMD block falls back to base pages), succeeded whole. Each
# round is a diagnostic line.
verb_sweep_nth() {
	local name=$1 size=$2 node=$3 kinds=$4 max=${5:-32} n before after first count i
	local st present
	for ((n = 1; n <= max; n++)); do
		agent_call state && guest_state || { diag "sweep: unreadable guest state"; return 2; }
		before=${G_VMEMMAP[injected_total]:-}
		[[ -n $before ]] || { diag "sweep: the kernel has no fail_vmemmap"; return 2; }
		agent_call inject fail_vmemmap "kinds=$kinds" "nth=$n"
		agent_failed $? "sweep: arm nth=$n" || return
		INJECTED=1
		st=0
		verb_plug "$name" "$size" "$node" expect-fail || st=$?
		((st == 0)) || return $st
		agent_call clear fail_vmemmap
		agent_failed $? "sweep: clear" || return
		# _OST came after the ACPI handler: whatever blocks the add
		# made exist by now.
		agent_call state && guest_state || { diag "sweep: unreadable guest state"; return 2; }
		after=${G_VMEMMAP[injected_total]}
		dimm_blocks "$name"; first=$DB_FIRST count=$DB_COUNT
		dimm_present "$name"
		present=$DB_PRESENT
		((present)) && D_STATE[$name]=$GUEST_DEFAULT_STATE
		st=0
		check_guest || st=$?
		if ((st != 0)); then
			diag "sweep: nth=$n ($((after - before)) injected) left the add half-done (above)"
			return "$st"
		fi
		if ((after == before)); then
			diag "sweep: nth=$n injected nothing: the add needs $((n - 1)) vmemmap allocations of kinds $kinds"
			((present)) && return 0
			diag "sweep: yet the add failed"
			return 1
		fi
		if ((present)); then
			diag "sweep: nth=$n failed an allocation, the kernel fell back and the add succeeded whole"
		else
			diag "sweep: nth=$n failed the add, rolled back whole"
		fi
		verb_unplug "$name" || return
	done
	diag "sweep: still injecting after $max allocations"
	return 1
}

# expect-boot vmemmap.COUNTER OP N: a counter's value at boot.
verb_expect_boot() {
	EXPECT_BOOT=1 verb_expect "$@"
}

# load NAME node=N SIZE [seed=S] [pin=SIZE]: guest/src/rigload fills SIZE
# bytes bound to node N from a seed (the run's unless given), optionally
# holding PIN bytes with vmsplice; verify checks every byte, release drops
# the held pages, unload frees it all. A lost byte is a kernel problem.
verb_load() {
	local name=$1 node=${2#node=} size=$3 seed=$SEED pin='' kv
	for kv in "${@:4}"; do
		case $kv in
		seed=*) seed=${kv#seed=} ;;
		pin=*) pin=${kv#pin=} ;;
		esac
	done
	agent_call load-start "$name" "$node" "$size" "$seed" ${pin:+"$pin"}
	agent_failed $? "load $name" || return
	LOADS[$name]=1
}

verb_verify() {
	agent_call load-verify "$1"
	agent_failed $? "verify $1" || return
	diag "verify $1: ${AGENT_OUT[*]}"
}

verb_release() {
	agent_call load-release "$1"
	agent_failed $? "release $1"
}

verb_unload() {
	agent_call load-stop "$1"
	agent_failed $? "unload $1" || return
	unset "LOADS[$1]"
}

# kselftest [RATIO]: the kernel's mem-on-off-test.sh in the guest, folded
# into KTAP as subtests: each block it onlines or offlines, its unexpected
# results, and its notifier phase (run against the built-in injector, or a
# skipped subtest with its reason: never a pass it did not earn).
verb_kselftest() {
	local ratio=${1:-2} line n=0 bad=0 st='' phase=0 skipped='' last=''
	agent_call -t 600000 kselftest-mem-on-off "$ratio"
	agent_failed $? "kselftest" || return
	STEP_SUB=()
	for line in "${AGENT_OUT[@]}"; do
		case $line in
		kselftest-missing) diag "mem-on-off-test.sh is not in the guest image"; return 2 ;;
		"kselftest-exit "*) st=${line#kselftest-exit } ;;
		*"Test with memory notifier error injection"*) phase=1 ;;
		*"skip extra tests:"*) skipped=${line#*skip extra tests: } ;;
		*"->online memory"* | *"->offline memory"*) last=${line//[$'\t']/} ;;
		"-> Success") n=$((n + 1)); STEP_SUB+=("ok $n $last") ;;
		"-> Failure") n=$((n + 1)); STEP_SUB+=("ok $n $last # SKIP busy: the test moves on to another block") ;;
		*unexpected* | *FAILED*)
			n=$((n + 1)) bad=1
			STEP_SUB+=("not ok $n ${line//[$'\t']/}")
			;;
		esac
	done
	n=$((n + 1))
	if [[ -n $skipped ]]; then
		STEP_SUB+=("ok $n notifier error injection phase # SKIP $skipped")
	elif ((phase)); then
		STEP_SUB+=("ok $n notifier error injection phase (built-in injector)")
	else
		STEP_SUB+=("ok $n notifier error injection phase # SKIP the test did not reach it")
	fi
	n=$((n + 1))
	if [[ $st == 0 ]]; then
		STEP_SUB+=("ok $n mem-on-off-test.sh exit 0")
	else
		STEP_SUB+=("not ok $n mem-on-off-test.sh exit ${st:-unknown}")
		bad=1
	fi
	STEP_SUB=("KTAP version 1" "1..$n" "${STEP_SUB[@]}")
	# The test ends by onlining every offline block (to the default zone):
	# the model follows.
	local d
	for d in "${!D_STATE[@]}"; do
		[[ ${D_STATE[$d]} == absent ]] || D_STATE[$d]=online D_ZONE[$d]=''
	done
	((bad == 0)) || { diag "mem-on-off-test.sh failed (exit ${st:-unknown})"; return 1; }
}

# inject NAME KEY=VALUE...: arm an injector in the guest until clear (or
# the end of the run).
verb_inject() {
	agent_call inject "$@"
	agent_failed $? "inject $1" || return
	INJECTED=1
}

verb_clear() { # NAME|all
	agent_call clear "$1"
	agent_failed $? "clear $1"
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

# --- virtio-mem -----------------------------------------------------------
# The model of the virtio-mem devices, filled at boot by checks.sh
# (vmem_boot) from the scenario header and QEMU: names in order; per name
# node, max, size (the requested size: a resize waits until the guest has
# plugged it), memaddr and QEMU's block-size; VM_SEEN, the state each of
# their memory blocks was first seen in (a block keeps it).
declare -a VM_NAMES=()
declare -A VM_NODE=() VM_MAX=() VM_SIZE=() VM_ADDR=() VM_BLOCK=() VM_SEEN=()
B_VMEM_BLOCKS=0
# A resize fails when QEMU's size stops moving for RESIZE_STALL_MS (6.1's
# driver retries a failed unplug only after 50 s, then backs off to 5 min),
# or when it takes longer than RESIZE_TIMEOUT_MS in all; once QEMU has the
# size, the guest gets RESIZE_SETTLE_MS to show the blocks and MemTotal.
RESIZE_STALL_MS=${RESIZE_STALL_MS:-20000}
RESIZE_TIMEOUT_MS=${RESIZE_TIMEOUT_MS:-300000}
RESIZE_SETTLE_MS=${RESIZE_SETTLE_MS:-10000}

# vmem_wait NAME BYTES: until QEMU says the device's size is BYTES. QEMU
# sends MEMORY_DEVICE_SIZE_CHANGE as the guest plugs and unplugs, but at most
# one a second per device, holding the last one back until the second ends:
# between events the size is polled (qom-get). 0 reached: VW_MS from VW_T0
# (us, taken before the qom-set) until QEMU had it (the event's timestamp,
# or the poll that saw it); 1 the size stopped short at VW_SIZE (no change
# for RESIZE_STALL_MS, or RESIZE_TIMEOUT_MS in all); 2 QMP failed.
vmem_wait() {
	local name=$1 want=$2 now last=-1 moved deadline
	deadline=$((VW_T0 / 1000 + RESIZE_TIMEOUT_MS)) moved=$((VW_T0 / 1000))
	VW_EVENTS=0 VW_SIZE=- VW_MS=-
	while :; do
		if qmp_wait_event 100 "MEMORY_DEVICE_SIZE_CHANGE:\"id\": \"$name\""; then
			VW_EVENTS=$((VW_EVENTS + 1))
			if [[ $QMP_EVENT =~ \"size\":\ ([0-9]+) ]] && ((BASH_REMATCH[1] == want)); then
				VW_SIZE=$want
				[[ $QMP_EVENT =~ \"seconds\":\ ([0-9]+),\ \"microseconds\":\ ([0-9]+) ]] &&
					VW_MS=$(((BASH_REMATCH[1] * 1000000 + 10#${BASH_REMATCH[2]} - VW_T0) / 1000))
				return 0
			fi
		fi
		qemu_alive || return 2
		qmp_qom_get "/machine/peripheral/$name" size || return 2
		[[ $QOM_VALUE =~ ^[0-9]+$ ]] || { QMP_ERROR="qom-get $name size: $QOM_VALUE"; return 2; }
		VW_SIZE=$QOM_VALUE now=$((${EPOCHREALTIME/./} / 1000))
		if ((VW_SIZE == want)); then
			VW_MS=$((now - VW_T0 / 1000))
			return 0
		fi
		((VW_SIZE == last)) || last=$VW_SIZE moved=$now
		((now - moved < RESIZE_STALL_MS && now < deadline)) || return 1
	done
}

vmem_human() { # BYTES: 0 or 512M
	if (($1)); then human "$1"; else echo 0; fi
}

# vmem_settle: once QEMU has the size, the guest may still be adding and
# onlining (or removing) the last memory block: the checks are run quietly
# until they pass, for up to RESIZE_SETTLE_MS (the step's own checks then
# say what is wrong). VS_MS: how long it took.
vmem_settle() {
	local t0=${EPOCHREALTIME/./} st
	local -a keep=("${STEP_DIAG[@]}")
	while :; do
		STEP_DIAG=()
		st=0
		check_guest || st=$?
		((st == 0 || st == 2 || GUEST_HUNG)) && break
		((${EPOCHREALTIME/./} - t0 < RESIZE_SETTLE_MS * 1000)) || break
		sleep 0.1
	done
	STEP_DIAG=("${keep[@]}")
	VS_MS=$(((${EPOCHREALTIME/./} - t0) / 1000))
}

# resize NAME SIZE [expect-fail]: qom-set the virtio-mem device's
# requested-size, wait until the guest has plugged or unplugged it (QEMU's
# size) and shows it (blocks, MemTotal). A guest that stops short (memory
# it cannot unplug) fails the step, unless expect-fail: then the requested
# size goes back to the old one, which the guest must reach again, so the
# model still holds.
verb_resize() {
	split_xf "$@"
	set -- "${XF_ARGS[@]}"
	local name=$1 want old st
	to_bytes "$2"
	want=$BYTES old=${VM_SIZE[$name]}
	qmp_forget "\"id\": \"$name\""
	VW_T0=${EPOCHREALTIME/./}
	qmp_qom_set "/machine/peripheral/$name" requested-size "$want" || { qmp_failed; return; }
	vmem_wait "$name" "$want"
	st=$?
	((st == 2)) && { diag "resize $name: $QMP_ERROR"; return 2; }
	if ((st == 0)); then
		VM_SIZE[$name]=$want
		vmem_settle
		diag "resize $name $(vmem_human "$old") -> $(vmem_human "$want"): QEMU's size in $VW_MS ms, the guest's blocks and MemTotal checked $VS_MS ms later ($VW_EVENTS size events)"
		((XF)) || return 0
		diag "resize $name reached $(vmem_human "$want"), expected the guest to stop short"
		return 1
	fi
	diag "resize $name $(vmem_human "$old") -> $(vmem_human "$want"): the guest stopped at $(vmem_human "$VW_SIZE"): QEMU's size did not change for $((RESIZE_STALL_MS / 1000)) s"
	((XF)) || return 1
	qmp_forget "\"id\": \"$name\""
	VW_T0=${EPOCHREALTIME/./}
	qmp_qom_set "/machine/peripheral/$name" requested-size "$old" || { qmp_failed; return; }
	vmem_wait "$name" "$old"
	st=$?
	((st == 2)) && { diag "resize $name: $QMP_ERROR"; return 2; }
	if ((st == 1)); then
		diag "resize $name: back to $(vmem_human "$old") failed too: the guest stopped at $(vmem_human "$VW_SIZE")"
		return 1
	fi
	vmem_settle
	diag "resize $name stopped short as expected; back at $(vmem_human "$old") in $VW_MS ms"
	return 0
}
