# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# sweep OP NAME ARGS... [CASES]: fail the 1st, 2nd, ... Nth slab or page
# allocation of one memory hotplug operation, one failure per case,
# through the series' fail_hotplug (scoped to the operation in whichever
# task runs it). A dry run counts N first; CASES is MAX (the first MAX
# cases) or FIRST-LAST. Each case (sweep-case.sh) is judged survived,
# clean-error, kernel-problem or missed. A case that leaves the guest
# unusable gets the guest restarted (the engine's STEP_RESTART_FN) and the
# sweep goes on with the next. The operations are in sweep-ops.sh.
# SWEEP_CASE=OP:N runs case N of the sweeps of OP alone; SWEEP_SHARD=I/N
# runs the cases whose number is I modulo N (the I-th of N shards, for
# make sweep SHARD= across hosts or CI jobs; make merge folds them). Sourced
# by rig.

verb_define sweep 'plug NAME SIZE node=N | unplug NAME | online NAME movable|kernel | offline NAME | resize NAME SIZE  [CASES]' '' \
	'fail each allocation of one hotplug operation once (fail_hotplug), judge every case'

# How many times one sweep may restart the guest before it gives up.
SWEEP_MAX_RESTARTS=${SWEEP_MAX_RESTARTS:-100}
# MemFree may drop and Slab grow by this much over a whole sweep (after
# its control case, caches dropped) before it counts as memory lost.
SWEEP_BAND_KB=${SWEEP_BAND_KB:-4096}
# A case that finds fewer allocations than n, this close to the dry run's
# count, is the sweep's end (the count varies between runs by about this).
SWEEP_END_SLACK=${SWEEP_END_SLACK:-8}

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
		;;
	unplug | offline)
		(($# == 1 || $# == 2)) || sc_die "usage: sweep $op NAME [CASES]"
		cases=${2:-}
		parse_name "sweep $op" "$1"
		P_NAME=$1
		;;
	online)
		(($# == 2 || $# == 3)) || sc_die "usage: sweep online NAME movable|kernel [CASES]"
		[[ $2 == movable || $2 == kernel ]] || sc_die "sweep online $1: zone '$2' (movable, kernel)"
		cases=${3:-}
		parse_name "sweep online" "$1"
		P_NAME=$1 op="online $2"
		;;
	resize)
		(($# == 2 || $# == 3)) || sc_die "usage: sweep resize NAME SIZE [CASES]"
		cases=${3:-}
		parse_resize "$1" "$2"
		;;
	*) sc_die "sweep: unknown operation '$op' (plug, unplug, online, offline, resize)" ;;
	esac
	P_ARGS=$op
	if [[ -n $cases ]]; then
		local first last
		dec first "${cases%-*}" 1000000 && ((first > 0)) &&
			{ [[ $cases != *-* ]] || { dec last "${cases#*-}" 1000000 && ((first <= last)); }; } ||
			sc_die "sweep ${op%% *}: '$cases' is not MAX or FIRST-LAST (cases from 1 to 1000000)"
		P_ARGS+=" $first${last:+-$last}"
	fi
}

# The step leaves the device as it found it: each case ends where it began.
predict_sweep() {
	local name=$P_NAME op=${P_ARGS%% *}
	case $op in
	plug)
		predict_plug
		model_dimm_unplug "$name"
		;;
	unplug | online)
		[[ ${MD_STATE[$name]:-} == offline ]] || sc_die "sweep $op $name: $name must be plugged and offline"
		;;
	offline)
		[[ ${MD_STATE[$name]:-} == online ]] || sc_die "sweep offline $name: $name must be online"
		;;
	resize)
		[[ ${MD_VSIZE[$name]:-0} != "$P_BYTES" ]] ||
			sc_die "sweep resize $name: $name has $(vmem_human "$P_BYTES") already (the sweep changes its size)"
		;;
	esac
}

