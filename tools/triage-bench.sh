#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Throughput of tools/triage against `grep -c WARNING` on one large console log
# built from the real excerpts in tests/triage/.  Needs bash, grep, date.
# Usage: triage-bench.sh TRIAGE_BINARY DIR [MEGABYTES]   (default 200 MB)
set -euo pipefail

triage=${1:?usage: triage-bench.sh TRIAGE_BINARY DIR [MEGABYTES]}
dir=${2:?usage: triage-bench.sh TRIAGE_BINARY DIR [MEGABYTES]}
mb=${3:-200}
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

# Best of seven wall-clock runs each, the two programs taking turns so that
# both see the same machine (these hosts are shared and their speed drifts).
now_ns() { date +%s%N; }
t_triage=0
t_grep=0
cat "$log" >/dev/null	# both read from the page cache
for _ in 1 2 3 4 5 6 7; do
	t0=$(now_ns)
	"$triage" "$log" >"$dir/triage-bench.out" || true
	t1=$(now_ns)
	grep -c WARNING "$log" >"$dir/grep-bench.out" || true	# not /dev/null: grep stops early there
	t2=$(now_ns)
	if ((t_triage == 0 || t1 - t0 < t_triage)); then t_triage=$((t1 - t0)); fi
	if ((t_grep == 0 || t2 - t1 < t_grep)); then t_grep=$((t2 - t1)); fi
done
rm -f "$dir/triage-bench.out" "$dir/grep-bench.out"

rate() { echo $(((bytes * 1000 / 1048576) * 1000000 / $1)); }	# MB/s, integer
echo "triage_bench_mb: $((bytes / 1048576)) MB"
echo "triage_mb_s: $(rate "$t_triage") MB/s"
echo "grep_mb_s: $(rate "$t_grep") MB/s"
