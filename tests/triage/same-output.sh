#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Do two builds of tools/triage say the same?  Runs both on every golden log and
# on COUNT logs made from them (cut, glued, shuffled, re-prefixed as journal,
# kern.log, printk.time=0, levels, caller ids, CRLF or CR ends, with systemd's
# text spliced in) and compares stdout, exit code, -j, -r and -f.  For changes
# meant to leave the output alone (speed).  Needs bash, awk, cmp, diff.
# Usage: same-output.sh OLD_TRIAGE NEW_TRIAGE [COUNT [SEED]]   (3600, 1)
set -euo pipefail

old=${1:?usage: same-output.sh OLD_TRIAGE NEW_TRIAGE [COUNT [SEED]]}
new=${2:?usage: same-output.sh OLD_TRIAGE NEW_TRIAGE [COUNT [SEED]]}
count=${3:-3600}
seed=${4:-1}
here=$(cd "$(dirname "$0")" && pwd)
for b in "$old" "$new"; do
	[[ -x $b ]] || { echo "same-output: $b is not executable" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/gen"

# One awk run writes every generated log: COUNT of them, each from one to
# three goldens glued, then changed at random (the seed makes them again).
awk -v count="$count" -v seed="$seed" -v dir="$work/gen" '
FNR == 1 { nf++ }
{ sub(/\r$/, ""); line[nf, ++nl[nf]] = $0 }
function pick(n) { return int(rand() * n) + 1 }
function status() {
	return rand() < 0.5 ? "[  OK  ] Started " svc[pick(4)] "." \
			    : "         Starting " svc[pick(4)] "..."
}
# the message of a stamped line, or "" when it has none
function msg(s) {
	return match(s, /^\[ *[0-9]+\.[0-9]+\] /) ? substr(s, RLENGTH + 1) : ""
}
function stamp(s) {
	return match(s, /^\[ *[0-9]+\.[0-9]+\]/) ? substr(s, 2, RLENGTH - 2) : ""
}
function reprefix(s, how,   m, t) {
	m = msg(s)
	if (m == "" && s !~ /^\[ *[0-9]+\.[0-9]+\] ?$/)
		return s
	t = stamp(s)
	if (how == 1)
		return m
	if (how == 2)
		return "Dec 05 12:07:13 hotplug-guest kernel: " m
	if (how == 3)
		return "[" t "] hotplug-guest kernel: " m
	if (how == 4)
		return "<4>" s
	if (how == 5)
		return "[" t "][  T" pick(300) "] " m
	if (how == 6)
		return "2026-12-05T12:07:13.123456+00:00 hotplug-guest kernel: " m
	return s
}
BEGIN {
	srand(seed)
	svc[1] = "Journal Service"; svc[2] = "Load Kernel Modules"
	svc[3] = "Network Time Synchronization"; svc[4] = "Load/Save Random Seed"
}
END {
	for (g = 1; g <= count; g++) {
		n = 0
		parts = pick(3)
		for (p = 0; p < parts; p++) {
			f = pick(nf)
			for (i = 1; i <= nl[f]; i++)
				out[++n] = line[f, i]
		}
		r = rand()
		if (r < 0.3) {		# cut at a line, maybe inside it
			n = pick(n)
			if (rand() < 0.5)
				out[n] = substr(out[n], 1, pick(length(out[n]) + 1) - 1)
		} else if (r < 0.45) {	# lines swapped
			for (k = pick(6); k > 0; k--) {
				a = pick(n); b = pick(n); t = out[a]; out[a] = out[b]; out[b] = t
			}
		} else if (r < 0.55) {	# lines dropped
			for (k = pick(8); k > 0 && n > 1; k--) {
				a = pick(n)
				for (i = a; i < n; i++)
					out[i] = out[i + 1]
				n--
			}
		}
		if (rand() < 0.3) {	# systemd text spliced in: alone, before, or cutting a line
			for (k = pick(4); k > 0; k--) {
				a = pick(n); s = status(); r = rand()
				if (r < 0.4) {
					for (i = n; i >= a; i--)
						out[i + 1] = out[i]
					out[a] = s; n++
				} else if (r < 0.7) {
					out[a] = s out[a]
				} else {
					c = pick(length(out[a]) + 1) - 1
					for (i = n; i > a; i--)
						out[i + 1] = out[i]
					out[a + 1] = substr(out[a], c + 1)
					out[a] = substr(out[a], 1, c) s; n++
				}
			}
		}
		how = rand() < 0.6 ? 0 : pick(6)
		r = rand()
		eol = r < 0.8 ? "\n" : r < 0.93 ? "\r\n" : "\r"
		file = sprintf("%s/g%05d.log", dir, g)
		for (i = 1; i <= n; i++)
			printf "%s%s", reprefix(out[i], how), eol > file
		close(file)
	}
}' "$here"/*.log

# run OUT BINARY LOG: everything the binary says about LOG, in OUT/
run() {
	local out=$1 bin=$2 log=$3 rc=0 size
	mkdir -p "$out"
	"$bin" -r "$out/rep" -j "$out/j.json" "$log" >"$out/stdout" 2>&1 || rc=$?
	echo "exit $rc" >>"$out/stdout"
	rc=0
	"$bin" "$log" >"$out/plain" 2>&1 || rc=$?
	echo "exit $rc" >>"$out/plain"
	size=$(stat -c %s "$log")
	rc=0
	"$bin" -f $((size / 3)) "$log" >"$out/from" 2>&1 || rc=$?
	echo "exit $rc" >>"$out/from"
}

n=0
bad=0
for log in "$here"/*.log "$work"/gen/*.log; do
	n=$((n + 1))
	rm -rf "$work/a" "$work/b"
	run "$work/a" "$old" "$log"
	run "$work/b" "$new" "$log"
	if ! diff -r "$work/a" "$work/b" >"$work/diff" 2>&1; then
		bad=$((bad + 1))
		echo "differs: $log"
		head -20 "$work/diff" | sed 's/^/  /'
		if [[ $log == "$work"/gen/* ]]; then
			mkdir -p "${TMPDIR:-/tmp}/same-output"
			cp "$log" "${TMPDIR:-/tmp}/same-output/"
		fi
	fi
done
echo "same-output: $n logs ($count generated, seed $seed), $bad differ"
((bad == 0))
