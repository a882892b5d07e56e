# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# sweep OP NAME ARGS... [CASES]: fail the 1st, 2nd, ... Nth slab or page
# allocation of one memory hotplug operation on a DIMM, one failure per
# case, through the series' fail_hotplug (scoped to the operation in
# whichever task runs it). A dry run counts N first; CASES is MAX (the
# first MAX cases) or FIRST-LAST. Each case is judged survived,
# clean-error, kernel-problem or missed, is a diagnostic line, a KTAP
# subtest and a row of sweep.json in the run folder; each distinct problem
# gets a replay scenario there. The sweep never stops at a problem while
# the guest can go on. Sourced by rig.

verb_define sweep 'plug NAME SIZE node=N [CASES] | online NAME movable|kernel [CASES] | offline NAME [CASES]' '' \
	'fail each allocation of a hot-add, online or offline once (fail_hotplug), judge every case'

# space for the dry run: larger than any operation's allocation count
readonly SWEEP_DRY_SPACE=1000000
# how long the console may lag behind the guest's end-of-case marker
SWEEP_SYNC_MS=${SWEEP_SYNC_MS:-5000}

# P_ARGS: "OP [ZONE] [CASES]"
parse_sweep() {
	(($# >= 2)) || sc_die "usage: sweep ${VERB_USAGE[sweep]}"
	local op=$1 cases=''
	shift
	case $op in
	plug)
		(($# == 3 || $# == 4)) || sc_die "usage: sweep plug NAME SIZE node=N [CASES]"
		cases=${4:-}
		parse_plug "$1" "$2" "$3"
		P_ARGS=plug
		;;
	online)
		(($# == 2 || $# == 3)) || sc_die "usage: sweep online NAME movable|kernel [CASES]"
		[[ $2 == movable || $2 == kernel ]] || sc_die "sweep online $1: zone '$2' (movable, kernel)"
		cases=${3:-}
		parse_name "sweep online" "$1"
		P_NAME=$1 P_ARGS="online $2"
		;;
	offline)
		(($# == 1 || $# == 2)) || sc_die "usage: sweep offline NAME [CASES]"
		cases=${2:-}
		parse_name "sweep offline" "$1"
		P_NAME=$1 P_ARGS=offline
		;;
	*) sc_die "sweep: unknown operation '$op' (plug, online, offline)" ;;
	esac
	if [[ -n $cases ]]; then
		[[ $cases =~ ^([1-9][0-9]*)(-([1-9][0-9]*))?$ ]] &&
			{ [[ -z ${BASH_REMATCH[3]} ]] || ((BASH_REMATCH[1] <= BASH_REMATCH[3])); } ||
			sc_die "sweep $op: '$cases' is not MAX or FIRST-LAST (cases from 1)"
		P_ARGS+=" $cases"
	fi
}

# The step leaves the DIMM as it found it: each case ends where it began.
predict_sweep() {
	local name=$P_NAME
	case ${P_ARGS%% *} in
	plug)
		predict_plug
		model_dimm_unplug "$name"
		;;
	online)
		[[ ${MD_STATE[$name]:-} == offline ]] || sc_die "sweep online $name: $name must be plugged and offline"
		;;
	offline)
		[[ ${MD_STATE[$name]:-} == online ]] || sc_die "sweep offline $name: $name must be online"
		;;
	esac
}

print_sweep() {
	local -a w
	read -ra w <<<"$P_ARGS"
	case ${w[0]} in
	plug) P_TEXT="sweep plug $P_NAME $(human "$P_BYTES") node=$P_NODE${w[1]:+ ${w[1]}}" ;;
	*) P_TEXT="sweep ${w[0]} $P_NAME${w[1]:+ ${w[*]:1}}" ;;
	esac
}

# --- the operations: sweep_do_OP runs it (SW_DONE 1 when it completed,
# 0 when it failed), sweep_back_OP returns the DIMM to the start state.
# Both return 0, 1 (the kernel misbehaved, diag lines) or 2 (the rig).

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

