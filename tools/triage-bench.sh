#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Throughput of tools/triage against `grep -c WARNING` on one large console log
# built from the excerpts in tests/triage/ (a log full of reports), in CPU
# time, and the time to triage 100 MB of it (a soak's console).  Needs bash, grep.
# Usage: triage-bench.sh TRIAGE_BINARY DIR [MEGABYTES]   (default 100 MB)
set -euo pipefail

triage=${1:?usage: triage-bench.sh TRIAGE_BINARY DIR [MEGABYTES]}
dir=${2:?usage: triage-bench.sh TRIAGE_BINARY DIR [MEGABYTES]}
mb=${3:-100}
golden=$(cd "$(dirname "$0")/../tests/triage" && pwd)
log=$dir/triage-bench.log

[[ -x $triage ]] || { echo "triage-bench: $triage is not executable" >&2; exit 2; }
mkdir -p "$dir"

# One round of every excerpt, then doubling copies up to the size asked for.
seed=$dir/triage-bench.seed
cat "$golden"/*.log >"$seed"
cp "$seed" "$log"
want=$((mb * 1024 * 1024))
while (($(stat -c %s "$log") * 2 <= want)); do
	cat "$log" "$log" >"$log.tmp"
	mv "$log.tmp" "$log"
done
while (($(stat -c %s "$log") < want)); do
	cat "$seed" >>"$log"
done
rm -f "$seed"
bytes=$(stat -c %s "$log")

# Best of seven runs each, by CPU time (user + system: these hosts are
# shared, and wall-clock time mostly measures the neighbours), the two
# programs taking turns so that both see the same machine.
TIMEFORMAT='%3U %3S'
cpu_ms() {	# cpu_ms FILE: the "user sys" seconds bash's time wrote, in ms
	local u s
	read -r u s <"$1"
	echo $((10#${u/./} + 10#${s/./}))
}
t_triage=0
t_grep=0
cat "$log" >/dev/null	# both read from the page cache
for _ in 1 2 3 4 5 6 7; do
	{ time "$triage" "$log" >"$dir/triage-bench.out" || true; } 2>"$dir/triage-bench.time"
	# not /dev/null: grep stops early there
	{ time grep -c WARNING "$log" >"$dir/grep-bench.out" || true; } 2>"$dir/grep-bench.time"
	a=$(cpu_ms "$dir/triage-bench.time")
	b=$(cpu_ms "$dir/grep-bench.time")
	if ((t_triage == 0 || a < t_triage)); then t_triage=$a; fi
	if ((t_grep == 0 || b < t_grep)); then t_grep=$b; fi
done
rm -f "$log" "$dir"/triage-bench.out "$dir"/grep-bench.out "$dir"/triage-bench.time \
	"$dir"/grep-bench.time
((t_triage > 0 && t_grep > 0)) || { echo "triage-bench: too fast to time; use more MB" >&2; exit 2; }

rate() { echo $((bytes * 1000 / 1048576 / $1)); }	# MB per CPU second, integer
echo "triage_bench_mb: $((bytes / 1048576)) MB"
echo "triage_mb_s: $(rate "$t_triage") MB/s"
echo "grep_mb_s: $(rate "$t_grep") MB/s"
echo "triage_cpu_ms: $t_triage ms"
# CPU seconds for 100 MB of this console, whatever size was asked for
t100=$((t_triage * 100 * 1048576 / bytes))
echo "triage_100mb_s: $((t100 / 1000)).$(printf %03d $((t100 % 1000))) s"
echo "grep_cpu_ms: $t_grep ms"
echo "triage_grep_cpu_ratio: $((t_triage * 100 / t_grep / 100)).$(printf %02d $((t_triage * 100 / t_grep % 100))) x"
