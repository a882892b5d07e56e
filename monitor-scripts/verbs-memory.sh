# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Memory verbs on pc-dimms, driven from both sides: the host plugs and
# unplugs over QMP (dev-pc-dimm.sh), the guest agent onlines and offlines
# the blocks. Each verb's parse, predict, print and run (see verbs.sh).
# Runners return 0 done, 1 the kernel misbehaved, 2 the rig failed, with
# diag lines. Sourced by rig.

OFFLINE_TIMEOUT_S=${OFFLINE_TIMEOUT_S:-10}

verb_define plug 'NAME SIZE node=N' 'expect-fail may-fail' \
	'QMP object-add + device_add of a pc-dimm; waits for _OST, then its memory blocks'
verb_define online 'NAME [movable|kernel|auto]' 'expect-fail[ERRNO] may-fail' \
	'write online_movable, online_kernel or online to each block of the DIMM'
verb_define offline 'NAME' 'expect-fail[ERRNO]' \
	'write offline to each block, highest first, each with a time limit'
verb_define unplug 'NAME' 'expect-fail' \
	'device_del until DEVICE_DELETED, then object-del; expect-fail: the guest must refuse'
verb_define auto-online 'offline|online|online_kernel|online_movable' '' \
	"the kernel's auto_online_blocks for DIMMs plugged afterwards"
verb_define check '' '' 'only the checks'
VERB_NO_ERRNO[plug]="the guest's ACPI handler has none to give"
VERB_NO_ERRNO[unplug]="the guest's ACPI handler has none to give"

# --- plug NAME SIZE node=N ---------------------------------------------------
parse_plug() {
	(($# == 3)) || sc_die "usage: plug NAME SIZE node=N"
	P_NAME=$1
	parse_name plug "$1"
	to_bytes "$2" || sc_die "plug $1: '$2' is not a size"
	P_BYTES=$BYTES
	# A DIMM that is not whole blocks is one the kernel must refuse
	# (check_hotplug_memory_range): allowed as expect-fail, in 2M steps.
	((P_BYTES > 0 && P_BYTES % BLOCK_BYTES == 0)) ||
		{ [[ $P_XF == expect-fail ]] && ((P_BYTES > 0 && P_BYTES % (2 << 20) == 0)); } ||
		sc_die "plug $1: size $2 is not a multiple of the guest's memory block size (128M; other multiples of 2M only with expect-fail)"
	parse_node "plug $1" "$3"
}

predict_plug() {
	local name=$P_NAME outcome=added
	[[ -z ${MD_STATE[$name]:-} ]] || sc_die "plug $name: $name is plugged already"
	[[ -z ${M_VMEM_NODE[$name]:-} ]] || sc_die "plug $name: $name is a virtio-mem device (resize it)"
	((${#MD_SIZE[@]} < M_SLOTS)) || sc_die "plug $name: all $M_SLOTS slots are in use"
	model_dimm_bytes
	local total=$((M_BOOT + M_VMEM_TOTAL + MODEL_BYTES + P_BYTES))
	((total <= M_MAXMEM)) ||
		sc_die "plug $name: $(human "$total") would exceed maxmem=$(human "$M_MAXMEM")${M_VMEM[0]:+ (virtio-mem max sizes included)}"
	[[ $P_XF == expect-fail ]] && outcome=absent
	[[ $P_XF == may-fail ]] && outcome=unknown
	model_dimm_plug "$name" "$P_BYTES" "$P_NODE" "$outcome"
}

print_plug() {
	local h
	human_to h "$P_BYTES"
	P_TEXT="plug $P_NAME $h node=$P_NODE$P_XFT"
}

run_plug() {
	dimm_plug "$ST_NAME" "$ST_BYTES" "$ST_NODE" "$ST_XF"
}

# --- online NAME [movable|kernel|auto] ---------------------------------------
parse_online() {
	(($# == 1 || $# == 2)) || sc_die "usage: online NAME [movable|kernel|auto]"
	P_NAME=$1 P_ARGS=${2:-auto}
	case $P_ARGS in movable | kernel | auto) ;; *) sc_die "online $1: zone '$2' (movable, kernel, auto)" ;; esac
}

# online_type WORD: ONLINE_TYPE, the sysfs state for movable, kernel or auto.
online_type() {
	case $1 in
	movable) ONLINE_TYPE=online_movable ;;
	kernel) ONLINE_TYPE=online_kernel ;;
	*) ONLINE_TYPE=online ;;
	esac
}

predict_online() {
	local name=$P_NAME
	[[ -n ${MD_STATE[$name]:-} ]] || sc_die "online $name: $name is not plugged"
	[[ ${MD_STATE[$name]} != absent ]] || sc_die "online $name: $name has no memory blocks (its plug was expected to fail)"
	[[ ${MD_STATE[$name]} != unknown ]] || sc_die "online $name: after may-fail, only unplug knows what to expect"
	[[ ${MD_STATE[$name]} == offline ]] || sc_die "online $name: $name is online already"
	online_type "$P_ARGS"
	case $P_XF in
	'') model_dimm_online "$name" "$ONLINE_TYPE" ;;
	may-fail) model_dimm_unknown "$name" ;;
	esac
}