sweep_do_online() {
	local type st
	type=$(online_type "$SW_ZONE")
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

sweep_back_online() {
	((SW_DONE)) || return 0
	model_dimm_blocks "$ST_NAME"
	agent_call -t $(((OFFLINE_TIMEOUT_S * DB_COUNT + 30) * 1000)) offline "$DB_FIRST" "$DB_COUNT" "$OFFLINE_TIMEOUT_S"
	agent_failed $? "offline $ST_NAME" || return
	model_dimm_offline "$ST_NAME"
}

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
}

# --- the parts of a case ----------------------------------------------------------

# sweep_counters: SW_SPACE and SW_TIMES, fail_hotplug's counters now.
sweep_counters() {
	local line
	SW_SPACE='' SW_TIMES=''
	agent_call fault-counters fail_hotplug
	agent_failed $? "fail_hotplug counters" || return
	for line in "${AGENT_OUT[@]}"; do
		case $line in
		"space "*) SW_SPACE=${line#space } ;;
		"times "*) SW_TIMES=${line#times } ;;
		esac
	done
	[[ $SW_SPACE =~ ^-?[0-9]+$ && $SW_TIMES =~ ^-?[0-9]+$ ]] ||
		{ diag "fail_hotplug counters unreadable: ${AGENT_OUT[*]}"; return 2; }
}

# sweep_console_sync TEXT: a marker through the guest's kernel log, then
# the console read until it shows: every line the case printed is in.
sweep_console_sync() {
	local deadline now
	agent_call mark "$1"
	agent_failed $? "console marker" || return
	now_ms deadline
	deadline=$((deadline + SWEEP_SYNC_MS))
	while ! grep -q -a -F "rig: $1" "$RUN_DIR/console.log"; do
		now_ms now
		((now < deadline)) || { diag "the console lacks the marker '$1' after $((SWEEP_SYNC_MS / 1000)) s"; return 2; }
		sleep 0.1
	done
}

# sweep_triage FROM: the console since byte FROM. SW_SITE, the function
# the injected failure's stack blames; SW_INJECTED, 1 when the stack names
# fail_hotplug; SW_REPORTS, the unexplained titles (a kernel problem each).
sweep_triage() {
	local st=0 json=$RUN_DIR/.sweep-case.json flag title
	SW_SITE='' SW_REPORTS=()
	console_scan
	CON_SUSPECT=0
	"$TRIAGE" -f "$1" -j "$json" "$RUN_DIR/console.log" >/dev/null || st=$?
	((st <= 1)) || { diag "triage failed on console.log (status $st)"; return 2; }
	while read -r flag title; do
		if [[ $flag == true ]]; then
			SW_REPORTS+=("$title")
		fi
	done < <(jq -r '.reports[] | "\(.unexplained) \(.title)"' "$json")
	# injected failures are no reports: the triage lists them by site
	SW_SITE=$(jq -r '[.injections[]? | .site // empty][0] // empty' "$json")
	SW_INJECTED=0
	# grep -c reads to the end: with -q, tail's EPIPE would fail the pipe
	if tail -c +"$(($1 + 1))" "$RUN_DIR/console.log" | grep -a -c 'name fail_hotplug, interval' >/dev/null; then
		SW_INJECTED=1
	fi
	return 0
}

