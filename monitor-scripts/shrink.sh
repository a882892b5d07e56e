# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shrinking a failed random run: the steps up to the first failure are cut
# down (delta debugging: drop halves, then quarters, ...) to a short list
# that still fails the same way, and written as a scenario file the user can
# run again. Every candidate is a real run in its own folder under the
# failed run's; candidates the model rejects cost no boot. Sourced by rig.

SHRINK_RUNS=${SHRINK_RUNS:-30}

# shrink_signature: what "the same failure" means: the first unexplained
# report title, else the first failing step's reason without its step number.
shrink_signature() {
	local r
	r=$(jq -r '[.reports[]? | select(.unexplained) | .title][0] // empty' "$1")
	if [[ -z $r ]]; then
		r=$(jq -r '.reasons[0] // empty' "$1")
		r=${r#step * (*): }
	fi
	printf '%s' "$r"
}

# shrink_write FILE STEP...: a scenario with this run's header and STEPS.
shrink_write() {
	local f=$1
	shift
	{
		echo "# SPDX-License-Identifier: GPL-2.0"
		echo "# shrunk: $# steps of $SCENARIO seed $SEED that still fail the same way"
		scenario_header_print
		printf '%s\n' "$@"
	} >"$f"
}

# shrink_try STEP...: 0 when these steps fail with the signature.
shrink_try() {
	local cand=$SHRINK_DIR/candidate-$SHRINK_N st=0 sum
	SHRINK_N=$((SHRINK_N + 1))
	shrink_write "$cand" "$@"
	# the run's own variables, so the candidate boots the same kernel
	RIG_LOGS=$SHRINK_DIR RIG_QUIET=1 "$RIG_ROOT/monitor-scripts/rig" run "$cand" \
		"${RUN_ARGV[@]}" SEED="$SEED" >/dev/null 2>&1 || st=$?
	# 2: the model rejected the list (no boot, so it costs no run), or the
	# rig failed: not the same failure either way
	[[ -s $SHRINK_DIR/latest/qemu.cmdline && $(readlink "$SHRINK_DIR/latest") == *-candidate-$((SHRINK_N - 1))* ]] &&
		SHRINK_BOOTS=$((SHRINK_BOOTS + 1))
	((st == 1)) || return 1
	sum=$SHRINK_DIR/latest/summary.json
	[[ $(shrink_signature "$sum") == "$SHRINK_SIG" ]]
}

shrink_run() {
	local -a steps=() cand
	local n=0 verb args result chunk start len
	SHRINK_SIG=$(shrink_signature "$RUN_DIR/summary.json")
	[[ -n $SHRINK_SIG ]] || return 0
	while IFS=$'\t' read -r verb args result; do
		steps+=("$verb${args:+ $args}")
		[[ $result == fail ]] && break
	done < <(jq -r '.steps[] | [.verb, .args, .result] | @tsv' "$RUN_DIR/summary.json")
	SHRINK_DIR=$RUN_DIR/shrink SHRINK_N=0 SHRINK_BOOTS=0
	mkdir -p "$SHRINK_DIR"
	say "shrinking ${#steps[@]} steps that end in: $SHRINK_SIG (up to $SHRINK_RUNS runs)"
	chunk=$(((${#steps[@]} + 1) / 2))
	local progress
	while ((chunk >= 1 && SHRINK_BOOTS < SHRINK_RUNS && n < 10 * SHRINK_RUNS)); do
		start=0 progress=0
		while ((start < ${#steps[@]} && SHRINK_BOOTS < SHRINK_RUNS && n < 10 * SHRINK_RUNS)); do
			len=${#steps[@]}
			cand=("${steps[@]:0:start}" "${steps[@]:start+chunk}")
			if ((${#cand[@]} > 0 && ${#cand[@]} < len)); then
				n=$((n + 1))
				if shrink_try "${cand[@]}"; then
					steps=("${cand[@]}")
					progress=1
					continue
				fi
			fi
			start=$((start + chunk))
		done
		# single steps again until a pass drops none
		((chunk == 1 && progress)) || chunk=$((chunk / 2))
	done
	shrink_write "$RUN_DIR/shrunk.scenario" "${steps[@]}"
	rm -rf "$SHRINK_DIR/candidate-"*
	ktap "# shrunk to ${#steps[@]} steps in $n tries ($SHRINK_BOOTS boots): make run SCENARIO=${RUN_DIR#"$RIG_ROOT"/}/shrunk.scenario SEED=$SEED"
	say "shrunk to ${#steps[@]} steps: ${RUN_DIR#"$RIG_ROOT"/}/shrunk.scenario"
}
