# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# One case of the allocation-failure sweep (verbs-sweep.sh): fail_hotplug
# armed, the operation run (sweep-ops.sh), its result judged with the rig's
# checks, the device returned to its start state and judged again, the
# console triaged for the injected failure's stack and anything else; the
# case becomes a diagnostic line, a KTAP subtest and a row of sweep.json.
# Also the dry run that counts an operation's allocations, the replay
# scenario of a case and the findings table. Sourced by rig.

# space for the dry run: larger than any operation's allocation count
readonly SWEEP_DRY_SPACE=1000000
# how long the console may lag behind the guest's end-of-case marker
SWEEP_SYNC_MS=${SWEEP_SYNC_MS:-5000}

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

# sweep_console_sync TEXT FROM: a marker through the guest's kernel log,
# then the console since byte FROM read until it shows: every line the
# case printed is in.
sweep_console_sync() {
	local deadline now
	agent_call mark "$1"
	agent_failed $? "console marker" || return
	now_ms deadline
	deadline=$((deadline + SWEEP_SYNC_MS))
	# grep -c reads to the end: with -q, tail's EPIPE would fail the pipe
	while ! tail -c +"$(($2 + 1))" "$RUN_DIR/console.log" | grep -a -c -F "rig: $1" >/dev/null; do
		now_ms now
		((now < deadline)) || { diag "the console lacks the marker '$1' after $((SWEEP_SYNC_MS / 1000)) s"; return 2; }
		sleep 0.1
	done
}

