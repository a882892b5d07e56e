# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Verbs that run a program in the guest: the kernel's memory-hotplug
# kselftest, a shell command, the in-guest floor loop (see verbs.sh for the
# four functions a verb has). Sourced by rig.

verb_define kselftest '[PERCENT]' '' \
	"the kernel's mem-on-off-test.sh in the guest, folded into KTAP subtests"
verb_define guest-sh 'COMMAND...' '' 'a shell command in the guest, which must exit 0'
verb_define floor 'NAME CYCLES' '' "the in-guest online_movable/offline loop over an offline DIMM's blocks"

# --- kselftest [PERCENT] -----------------------------------------------------------
parse_kselftest() {
	[[ $# -le 1 ]] && dec P_ARGS "${1:-2}" 100 || sc_die "usage: kselftest [PERCENT]"
}

# It onlines every offline block; afterwards only unplug applies.
predict_kselftest() {
	local d
	for d in "${!MD_STATE[@]}"; do
		[[ ${MD_STATE[$d]} == absent ]] || model_dimm_unknown "$d"
	done
}

print_kselftest() {
	P_TEXT="kselftest $P_ARGS"
}

# The test's output folded into KTAP as subtests: each block it onlines or
# offlines, its unexpected results, and its notifier phase (run against the
# built-in injector, or a skipped subtest with its reason: never a pass it
# did not earn).
run_kselftest() {
	local line n=0 bad=0 st='' phase=0 skipped='' last='' d
	agent_call -t 600000 kselftest-mem-on-off "$ST_ARGS"
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
	# The test ends by onlining every offline block (to the default zone).
	for d in "${!MD_STATE[@]}"; do
		[[ ${MD_STATE[$d]} == absent ]] || model_dimm_online_any "$d"
	done
	((bad == 0)) || { diag "mem-on-off-test.sh failed (exit ${st:-unknown})"; return 1; }
}

# --- guest-sh COMMAND... --------------------------------------------------------------
parse_guest_sh() {
	(($# >= 1)) || sc_die "usage: guest-sh COMMAND..."
	P_ARGS=$*
}

predict_guest_sh() {
	return 0
}

print_guest_sh() {
	P_TEXT="guest-sh $P_ARGS"
}

# The rig's model does not follow what it does, so the checks see any change.
run_guest_sh() {
	local l
	agent_call sh "$ST_ARGS"
	agent_failed $? "guest-sh" || return
	for l in "${AGENT_OUT[@]}"; do diag "guest: $l"; done
}

# --- floor NAME CYCLES ------------------------------------------------------------------
parse_floor() {
	(($# == 2)) || sc_die "usage: floor NAME CYCLES"
	dec P_ARGS "$2" 1000000 && ((P_ARGS > 0)) || sc_die "floor $1: '$2' is not a cycle count"
	P_NAME=$1
}

predict_floor() {
	[[ ${MD_STATE[$P_NAME]:-} == offline ]] || sc_die "floor $P_NAME: $P_NAME must be plugged and offline"
}

print_floor() {
	P_TEXT="floor $P_NAME $P_ARGS"
}

# FLOOR_NS gets the time of one cycle.
run_floor() {
	model_dimm_blocks "$ST_NAME"
	agent_call floor "$DB_FIRST" "$DB_COUNT" "$ST_ARGS"
	agent_failed $? "floor $ST_NAME" || return
	[[ ${AGENT_OUT[0]:-} =~ cycle_ns\ ([0-9]+)$ ]] || { diag "floor: no timing from the guest"; return 2; }
	FLOOR_NS=${BASH_REMATCH[1]}
	diag "floor: $((FLOOR_NS / 1000)) us per online_movable/offline cycle of $DB_COUNT blocks"
}
