# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Soaks: one guest boot, a scenario repeated round after round (a random one
# with a new seed per round, all recorded) until the time is up or the kernel
# misbehaves. Every CHECKPOINT rounds, with nothing plugged and caches
# dropped, the counters a leak would move are sampled; at the end a line is
# fitted to each against hot-remove cycles: counters that must come back to
# their boot value (vmemmap pages, memory blocks, MemTotal) and grow are a
# leak, a kernel problem with its rate per cycle. The logs stay bounded: the
# console, QMP and agent logs are cut at each checkpoint once they pass
# SOAK_LOG_MB, keeping the first boot, every report and the last segment.
# The soak is a drive of the run engine (run.sh): soak_setup plugs it in,
# and it owns its KTAP lines (one per round; the steps' lines go to
# soak-steps.log) and counters. Sourced by rig.

SOAK_LOG_MB=${SOAK_LOG_MB:-8}

# Counters that must return to their boot value whenever nothing is plugged.
readonly SOAK_EXACT="MemTotal blocks vmemmap_buddy_pages vmemmap_pgtable_pages vmemmap_altmap_pages"

soak_sample() { # ROUND
	local line key rss=0 now
	agent_call -t 120000 sample || return 1
	declare -gA SAMPLE=()
	for line in "${AGENT_OUT[@]}"; do
		[[ $line =~ ^([A-Za-z0-9_]+)\ ([0-9]+)$ ]] || continue
		SAMPLE[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
	done
	[[ -r /proc/$QEMU_PID/status ]] &&
		rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$QEMU_PID/status")
	SAMPLE[qemu_rss]=$rss
	if [[ ! -s $RUN_DIR/checkpoints.tsv ]]; then
		SOAK_COLS=$(printf '%s\n' "${!SAMPLE[@]}" | sort | tr '\n' ' ')
		printf 'round\tcycles\tseconds\t%s\n' "$(echo "$SOAK_COLS" | xargs | tr ' ' '\t')" >"$RUN_DIR/checkpoints.tsv"
	fi
	{
		now_ms now
		printf '%s\t%s\t%s' "$1" "$RUN_CYCLES" $(((now - RUN_T0) / 1000))
		for key in $SOAK_COLS; do printf '\t%s' "${SAMPLE[$key]:-0}"; done
		printf '\n'
	} >>"$RUN_DIR/checkpoints.tsv"
}

# soak_rotate: cut the logs that passed SOAK_LOG_MB. The console's reports
# are named into reports-N/ first; the first boot stays in console.boot.log.
soak_rotate() {
	local max=$((SOAK_LOG_MB << 20)) f size
	for f in agent.log qmp.log soak-steps.log; do
		size=$(stat -c %s "$RUN_DIR/$f" 2>/dev/null || echo 0)
		((size > max)) || continue
		mv "$RUN_DIR/$f" "$RUN_DIR/$f.1"
		log_reopen "$f"
		SOAK_LOG_BYTES=$((SOAK_LOG_BYTES + size))
	done
	size=$(stat -c %s "$RUN_DIR/console.log")
	((size > max)) || return 0
	SOAK_SEGMENT=$((SOAK_SEGMENT + 1))
	"$TRIAGE" -r "$RUN_DIR/reports-$SOAK_SEGMENT" "$RUN_DIR/console.log" >/dev/null 2>&1
	cp "$RUN_DIR/console.log" "$RUN_DIR/console.prev.log"
	# QEMU appends (append=on), so the file can be cut under it
	truncate -s 0 "$RUN_DIR/console.log"
	exec {CON_FD}<&-
	console_open
	SOAK_LOG_BYTES=$((SOAK_LOG_BYTES + size))
}

# soak_analyse: slope per cycle of every counter; a leak fails the run.
soak_analyse() {
	local tsv=$RUN_DIR/checkpoints.tsv
	[[ $(wc -l <"$tsv") -ge 3 ]] || { ktap "# too few checkpoints to fit a line"; return 0; }
	awk -F'\t' -v exact=" $SOAK_EXACT " '
	NR == 1 { for (i = 4; i <= NF; i++) name[i] = $i; n = NF; next }
	{
		k++; x = $2
		for (i = 4; i <= n; i++) {
			y = $i; sx[i] += x; sy[i] += y; sxx[i] += x * x; sxy[i] += x * y
			if (k == 1) first[i] = y
			last[i] = y
		}
	}
	END {
		for (i = 4; i <= n; i++) {
			d = k * sxx[i] - sx[i] * sx[i]
			slope = d ? (k * sxy[i] - sx[i] * sy[i]) / d : 0
			leak = index(exact, " " name[i] " ") && last[i] != first[i]
			printf "%s\t%.4f\t%s\t%s\t%d\n", name[i], slope, first[i], last[i], leak
		}
	}' "$tsv" >"$RUN_DIR/slopes.tsv"
	local name slope first last leak unit
	while IFS=$'\t' read -r name slope first last leak; do
		unit=kB
		[[ $name == vmemmap_* ]] && unit=pages
		[[ $name == blocks ]] && unit=blocks
		[[ $name == *failures || $name == *fallbacks ]] && unit=events
		ktap "# $name: $first -> $last, $slope $unit per cycle"
		((leak)) && fail "leak: $name went from $first to $last over $RUN_CYCLES cycles ($slope $unit per cycle)"
	done <"$RUN_DIR/slopes.tsv"
	return 0
}

# soak_plot: every counter's change since the first checkpoint, in KiB
# (pages and blocks converted), against cycles: a leak is a line going up.
soak_plot() {
	command -v gnuplot >/dev/null || return 0
	local tsv=$RUN_DIR/checkpoints.tsv i scale plots='' rss=''
	local -a cols first
	IFS=$'\t' read -r -a cols < <(head -1 "$tsv")
	IFS=$'\t' read -r -a first < <(sed -n 2p "$tsv")
	for ((i = 3; i < ${#cols[@]}; i++)); do
		scale=1
		case ${cols[i]} in
		qemu_rss)
			rss="'$tsv' using 2:((\$$((i + 1)) - ${first[i]}) / 1024) with linespoints title 'QEMU RSS'"
			continue ;;
		vmemmap_boot* | *failures | *fallbacks) continue ;;
		vmemmap_*) scale=4 ;;
		blocks) scale=131072 ;;
		esac
		plots+="${plots:+, }'$tsv' using 2:((\$$((i + 1)) - ${first[i]}) * $scale) with linespoints title '${cols[i]}'"
	done
	gnuplot <<-EOT >"$RUN_DIR/gnuplot.log" 2>&1
		set terminal png size 1100,800 noenhanced
		set output '$RUN_DIR/soak.png'
		set datafile separator '\t'
		set key outside right
		set multiplot layout 2,1 title "$SCENARIO soak, seed $SEED: change since the first checkpoint (a leak is a line going up)"
		set ylabel 'guest, KiB'
		plot $plots
		set xlabel 'hot-remove cycles'
		set ylabel 'host, MiB'
		plot $rss
		unset multiplot
	EOT
	[[ -s $RUN_DIR/soak.png ]] && ktap "# plot: ${RUN_DIR#"$RIG_ROOT"/}/soak.png"
}