print_sweep() {
	local -a w
	read -ra w <<<"$P_ARGS"
	case ${w[0]} in
	plug) P_TEXT="sweep plug $P_NAME $(human "$P_BYTES") node=$P_NODE${w[1]:+ ${w[1]}}" ;;
	resize) P_TEXT="sweep resize $P_NAME $(vmem_human "$P_BYTES")${w[1]:+ ${w[1]}}" ;;
	*) P_TEXT="sweep ${w[0]} $P_NAME${w[1]:+ ${w[*]:1}}" ;;
	esac
}

# sweep_key: SW_KEY, the operation's name in SWEEP_CASE (plug, unplug,
# online-movable, online-kernel, offline, resize).
sweep_key() {
	SW_KEY=$SW_OP${SW_ZONE:+-$SW_ZONE}
}

# sweep_case_range FIRST LAST: SW_RANGE "FIRST LAST" after SWEEP_CASE;
# empty when SWEEP_CASE names another operation.
sweep_case_range() {
	SW_RANGE="$1 $2"
	[[ -n ${SWEEP_CASE:-} ]] || return 0
	local op=${SWEEP_CASE%:*} n=${SWEEP_CASE##*:}
	if [[ $op == "$SW_KEY" || ($op == online && $SW_KEY == online-*) ]]; then
		SW_RANGE="$n $n"
	else
		SW_RANGE=''
	fi
}

# sweep_in_shard N: case N is this run's under SWEEP_SHARD (a replay of
# one case, SWEEP_CASE, runs it whatever the shard).
sweep_in_shard() {
	[[ -n ${SWEEP_SHARD:-} && -z ${SWEEP_CASE:-} ]] || return 0
	local i=${SWEEP_SHARD%/*} of=${SWEEP_SHARD#*/}
	(((($1 - 1) % of) == i - 1))
}

# sweep_outcome N: a case that the kernel did not misbehave in is
# survived, clean-error or missed.
sweep_outcome() {
	[[ -z $SW_OUTCOME ]] || return 0
	local made
	if [[ $SW_TIMES == 1 && $SW_SPACE =~ ^[0-9]+$ ]] && ((SW_SPACE > 0)); then
		made=$(($1 - SW_SPACE))
		if ((made >= SW_N - SWEEP_END_SLACK)); then
			# fewer than n allocations, but about the dry run's count
			# (it varies by a few between runs): the sweep's end
			SW_OUTCOME=end
			SW_REASONS=("the operation made $made allocations this time, fewer than $1: the sweep ends here")
		else
			# far fewer: the guest's state took the operation another
			# way (what an earlier case allocated and kept)
			SW_OUTCOME=missed
			SW_REASONS=("the operation made $made allocations this time (the dry run $SW_N): nothing failed" "${SW_REASONS[@]}")
		fi
	elif [[ $SW_TIMES == 1 ]]; then
		SW_OUTCOME=missed
		SW_REASONS=("times is still 1 but space went to $SW_SPACE: no failure was injected" "${SW_REASONS[@]}")
	elif ((SW_INJECTED == 0)); then
		SW_OUTCOME=missed
		SW_REASONS=("times went to $SW_TIMES but the console has no fail_hotplug stack" "${SW_REASONS[@]}")
	elif ((SW_DONE)); then
		SW_OUTCOME=survived
	else
		SW_OUTCOME=clean-error
	fi
}

# sweep_memory KEY: MemFree and Slab (caches dropped) into SW_MEM_KEY_*.
sweep_memory() {
	local line
	agent_call -t 120000 sample
	agent_failed $? "sweep: meminfo sample" || return
	for line in "${AGENT_OUT[@]}"; do
		case $line in
		"MemFree "*) printf -v "SW_MEM_$1_FREE" '%s' "${line#MemFree }" ;;
		"Slab "*) printf -v "SW_MEM_$1_SLAB" '%s' "${line#Slab }" ;;
		esac
	done
}