# sweep_judge: run the checks, their diag lines moved into SW_REASONS.
# Returns the worst status.
sweep_judge() {
	local mark=${#STEP_DIAG[@]} st=0 c=0
	check_devices || st=$?
	if ((st != 2)); then
		check_guest || c=$?
		((c > st)) && st=$c
	fi
	SW_REASONS+=("${STEP_DIAG[@]:mark}")
	STEP_DIAG=("${STEP_DIAG[@]:0:mark}")
	return "$st"
}

# sweep_rebaseline: after a case left the guest changed for good (leaked
# memmap, lost memory), later cases are judged against the guest as it is
# now, or each would report the same leftover again. What the devices add
# by the model is taken out, so that the checks can add it back.
sweep_rebaseline() {
	local b n
	baseline_from_guest || return 2
	expect_build
	for b in "${!EXP_BLOCK[@]}"; do
		[[ ${EXP_BLOCK[$b]} == "boot memory" ]] || unset "B_BLOCK[$b]"
	done
	B_MEMTOTAL=$((B_MEMTOTAL - EXP_KB))
	for n in "${!EXP_NODE_KB[@]}"; do
		B_NODEMEM[$n]=$((${B_NODEMEM[$n]:-0} - EXP_NODE_KB[$n]))
	done
	[[ -n ${B_VMEMMAP[buddy_pages]:-} ]] && B_VMEMMAP[buddy_pages]=$((B_VMEMMAP[buddy_pages] - EXP_MEMMAP))
	return 0
}

# sweep_record N OUTCOME: the case as a diag line, a KTAP subtest and a
# row of sweep.json (rewritten after every case, so a run that dies keeps
# what it did).
sweep_record() {
	local n=$1 outcome=$2 r line k=$(($1 - SW_FIRST + 1))
	line="$SW_OPTEXT n=$n: $outcome${SW_SITE:+ at $SW_SITE}"
	if [[ $outcome == kernel-problem || $outcome == missed ]]; then
		for r in "${SW_REASONS[@]}"; do line+="; $r"; done
	fi
	diag "sweep: $line"
	case $outcome in
	kernel-problem) SW_SUB+=("not ok $k $SW_OPTEXT n=$n $outcome${SW_SITE:+ at $SW_SITE}") ;;
	missed) SW_SUB+=("ok $k $SW_OPTEXT n=$n # SKIP missed: ${SW_REASONS[0]:-no failure was injected}") ;;
	*) SW_SUB+=("ok $k $SW_OPTEXT n=$n $outcome${SW_SITE:+ at $SW_SITE}") ;;
	esac
	jq -cn --arg op "$SW_OPTEXT" --argjson n "$n" --arg site "$SW_SITE" --arg outcome "$outcome" \
		'{operation: $op, n: $n, site: (if $site == "" then null else $site end), outcome: $outcome,
		  reasons: $ARGS.positional}' --args "${SW_REASONS[@]}" >>"$RUN_DIR/.sweep-cases.jsonl"
	# findings: one per (operation, site, problem), with every n that hits it
	jq -s '{cases: ., findings: ([.[] | select(.outcome == "kernel-problem")
		| . + {problem: ((.reasons[0] // "kernel problem") | gsub("[0-9]+"; "N"))}]
		| group_by([.operation, .site, .problem])
		| map({operation: .[0].operation, site: .[0].site, outcome: "kernel-problem",
			problem: .[0].problem, reasons: .[0].reasons, cases: map(.n)}))}' \
		"$RUN_DIR/.sweep-cases.jsonl" >"$RUN_DIR/sweep.json"
}

