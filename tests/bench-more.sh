# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# make bench, continued: the sweep's cost per case and its restore, and soak
# throughput with one guest and with two at once. Sourced by tests/bench
# (figure, median, $OUT, $RIG, $ROOT come from there).

# restarts RUN_DIR: the milliseconds of each guest restart of a run, from
# the agent log ("! restart N: why" to the new boot's READY), one a line.
restarts() {
	awk '$2 == "!" && $3 == "restart" { t = $1 }
		t && $2 == "<" && $3 == "READY" { print int(($1 - t) * 1000); t = 0 }' "$1/agent.log"
}

# bench_sweep: the sweep slice; sweep_case_ms is the time of its sweep
# steps without their restarts over the cases judged (the dry runs and
# control cases counted in the time); restore_ms the median restart to the
# agent's READY from the snapshot of the ready guest (the default), beside
# restore_boot_ms, the same slice's restarts with RESTORE=boot (a fresh
# boot each), and sweep_slice_s, sweep_slice_boot_s, the two whole runs.
bench_sweep() {
	local dir sweep_ms cases restart_ms t0
	t0=$(ms_now)
	"$RIG" run tests/scenarios/sweep-slice "$@" >"$OUT/sweep.ktap" 2>"$OUT/sweep.err" ||
		{ echo "bench: the sweep slice did not pass" >&2; exit 2; }
	figure sweep_slice_s $((($(ms_now) - t0) / 1000)) s
	dir=$ROOT/logs/$(jq -r .run_id "$ROOT/logs/latest/summary.json")
	sweep_ms=$(jq '[.steps as $s | .timings.step_ms | to_entries[] | select($s[.key].verb == "sweep") | .value] | add' \
		"$dir/summary.json")
	cases=$(jq '.cases | length' "$dir/sweep.json")
	restart_ms=$(restarts "$dir" | awk '{ t += $1 } END { print t + 0 }')
	figure sweep_case_ms $(((sweep_ms - restart_ms) / cases)) ms
	figure sweep_restarts "$(restarts "$dir" | wc -l)" count
	[[ -n $(restarts "$dir") ]] && figure restore_ms "$(restarts "$dir" | median)" ms
	t0=$(ms_now)
	"$RIG" run tests/scenarios/sweep-slice "$@" RESTORE=boot >"$OUT/sweep-boot.ktap" 2>"$OUT/sweep-boot.err" ||
		{ echo "bench: the sweep slice (RESTORE=boot) did not pass" >&2; exit 2; }
	figure sweep_slice_boot_s $((($(ms_now) - t0) / 1000)) s
	dir=$ROOT/logs/$(jq -r .run_id "$ROOT/logs/latest/summary.json")
	[[ -n $(restarts "$dir") ]] && figure restore_boot_ms "$(restarts "$dir" | median)" ms
	return 0
}

# bench_soak SECONDS: soak_cycles_per_hour of one guest; the same with two
# guests at once, summed, over one (soak_par2_speedup); QEMU's RSS growth
# per cycle between the first and the last checkpoint of the single soak.
bench_soak() {
	local s=$1 one two=0 d i
	"$RIG" soak smoke "DURATION=${s}s" CHECKPOINT=2 "${@:2}" >"$OUT/soak1.ktap" 2>"$OUT/soak1.err" ||
		{ echo "bench: the soak did not pass" >&2; exit 2; }
	d=$ROOT/logs/$(jq -r .run_id "$ROOT/logs/latest/summary.json")
	one=$(jq '.soak.cycles_per_hour' "$d/summary.json")
	figure soak_cycles_per_hour "$one" cycles/h
	# QEMU's RSS: what the first checkpoint's cycles added (the first
	# hot-add's structures, the translation of the hotplug code), and the
	# growth per cycle after it (a leak grows on; warm-up does not)
	figure qemu_rss_warmup_kb "$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		NR == 2 { r0 = $c["qemu_rss"] } NR == 3 { w = $c["qemu_rss"] - r0 }
		END { print w + 0 }' "$d/checkpoints.tsv")" kB
	figure qemu_rss_kb_per_cycle "$(awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		NR == 3 { r0 = $c["qemu_rss"]; n0 = $c["cycles"] }
		NR >= 3 { r = $c["qemu_rss"]; n = $c["cycles"] }
		END { printf "%.1f", (n > n0) ? (r - r0) / (n - n0) : 0 }' "$d/checkpoints.tsv")" kB
	# as make matrix PAR=2 runs them: each knows it shares the host
	for i in 1 2; do
		RIG_GUESTS=2 "$RIG" soak smoke "DURATION=${s}s" CHECKPOINT=2 "${@:2}" \
			>"$OUT/soak-par$i.ktap" 2>"$OUT/soak-par$i.err" &
	done
	wait
	for i in 1 2; do
		d=$ROOT/$(grep -o '^# logs .*' "$OUT/soak-par$i.ktap" | cut -d' ' -f3)
		two=$((two + $(jq '.soak.cycles_per_hour // 0' "$d/summary.json")))
	done
	figure soak_par2_speedup "$(awk -v a="$two" -v b="$one" 'BEGIN { printf "%.2f", b ? a / b : 0 }')" x
}