# sweep_band: after the control case, memory lost over the sweep beyond
# SWEEP_BAND_KB is a kernel problem. 0 within the band, 1 beyond.
sweep_band() {
	sweep_memory after || return 2
	local free=$((SW_MEM_before_FREE - SW_MEM_after_FREE)) slab=$((SW_MEM_after_SLAB - SW_MEM_before_SLAB))
	diag "sweep: $SW_OPTEXT: over the sweep MemFree fell by $free kB and Slab grew by $slab kB (band $SWEEP_BAND_KB kB)"
	if ((free > SWEEP_BAND_KB || slab > SWEEP_BAND_KB)); then
		SW_REASONS=("memory lost over the sweep: MemFree fell by $free kB, Slab grew by $slab kB (band $SWEEP_BAND_KB kB)")
		SW_SITE='' SW_GFP='' SW_ORDER='' SW_CACHE=''
		sweep_record 0 kernel-problem
		return 1
	fi
	return 0
}

run_sweep() {
	local -a w
	local first=1 last n st=0 cst=0 t0 now restarts=0 k fresh=0
	read -ra w <<<"$ST_ARGS"
	SW_OP=${w[0]} SW_ZONE=''
	[[ $SW_OP == online ]] && SW_ZONE=${w[1]}
	sweep_key
	SW_OPTEXT="$SW_OP $ST_NAME"
	[[ $SW_OP == plug ]] && SW_OPTEXT+=" $(human "$ST_BYTES") node=$ST_NODE"
	[[ $SW_OP == resize ]] && SW_OPTEXT+=" $(vmem_human "${MD_VSIZE[$ST_NAME]}")->$(vmem_human "$ST_BYTES")"
	[[ -n $SW_ZONE ]] && SW_OPTEXT+=" $SW_ZONE"
	SW_SUB=() SW_DONE=0 SW_FIRST=1
	sweep_case_range 1 1
	if [[ -z $SW_RANGE ]]; then
		diag "sweep: $SW_OPTEXT skipped: SWEEP_CASE=$SWEEP_CASE names another operation"
		return 0
	fi
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
	sweep_case_range "$first" "$last"
	read -r first last <<<"$SW_RANGE"
	SW_FIRST=$first
	# cases past what the dry run counted would only miss; a replay
	# (SWEEP_CASE) runs its case whatever the count
	local past=$last
	[[ -z ${SWEEP_CASE:-} ]] && ((last > SW_N)) && last=$SW_N
	if ((last < first)); then
		diag "sweep: $SW_OPTEXT makes $SW_N allocations (dry run): no case from $first on to run"
		STEP_SUB=("KTAP version 1" "1..$((past - first + 1))")
		for ((k = first; k <= past; k++)); do
			STEP_SUB+=("ok $((k - first + 1)) $SW_OPTEXT n=$k # SKIP the operation made $SW_N allocations here")
		done
		return 0
	fi
	diag "sweep: $SW_OPTEXT makes $SW_N allocations (dry run); cases $first to $last"
	sweep_memory before || return
	local -A tally=()
	local ended=0 retried=0
	for ((n = first; n <= last; n++)); do
		if ! sweep_in_shard "$n"; then
			SW_SUB+=("ok $((n - first + 1)) $SW_OPTEXT n=$n # SKIP another shard's (SWEEP_SHARD=$SWEEP_SHARD)")
			continue
		fi
		cst=0
		sweep_case "$n" "$n" 1 2 || cst=$?
		sweep_outcome "$n"
		# a case that missed because of what earlier cases left behind
		# gets one more try on a fresh guest
		if [[ $SW_OUTCOME == missed ]] && ((!retried && restarts < SWEEP_MAX_RESTARTS)) &&
			[[ -n ${STEP_RESTART_FN:-} ]] && "$STEP_RESTART_FN" "case $n missed: ${SW_REASONS[0]}"; then
			restarts=$((restarts + 1)) retried=1 n=$((n - 1))
			continue
		fi
		retried=0
		if [[ $SW_OUTCOME == end ]]; then
			diag "sweep: $SW_OPTEXT n=$n: ${SW_REASONS[0]}"
			for ((k = n; k <= last; k++)); do
				SW_SUB+=("ok $((k - first + 1)) $SW_OPTEXT n=$k # SKIP past the end: ${SW_REASONS[0]}")
			done
			ended=1
		else
			sweep_record "$n" "$SW_OUTCOME"
			tally[$SW_OUTCOME]=$((${tally[$SW_OUTCOME]:-0} + 1))
			[[ $SW_OUTCOME == kernel-problem ]] && st=1
		fi
		if ((cst == 2)); then
			# The guest is gone or wedged: a fresh one, and on with the
			# next case (after the last, with the control case).
			if ((restarts < SWEEP_MAX_RESTARTS)) && [[ -n ${STEP_RESTART_FN:-} ]] &&
				"$STEP_RESTART_FN" "after case $n: ${SW_RESTART:-the guest could not go on}"; then
				restarts=$((restarts + 1))
				cst=0
			elif ((!ended)); then
				((n < last)) && diag "sweep: the guest cannot go on after case $n; cases $((n + 1)) to $last not run"
				for ((k = n + 1; k <= last; k++)); do
					SW_SUB+=("ok $((k - first + 1)) $SW_OPTEXT n=$k # SKIP not run: the guest could not go on")
				done
				break
			fi
		fi
		((ended)) && break
	done
	STEP_SUB=("KTAP version 1" "1..$((last - first + 1))" "${SW_SUB[@]}")
	# after the last case the same memory must cycle with nothing armed,
	# and the sweep must not have cost memory
	if ((cst != 2)); then
		sweep_case control "$SWEEP_DRY_SPACE" 0 0 || cst=$?
		# a guest that needs a restart only to be clean gets one: the
		# steps after the sweep start from where it started
		if [[ $cst == 2 && -n $SW_RESTART && $SW_OUTCOME != kernel-problem && -n ${STEP_RESTART_FN:-} ]] &&
			"$STEP_RESTART_FN" "after the control case: $SW_RESTART"; then
			cst=0 fresh=1
		fi
		if [[ $SW_OUTCOME == kernel-problem || $SW_DONE == 0 ]]; then
			SW_REASONS=("the operation fails with nothing injected after the sweep" "${SW_REASONS[@]}")
			sweep_record 0 kernel-problem
			st=1
		fi
		# (a restarted guest has nothing to compare with)
		if ((cst != 2 && restarts == 0 && fresh == 0)); then
			sweep_band || { (($? == 1)) && st=1; }
		fi
		((cst != 2)) && { sweep_kmemleak || st=1; }
	fi
	now_ms now
	diag "sweep: $SW_OPTEXT: N=$SW_N, survived ${tally[survived]:-0}, clean-error ${tally[clean-error]:-0}, kernel-problem ${tally[kernel-problem]:-0}, missed ${tally[missed]:-0}, guest restarts $restarts, $(((now - t0) / 1000)) s"
	sweep_findings
	# every case was triaged on its own: the step's console check has
	# nothing left to add
	console_scan
	CON_SUSPECT=0
	if ((st)); then
		STEP_DIAG=("sweep $SW_OPTEXT: ${tally[kernel-problem]:-1} cases found kernel problems (sweep.json, sweep-findings.txt)" "${STEP_DIAG[@]}")
		# the guest is back where the sweep found it: the run goes on
		((cst != 2)) && STEP_GOES_ON=1
		return 1
	fi
	((cst == 2)) && return 2
	return 0
}

# sweep_case_known: the loaded scenario has a sweep that SWEEP_CASE names.
sweep_case_known() {
	local i op key
	for i in "${!S_VERB[@]}"; do
		[[ ${S_VERB[i]} == sweep ]] || continue
		read -r op key _ <<<"${S_ARGS[i]}"
		[[ $op == online ]] && op+=-$key
		[[ ${SWEEP_CASE%:*} == "$op" || (${SWEEP_CASE%:*} == online && $op == online-*) ]] && return 0
	done
	return 1
}