print_online() {
	P_TEXT="online $P_NAME $P_ARGS$P_XFT"
}

# xf_errno_ok WHAT: after an expected failure of the guest write, the errno
# (AGENT_OUT: "ERRNO FILE") must be one of the step's, when it names some.
xf_errno_ok() {
	local got=${AGENT_OUT[0]%% *}
	[[ -z $ST_ERRNOS || ",$ST_ERRNOS," == *",$got,"* ]] && return 0
	diag "$1 failed with $got, expected one of $ST_ERRNOS"
	return 1
}

run_online() {
	local name=$ST_NAME type st
	online_type "$ST_ARGS"
	type=$ONLINE_TYPE
	model_dimm_blocks "$name"
	agent_call online "$DB_FIRST" "$DB_COUNT" "$type"
	st=$?
	if [[ $ST_XF == may-fail ]] && ((st == 1)); then
		diag "online $name failed (allowed): ${AGENT_OUT[*]}; the blocks that came online go back"
		agent_call -t 60000 offline "$DB_FIRST" "$DB_COUNT" "$OFFLINE_TIMEOUT_S" rest
		agent_failed $? "offline $name after the failure"
		return
	fi
	if [[ $ST_XF == expect-fail ]]; then
		((st == 1)) || { agent_failed $st "online $name" || return; diag "online $name succeeded, expected a failure"; return 1; }
		xf_errno_ok "online $name" || return
		diag "online $name failed as expected: ${AGENT_OUT[*]}"
		# Blocks before the failing one did come online: take them back.
		agent_call -t 60000 offline "$DB_FIRST" "$DB_COUNT" "$OFFLINE_TIMEOUT_S" rest
		agent_failed $? "offline $name after the expected failure"
		return
	fi
	agent_failed $st "online $name ($type)" || return
	model_dimm_online "$name" "$type"
}

# --- offline NAME --------------------------------------------------------------
parse_offline() {
	(($# == 1)) || sc_die "usage: offline NAME"
	P_NAME=$1
}

predict_offline() {
	[[ ${MD_STATE[$P_NAME]:-} == online ]] || sc_die "offline $P_NAME: $P_NAME is not online"
	[[ -n $P_XF ]] || model_dimm_offline "$P_NAME"
}

print_offline() {
	P_TEXT="offline $P_NAME$P_XFT"
}

run_offline() {
	local name=$ST_NAME st
	model_dimm_blocks "$name"
	agent_call -t $(((OFFLINE_TIMEOUT_S * DB_COUNT + 30) * 1000)) offline "$DB_FIRST" "$DB_COUNT" "$OFFLINE_TIMEOUT_S"
	st=$?
	if [[ -n $ST_XF ]]; then
		((st == 1)) || { agent_failed $st "offline $name" || return; diag "offline $name succeeded, expected a failure"; return 1; }
		xf_errno_ok "offline $name" || return
		diag "offline $name failed as expected: ${AGENT_OUT[*]}"
		# Blocks offlined before the failing one: online them again.
		agent_call online "$DB_FIRST" "$DB_COUNT" "${MD_OTYPE[$name]:-online}" rest
		agent_failed $? "online $name after the expected failure"
		return
	fi
	agent_failed $st "offline $name" || return
	model_dimm_offline "$name"
}

# --- unplug NAME ---------------------------------------------------------------
parse_unplug() {
	(($# == 1)) || sc_die "usage: unplug NAME"
	P_NAME=$1
}

predict_unplug() {
	[[ -n ${MD_STATE[$P_NAME]:-} ]] || sc_die "unplug $P_NAME: $P_NAME is not plugged"
	[[ -n $P_XF ]] || model_dimm_unplug "$P_NAME"
}

print_unplug() {
	P_TEXT="unplug $P_NAME$P_XFT"
}

run_unplug() {
	dimm_unplug "$ST_NAME" "$ST_XF"
}

# --- auto-online offline|online|online_kernel|online_movable --------------------
parse_auto_online() {
	[[ $# == 1 && $1 =~ ^(offline|online|online_kernel|online_movable)$ ]] ||
		sc_die "usage: auto-online offline|online|online_kernel|online_movable"
	P_ARGS=$1
}

predict_auto_online() {
	model_auto "$P_ARGS"
}

print_auto_online() {
	P_TEXT="auto-online $P_ARGS"
}

# auto_online_set VALUE: the guest's auto_online_blocks, put back to its
# boot value when the run ends.
auto_online_set() {
	agent_call auto-online "$1"
	agent_failed $? "auto-online $1" || return
	model_auto "$1"
}

run_auto_online() {
	auto_online_set "$ST_ARGS" || return
	[[ -z $BOOT_AUTO_ONLINE ]] ||
		defer auto-online "put auto_online_blocks back to $BOOT_AUTO_ONLINE" auto_online_set "$BOOT_AUTO_ONLINE"
}

# --- check ----------------------------------------------------------------------
parse_check() {
	(($# == 0)) || sc_die "usage: check"
}

predict_check() {
	return 0
}

print_check() {
	P_TEXT=check
}

run_check() {
	return 0
}