# soak_setup SECONDS CHECKPOINT: the run drives soak rounds.
soak_setup() {
	SOAK_S=$1 SOAK_CHECKPOINT=$2
	RUN_DRIVE=soak RUN_EXTRA_S=$1
	STEP_LINE_FN=soak_step_line STEP_RECORD_FN=:
	# the accounting is measured at the checkpoints, as a rate
	CHECK_MEMMAP_EXACT=0
}

soak_step_line() {
	printf '%s\n' "$*" >>"$RUN_DIR/soak-steps.log"
}

drive_soak_done() {
	return 0
}

# The plan comes at the end: the number of rounds is not known before.
drive_soak_plan() {
	return 0
}

# A soak stopped half-way still fits and plots what it sampled.
drive_soak_abort() {
	[[ -z ${SOAK_DONE:-} && -s $RUN_DIR/checkpoints.tsv ]] || return 0
	SOAK_DONE=1
	soak_analyse
	soak_plot
}

drive_soak_run() {
	soak_loop
	SOAK_JSON=$(jq -nc --argjson rounds "${SOAK_ROUNDS:-0}" --argjson cycles "$RUN_CYCLES" \
		--argjson cycles_per_hour "${SOAK_CYCLES_H:-0}" --argjson log_mib_per_hour "${SOAK_MB_H:-0}" \
		--arg plot "$([[ -s $RUN_DIR/soak.png ]] && echo soak.png)" \
		'{rounds: $rounds, cycles: $cycles, cycles_per_hour: $cycles_per_hour,
		  log_mib_per_hour: $log_mib_per_hour, plot: $plot, checkpoints: "checkpoints.tsv",
		  slopes: "slopes.tsv"}')
}

soak_loop() {
	local round=0 base_seed=$SEED deadline=$((RUN_T0 + SOAK_S * 1000)) st steps now
	RUN_CYCLES=0 SOAK_SEGMENT=0 SOAK_LOG_BYTES=0
	cp "$RUN_DIR/console.log" "$RUN_DIR/console.boot.log"
	soak_sample 0 || { fail "cannot take the first soak checkpoint"; return; }
	while now_ms now && ((now < deadline)); do
		round=$((round + 1))
		SEED=$((base_seed + round - 1))
		scenario_load "$SC_FILE"
		steps=${#S_TEXT[@]}
		KTAP_DONE=0 PASSED=0 FAILED=0
		st=0
		run_steps
		((FAILED == 0)) || st=1
		SOAK_ROUNDS=$round
		if ((st)); then
			ktap_diag "${REASONS[@]}"
			ktap "not ok $round round $round seed $SEED ($steps steps): see soak-steps.log"
			printf '{"verb": "round", "args": "seed %s", "result": "fail"}\n' "$SEED" >>"$RUN_DIR/.steps.jsonl"
			break
		fi
		ktap "ok $round round $round seed $SEED ($steps steps, $RUN_CYCLES cycles so far)"
		printf '{"verb": "round", "args": "seed %s", "result": "ok"}\n' "$SEED" >>"$RUN_DIR/.steps.jsonl"
		if ((round % SOAK_CHECKPOINT == 0)); then
			soak_sample "$round" || { fail "soak checkpoint after round $round: the guest did not answer"; break; }
			soak_rotate
		fi
	done
	if ((KERNEL_PROBLEM == 0 && RIG_ERR == 0)) && qemu_alive; then
		soak_sample "$round" || fail "the final soak checkpoint: the guest did not answer"
	fi
	steps_reset
	ktap "1..$round"
	SOAK_DONE=1
	soak_analyse
	soak_plot
	local total=$SOAK_LOG_BYTES f secs
	for f in console.log agent.log qmp.log soak-steps.log; do
		total=$((total + $(stat -c %s "$RUN_DIR/$f" 2>/dev/null || echo 0)))
	done
	now_ms now
	secs=$(((now - RUN_T0) / 1000))
	((secs > 0)) || secs=1
	SOAK_MB_H=$((total * 3600 / secs >> 20))
	SOAK_CYCLES_H=$((RUN_CYCLES * 3600 / secs))
	ktap "# soak: $round rounds, $RUN_CYCLES hot-remove cycles in $secs s ($SOAK_CYCLES_H cycles/h), logs written $((total >> 20)) MiB ($SOAK_MB_H MiB/h)"
}