# sweep_case N SPACE TIMES VERBOSE: one run of the operation with
# fail_hotplug armed, judged; SW_OUTCOME. Returns 2 when the sweep cannot
# go on (the guest is gone or the DIMM cannot return to the start state).
sweep_case() {
	local n=$1 op=$SW_OP from st=0 cst
	SW_REASONS=() SW_SITE='' SW_OUTCOME=''
	console_scan
	from=$CON_OFF
	inject_arm fail_hotplug "space=$2" "times=$3" "verbose=$4" || return 2
	local mark=${#STEP_DIAG[@]}
	"sweep_do_$op" || st=$?
	# what the operation's own runner said is kept only when it failed
	((st == 0)) && STEP_DIAG=("${STEP_DIAG[@]:0:mark}")
	if ((st != 0)); then
		SW_REASONS+=("${STEP_DIAG[@]:mark}")
		STEP_DIAG=("${STEP_DIAG[@]:0:mark}")
		SW_OUTCOME=kernel-problem
		((GUEST_HUNG)) || qemu_alive || SW_REASONS+=("QEMU exited (the guest died)")
		if ((GUEST_HUNG)) || ! qemu_alive || ((st == 2)); then
			sweep_triage "$from" || true
			SW_REASONS+=("${SW_REPORTS[@]}")
			return 2
		fi
	fi
	sweep_counters || { SW_OUTCOME=kernel-problem; SW_REASONS+=("${STEP_DIAG[@]:mark}"); return 2; }
	agent_call clear fail_hotplug
	agent_failed $? "sweep: clear" || return 2
	# the operation's result must be whole
	cst=0
	sweep_judge || cst=$?
	((cst == 2)) && return 2
	((cst == 1)) && SW_OUTCOME=kernel-problem
	# back to the start state, and that must be the baseline again
	local done=$SW_DONE mark2=${#STEP_DIAG[@]} bst=0
	"sweep_back_$op" || bst=$?
	if ((bst != 0)); then
		SW_REASONS+=("cannot return to the start state: ${STEP_DIAG[*]:mark2}")
		STEP_DIAG=("${STEP_DIAG[@]:0:mark2}")
		SW_OUTCOME=kernel-problem
		sweep_triage "$from" || true
		SW_REASONS+=("${SW_REPORTS[@]}")
		return 2
	fi
	SW_DONE=$done
	cst=0
	sweep_judge || cst=$?
	((cst == 2)) && return 2
	if ((cst == 1)); then
		SW_OUTCOME=kernel-problem
		SW_REASONS+=("the guest did not return to the baseline: later cases are judged against it as it is")
		sweep_rebaseline || return 2
	fi
	sweep_console_sync "sweep $SW_OPTEXT n=$n end" || return 2
	sweep_triage "$from" || return 2
	if ((${#SW_REPORTS[@]})); then
		SW_OUTCOME=kernel-problem
		SW_REASONS=("${SW_REPORTS[@]}" "${SW_REASONS[@]}")
	fi
	return 0
}

# sweep_count: the dry run, nothing failed: SW_N, the allocations the
# operation makes (0 when the count failed).
sweep_count() {
	SW_N=0
	sweep_case 0 "$SWEEP_DRY_SPACE" -1 0 || return
	if [[ $SW_OUTCOME == kernel-problem || $SW_DONE == 0 ]]; then
		diag "sweep: $SW_OPTEXT failed with nothing injected: ${SW_REASONS[*]}"
		return 1
	fi
	# read before the clear put space back: sweep_case keeps it in SW_SPACE
	SW_N=$((SWEEP_DRY_SPACE - SW_SPACE))
}

# sweep_replay N: a scenario in the run folder that runs case N alone on
# this machine (the setup the operation needs, the sweep of that one case,
# the way back); SW_REPLAY is its path.
sweep_replay() {
	local n=$1 name=$ST_NAME zone
	SW_REPLAY=$RUN_DIR/replay-${SW_OP}-$name-n$n.scenario
	zone=movable
	[[ ${MD_ZONE[$name]:-} == Normal ]] && zone=kernel
	{
		echo "# replay: case $n of '$ST_TEXT' from run $RUN_ID"
		scenario_header_print
		case $SW_OP in
		plug) echo "sweep plug $name $(human "$ST_BYTES") node=$ST_NODE $n-$n" ;;
		online)
			echo "plug $name $(human "${MD_SIZE[$name]}") node=${MD_NODE[$name]}"
			echo "sweep online $name $SW_ZONE $n-$n"
			echo "unplug $name"
			;;
		offline)
			echo "plug $name $(human "${MD_SIZE[$name]}") node=${MD_NODE[$name]}"
			echo "online $name $zone"
			echo "sweep offline $name $n-$n"
			echo "offline $name"
			echo "unplug $name"
			;;
		esac
	} >"$SW_REPLAY"
}

# sweep_findings: one diag line per distinct problem (operation, site,
# first reason), with its cases and the command that replays the first;
# the same table in sweep-findings.txt.
sweep_findings() {
	local op site problem cases first
	[[ -s $RUN_DIR/sweep.json ]] || return 0
	while IFS=$'\t' read -r op site problem cases; do
		[[ $op == "$SW_OPTEXT" ]] || continue
		first=${cases%%,*}
		sweep_replay "$first"
		diag "sweep finding: $op at $site: $problem (cases $cases); replay: monitor-scripts/rig run ${SW_REPLAY#"$RIG_ROOT"/}"
		printf '%s\t%s\t%s\t%s\t%s\n' "$op" "$site" "$problem" "$cases" "${SW_REPLAY#"$RIG_ROOT"/}" >>"$RUN_DIR/sweep-findings.txt"
	done < <(jq -r '.findings[] | [.operation, (.site // "-"), .problem, (.cases | map(tostring) | join(","))] | @tsv' \
		"$RUN_DIR/sweep.json")
}

run_sweep() {
	local -a w
	local first=1 last n st=0 cst=0 t0 now
	read -ra w <<<"$ST_ARGS"
	SW_OP=${w[0]} SW_ZONE=''
	[[ $SW_OP == online ]] && SW_ZONE=${w[1]}
	SW_OPTEXT="$SW_OP $ST_NAME"
	[[ $SW_OP == plug ]] && SW_OPTEXT+=" $(human "$ST_BYTES") node=$ST_NODE"
	[[ -n $SW_ZONE ]] && SW_OPTEXT+=" $SW_ZONE"
	SW_SUB=() SW_DONE=0 SW_FIRST=1
	now_ms t0
	sweep_count || return
	last=$SW_N
	if [[ ${w[-1]} =~ ^([0-9]+)(-([0-9]+))?$ ]]; then
		if [[ -n ${BASH_REMATCH[3]} ]]; then
			first=${BASH_REMATCH[1]} last=${BASH_REMATCH[3]}
		elif ((BASH_REMATCH[1] < last)); then
			last=${BASH_REMATCH[1]}
		fi
	fi
	SW_FIRST=$first
	diag "sweep: $SW_OPTEXT makes $SW_N allocations (dry run); cases $first to $last"
	local -A tally=()
	for ((n = first; n <= last; n++)); do
		cst=0
		sweep_case "$n" "$n" 1 2 || cst=$?
		if [[ -z $SW_OUTCOME ]]; then
			if [[ $SW_TIMES == 1 ]]; then
				SW_OUTCOME=missed
				SW_REASONS=("times is still 1: the operation made fewer than $n allocations this time" "${SW_REASONS[@]}")
			elif ((SW_INJECTED == 0)); then
				SW_OUTCOME=missed
				SW_REASONS=("times went to $SW_TIMES but the console has no fail_hotplug stack" "${SW_REASONS[@]}")
			elif ((SW_DONE)); then
				SW_OUTCOME=survived
			else
				SW_OUTCOME=clean-error
			fi
		fi
		sweep_record "$n" "$SW_OUTCOME"
		tally[$SW_OUTCOME]=$((${tally[$SW_OUTCOME]:-0} + 1))
		[[ $SW_OUTCOME == kernel-problem ]] && st=1
		if ((cst == 2)); then
			diag "sweep: the guest cannot go on after case $n; cases $((n + 1)) to $last not run"
			for ((n = n + 1; n <= last; n++)); do
				SW_SUB+=("ok $((n - first + 1)) $SW_OPTEXT n=$n # SKIP not run: the guest could not go on")
			done
			break
		fi
	done
	STEP_SUB=("KTAP version 1" "1..$((last - first + 1))" "${SW_SUB[@]}")
	# after the last case the same memory must cycle with nothing armed
	if ((cst != 2)); then
		sweep_case control "$SWEEP_DRY_SPACE" 0 0 || cst=$?
		if [[ $SW_OUTCOME == kernel-problem || $SW_DONE == 0 ]]; then
			SW_REASONS=("the operation fails with nothing injected after the sweep" "${SW_REASONS[@]}")
			sweep_record 0 kernel-problem
			st=1
		fi
	fi
	now_ms now
	diag "sweep: $SW_OPTEXT: N=$SW_N, survived ${tally[survived]:-0}, clean-error ${tally[clean-error]:-0}, kernel-problem ${tally[kernel-problem]:-0}, missed ${tally[missed]:-0}, $(((now - t0) / 1000)) s"
	sweep_findings
	# every case was triaged on its own: the step's console check has
	# nothing left to add
	console_scan
	CON_SUSPECT=0
	if ((st)); then
		STEP_DIAG=("sweep $SW_OPTEXT: ${tally[kernel-problem]:-1} cases found kernel problems (sweep.json, sweep-findings.txt)" "${STEP_DIAG[@]}")
		return 1
	fi
	((cst == 2)) && return 2
	return 0
}