# sweep_triage FROM: the console since byte FROM. SW_SITE, the function
# the injected failure's stack blames; SW_INJECTED, 1 when the stack names
# fail_hotplug; SW_GFP, SW_ORDER and SW_CACHE, what fail_hotplug says it
# failed (the gfp flags; a page allocation's order or a slab cache);
# SW_REPORTS, the unexplained titles (a kernel problem each).
sweep_triage() {
	local st=0 json=$RUN_DIR/.sweep-case.json flag title line
	SW_SITE='' SW_REPORTS=() SW_GFP='' SW_ORDER='' SW_CACHE=''
	console_scan
	CON_SUSPECT=0
	"$TRIAGE" -f "$1" -j "$json" "$RUN_DIR/console.log" >/dev/null || st=$?
	((st <= 1)) || { diag "triage failed on console.log (status $st)"; return 2; }
	# one jq for both: the reports, then the first injected failure's site
	# (injected failures are no reports: the triage lists them by site)
	while read -r flag title; do
		case $flag in
		true) SW_REPORTS+=("$title") ;;
		site) SW_SITE=$title ;;
		esac
	done < <(jq -r '(.reports[] | "\(.unexplained) \(.title)"),
		"site \([.injections[]? | .site // empty][0] // "")"' "$json")
	SW_INJECTED=0
	while IFS= read -r line; do
		case $line in
		*"name fail_hotplug, interval"*) SW_INJECTED=1 ;;
		*"fail_hotplug: failed "*)
			[[ -z $SW_GFP ]] || continue
			[[ $line =~ gfp_mask=0x[0-9a-f]+\(([^\)]*)\) ]] && SW_GFP=${BASH_REMATCH[1]}
			[[ $line =~ order:([0-9]+) ]] && SW_ORDER=${BASH_REMATCH[1]}
			[[ $line =~ slab\ allocation\ from\ ([^,\ ]+) ]] && SW_CACHE=${BASH_REMATCH[1]}
			;;
		esac
	done < <(tail -c +"$(($1 + 1))" "$RUN_DIR/console.log" | grep -a -E 'name fail_hotplug, interval|fail_hotplug: failed ')
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
# row of sweep.json. The row is made without jq (jq's start costs about
# 30 ms, a sweep case's reasons are few); sweep.json is rewritten from the
# rows at most once a second and at the sweep's end, so a run that dies
# keeps what it did but for its last second (.sweep-cases.jsonl has it).
sweep_record() {
	local n=$1 outcome=$2 r line k=$(($1 - SW_FIRST + 1)) now
	line="$SW_OPTEXT n=$n: $outcome${SW_SITE:+ at $SW_SITE}${SW_GFP:+ ($SW_GFP${SW_CACHE:+, $SW_CACHE}${SW_ORDER:+, order $SW_ORDER})}"
	if [[ $outcome == kernel-problem || $outcome == missed ]]; then
		for r in "${SW_REASONS[@]}"; do line+="; $r"; done
	fi
	diag "sweep: $line"
	case $outcome in
	kernel-problem) SW_SUB+=("not ok $k $SW_OPTEXT n=$n $outcome${SW_SITE:+ at $SW_SITE}") ;;
	missed) SW_SUB+=("ok $k $SW_OPTEXT n=$n # SKIP missed: ${SW_REASONS[0]:-no failure was injected}") ;;
	*) SW_SUB+=("ok $k $SW_OPTEXT n=$n $outcome${SW_SITE:+ at $SW_SITE}") ;;
	esac
	local op replay site gfp cache out order=null v reasons='' sep=''
	json_str op "$SW_OPTEXT"
	json_str replay "$(sweep_replay_cmd "$n")"
	json_opt site "$SW_SITE"
	json_opt gfp "$SW_GFP"
	json_opt cache "$SW_CACHE"
	json_str out "$outcome"
	[[ $SW_ORDER =~ ^[0-9]+$ ]] && order=$((10#$SW_ORDER))
	for r in "${SW_REASONS[@]}"; do
		json_str v "$r"
		reasons+=$sep$v sep=,
	done
	printf '{"operation":%s,"n":%d,"replay":%s,"site":%s,"gfp":%s,"order":%s,"cache":%s,"outcome":%s,"reasons":[%s]}\n' \
		"$op" "$n" "$replay" "$site" "$gfp" "$order" "$cache" "$out" "$reasons" \
		>>"$RUN_DIR/.sweep-cases.jsonl" 2>/dev/null || LOG_WRITE_FAILED=1
	now_ms now
	((now - ${SW_JSON_MS:-0} < 1000)) || sweep_json
}

# sweep_json: sweep.json from the rows so far, replaced whole (a failed
# write leaves the one before and counts as a log write failure). Findings: one per
# (operation, problem): the first reason with its numbers taken out is
# the key, so one bug reached from many call sites is one finding that
# lists them.
sweep_json() {
	[[ -s $RUN_DIR/.sweep-cases.jsonl ]] || return 0
	jq -s '{cases: ., findings: ([.[] | select(.outcome == "kernel-problem")
		| . + {key: ((.reasons[0] // "kernel problem") | gsub("[0-9]+"; "N"))}]
		| group_by([.operation, .key])
		| map({operation: .[0].operation, outcome: "kernel-problem",
			problem: (.[0].reasons[0] // "kernel problem"), key: .[0].key,
			sites: (map(.site // "-") | unique), reasons: .[0].reasons, cases: map(.n),
			replay: .[0].replay}))}' \
		"$RUN_DIR/.sweep-cases.jsonl" >"$RUN_DIR/sweep.json.tmp" 2>/dev/null &&
		mv -f "$RUN_DIR/sweep.json.tmp" "$RUN_DIR/sweep.json" || LOG_WRITE_FAILED=1
	now_ms SW_JSON_MS
}

# sweep_back: the operation's way back to the start state, then the
# checks against the baseline. 0 back, 1 a kernel problem (SW_REASONS),
# 2 the rig or a dead guest, 3 back but the guest needs a restart before
# the next case (SW_RESTART: why; not a kernel problem).
sweep_back() {
	local mark=${#STEP_DIAG[@]} bst=0 cst=0 done=$SW_DONE
	"sweep_back_$SW_OP" || bst=$?
	SW_DONE=$done
	if ((bst == 3)); then
		SW_RESTART=${STEP_DIAG[*]:mark}
		STEP_DIAG=("${STEP_DIAG[@]:0:mark}")
		return 3
	fi
	if ((bst != 0)); then
		SW_REASONS+=("cannot return to the start state: ${STEP_DIAG[*]:mark}")
		STEP_DIAG=("${STEP_DIAG[@]:0:mark}")
		return 1
	fi
	sweep_judge || cst=$?
	((cst == 1)) && SW_REASONS+=("the guest did not return to the baseline")
	return $cst
}

# sweep_retry: after a clean error, the same operation with nothing
# injected must go through (a wedged retry is a kernel problem), and back.
sweep_retry() {
	local done=$SW_DONE mark=${#STEP_DIAG[@]} st=0
	"sweep_do_$SW_OP" || st=$?
	if ((st == 0 && SW_DONE == 0)); then
		SW_REASONS+=("a retry with nothing injected failed too: ${STEP_DIAG[*]:mark}")
		st=1
	elif ((st != 0)); then
		SW_REASONS+=("a retry with nothing injected: ${STEP_DIAG[*]:mark}")
	fi
	STEP_DIAG=("${STEP_DIAG[@]:0:mark}")
	if ((st == 0)); then
		sweep_back || st=$?
	fi
	SW_DONE=$done
	return $st
}

# sweep_case N SPACE TIMES VERBOSE: one run of the operation with
# fail_hotplug armed, judged; SW_OUTCOME (kernel-problem, or empty when
# the kernel did nothing wrong). Returns 2 when the sweep cannot go on
# with this guest: it died, hangs, or did not come back to its start
# state; SW_RESTART says why when that is no kernel problem.
sweep_case() {
	local n=$1 op=$SW_OP from st=0 cst
	SW_REASONS=() SW_SITE='' SW_OUTCOME='' SW_RESTART=''
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
			SW_REASONS=("${SW_REPORTS[@]}" "${SW_REASONS[@]}")
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
	# back to the start state, and that must be the baseline again; after
	# a clean error the operation must work again with nothing injected
	cst=0
	sweep_back || cst=$?
	if ((cst == 0 && SW_DONE == 0)) && [[ $n != 0 && -z $SW_OUTCOME ]]; then
		sweep_retry || cst=$?
	fi
	((cst == 1 || cst == 2)) && SW_OUTCOME=kernel-problem
	if ((cst == 1)) && [[ -z ${STEP_RESTART_FN:-} ]]; then
		SW_REASONS+=("later cases are judged against the guest as it is now")
		sweep_rebaseline || return 2
		cst=0
	fi
	if ((cst == 1 || cst == 2)); then
		# a fresh guest for the next case, so that each case is judged
		# on its own
		sweep_triage "$from" || true
		SW_REASONS=("${SW_REPORTS[@]}" "${SW_REASONS[@]}")
		return 2
	fi
	sweep_console_sync "sweep $SW_OPTEXT n=$n end" "$from" || return 2
	sweep_triage "$from" || return 2
	if ((${#SW_REPORTS[@]})); then
		SW_OUTCOME=kernel-problem
		SW_REASONS=("${SW_REPORTS[@]}" "${SW_REASONS[@]}")
	fi
	((cst == 3)) && return 2
	return 0
}

# sweep_count: the dry run, nothing failed: SW_N, the allocations the
# operation makes (0 when the count failed).
sweep_count() {
	local st=0
	SW_N=0
	sweep_case 0 "$SWEEP_DRY_SPACE" -1 0 || st=$?
	if ((st == 2)) && [[ -n $SW_RESTART && -z $SW_OUTCOME && -n ${STEP_RESTART_FN:-} ]]; then
		"$STEP_RESTART_FN" "after the dry run: $SW_RESTART" && st=0
	fi
	if ((st)); then
		diag "sweep: $SW_OPTEXT: the dry run failed: ${SW_REASONS[*]}${SW_RESTART:+ (the guest needed a restart: $SW_RESTART)}"
		return $st
	fi
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
	local n=$1 text=$ST_TEXT
	SW_REPLAY=$RUN_DIR/replay-$SW_KEY-$ST_NAME-n$n.scenario
	[[ ${text##* } =~ ^[0-9]+(-[0-9]+)?$ ]] && text=${text% *}
	{
		echo "# replay: case $n of '$ST_TEXT' from run $RUN_ID"
		scenario_header_print
		"sweep_setup_$SW_OP"
		echo "$text $n-$n"
		"sweep_undo_$SW_OP"
	} >"$SW_REPLAY"
}

# sweep_replay_cmd N: the command that runs case N alone (0: the whole
# sweep, for what only the whole sweep shows).
sweep_replay_cmd() {
	local cmd="make run SCENARIO=$SCENARIO"
	[[ $1 == 0 ]] || cmd+=" SWEEP_CASE=$SW_KEY:$1"
	local v
	# the kernel the case ran on
	for v in KERNEL VARIANT FIXES EXTRA_PATCHES KERNEL_SRC KERNEL_IMAGE; do
		[[ -z ${!v:-} ]] || cmd+=" $v=${!v}"
	done
	printf '%s' "$cmd"
}

# sweep_findings: one diag line per distinct problem (operation, first
# reason), with the sites and cases that reach it and the command that
# replays the first; the same table in sweep-findings.txt.
sweep_findings() {
	local op sites problem cases first
	sweep_json
	[[ -s $RUN_DIR/sweep.json ]] || return 0
	while IFS=$'\t' read -r op sites problem cases; do
		[[ $op == "$SW_OPTEXT" ]] || continue
		first=${cases%%,*}
		local how
		if ((first == 0)); then
			# found over the whole sweep (memory, kmemleak, the control
			# case): only the whole sweep shows it again
			how=$(sweep_replay_cmd 0)
			diag "sweep finding: $op: $problem (over the whole sweep); replay: $how"
		else
			sweep_replay "$first"
			how="$(sweep_replay_cmd "$first"), or monitor-scripts/rig run ${SW_REPLAY#"$RIG_ROOT"/}"
			diag "sweep finding: $op: $problem (cases $cases at $sites); replay: $how"
		fi
		[[ -s $RUN_DIR/sweep-findings.txt ]] ||
			printf 'operation\tproblem\tsites\tcases\treplay\n' >"$RUN_DIR/sweep-findings.txt"
		printf '%s\t%s\t%s\t%s\t%s\n' "$op" "$problem" "$sites" "$cases" "$how" >>"$RUN_DIR/sweep-findings.txt"
	done < <(jq -r '.findings[] | [.operation, (.sites | join(",")), .problem, (.cases | map(tostring) | join(","))] | @tsv' \
		"$RUN_DIR/sweep.json")
}

# sweep_kmemleak: on a kernel with kmemleak, the operation's cases must
# not have leaked: one scan per operation (a scan takes two passes 6 s
# apart, too slow for every case), each leak a finding of the operation.
# 1 when something leaked.
sweep_kmemleak() {
	((${HAVE_KMEMLEAK:-0})) || return 0
	local st=0 leak
	kmemleak_scan "kmemleak-sweep-$SW_KEY" || st=$?
	if ((st != 0)); then
		diag "sweep: $SW_OPTEXT: the kmemleak scan failed (status $st)"
		return 0
	fi
	kmemleak_baseline || diag "sweep: $SW_OPTEXT: kmemleak baseline failed"
	((${#KMEMLEAK_LEAKS[@]})) || { diag "sweep: $SW_OPTEXT: kmemleak finds no leak"; return 0; }
	SW_SITE='' SW_GFP='' SW_ORDER='' SW_CACHE=''
	SW_REASONS=()
	for leak in "${KMEMLEAK_LEAKS[@]}"; do SW_REASONS+=("kmemleak: $leak"); done
	sweep_record 0 kernel-problem
	return 1
}
