#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Golden tests for tools/triage: every NAME.log here is a real console excerpt and
# NAME.expected its hand-written titles.  Usage: run.sh TRIAGE_BINARY; prints KTAP.
#
# NAME.expected: "# " comment lines (what the log is, how it was provoked), an
# optional "# exit: N" (default 1 when titles are listed, 0 when none), and the
# exact stdout expected, "COUNT<TAB>TITLE" per line.
set -euo pipefail

triage=${1:?usage: run.sh TRIAGE_BINARY}
here=$(cd "$(dirname "$0")" && pwd)
[[ -x $triage ]] || { echo "run.sh: $triage is not executable" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

checks=(stdin_same_as_file from_byte_skips_earlier_reports from_byte_keeps_marker_state
	reports_dir_and_json truncated_report_is_corrupted report_file_has_trace_and_step
	missing_file_exits_2 bad_option_exits_2 headers_regex_matches_every_report
	reboot_cut_report_is_corrupted titles_hold_no_addresses_or_ids
	injected_failures_listed_by_site unconfirmed_arm_fault_starts_nothing
	mapped_file_same_as_pipe)
goldens=("$here"/*.expected)
n=0
failed=0

# result NAME STATUS [DIAGNOSTIC_FILE]
result() {
	local name=$1 status=$2 diag=${3:-}
	n=$((n + 1))
	if ((status == 0)); then
		echo "ok $n $name"
		return
	fi
	failed=$((failed + 1))
	echo "not ok $n $name"
	if [[ -n $diag && -s $diag ]]; then
		sed 's/^/# /' "$diag"
	fi
}

# check NAME FUNCTION: one result from a test function's status
check() {
	if "$2" >"$work/diag" 2>&1; then
		result "$1" 0
	else
		result "$1" 1 "$work/diag"
	fi
}

golden() {
	local exp=$1 log=${1%.expected}.log name
	local want_exit="" got_exit
	name=$(basename "${exp%.expected}")
	want_exit=$(sed -n 's/^# exit: //p' "$exp")
	grep -v '^# ' "$exp" >"$work/want" || true
	if [[ -z $want_exit ]]; then
		if [[ -s $work/want ]]; then want_exit=1; else want_exit=0; fi
	fi
	got_exit=0
	"$triage" "$log" >"$work/got" 2>"$work/err" || got_exit=$?
	{
		diff -u "$work/want" "$work/got" | sed 1,2d || true
		[[ $got_exit == "$want_exit" ]] || echo "exit $got_exit, want $want_exit"
		cat "$work/err"
	} >"$work/diag"
	if [[ -s $work/diag ]]; then
		result "$name" 1 "$work/diag"
	else
		result "$name" 0
	fi
}

# offset of the first line of LOG matching PATTERN
line_offset() {
	grep -b -m1 -- "$2" "$1" | cut -d: -f1
}

t_stdin() {
	local rc=0 log=$here/warning.log
	"$triage" - <"$log" >"$work/stdin.out" || rc=$?
	"$triage" "$log" >"$work/file.out" || true
	cmp "$work/stdin.out" "$work/file.out" && ((rc == 1))
}

# -f: a report before the offset is not counted...
t_from_past() {
	local rc=0 out off
	off=$(line_offset "$here/warning.log" 'rig: step 1 end')
	out=$("$triage" -f "$off" "$here/warning.log") || rc=$?
	echo "rc=$rc out=$out"
	[[ -z $out ]] && ((rc == 0))
}

# ...while markers before it still set the state of one after it.
t_from_state() {
	local rc=0 out off log=$here/alloc-failure-armed.log
	off=$(line_offset "$log" 'page allocation failure')
	out=$("$triage" -f "$off" "$log") || rc=$?
	echo "rc=$rc out=$out"
	[[ $out == $'1\tpage allocation failure in alloc_migration_target' ]] && ((rc == 0))
	off=$((off + 1))
	rc=0
	out=$("$triage" -f "$off" "$log") || rc=$?
	[[ -z $out ]] && ((rc == 0))
}

t_outputs() {
	local rc=0
	"$triage" -r "$work/rep" -j "$work/r.json" "$here/interleaved.log" >/dev/null || rc=$?
	((rc == 1)) || return 1
	[[ -s $work/rep/summary.txt ]] || return 1
	[[ $(find "$work/rep" -name '0*.txt' | wc -l) -ge 1 ]] || return 1
	grep -q '"corrupted":true' "$work/r.json" || return 1
	grep -q '"file":"001-' "$work/r.json" || return 1
	if command -v python3 >/dev/null; then
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/r.json"
	fi
}

# a report cut off by the end of the log is flagged, a complete one is not
t_truncated() {
	"$triage" -j "$work/t.json" "$here/truncated.log" >/dev/null || true
	grep -q '"corrupted":true' "$work/t.json" || return 1
	"$triage" -j "$work/s.json" "$here/soft-lockup.log" >/dev/null || true
	! grep -q '"corrupted":true' "$work/s.json"
}

# a report cut off by a reboot is flagged and names no function
t_reboot_cut() {
	"$triage" -j "$work/b.json" "$here/reboot-cut.log" >/dev/null || true
	grep -q '"corrupted":true' "$work/b.json" && ! grep -q '"title":"[^"]* in ' "$work/b.json" ||
		return 1
	# the same behind spliced console text, next to a report that is whole
	"$triage" -j "$work/b.json" "$here/journal-spliced.log" >/dev/null || true
	grep -q '"title":"BUG: unable to handle kernel NULL pointer dereference",[^}]*"corrupted":true' \
		"$work/b.json" &&
		grep -q '"title":"WARNING in online_pages",[^}]*"corrupted":false' "$work/b.json"
}

# no title carries an address, an offset, a PID or a CPU number
t_clean_titles() {
	local exp bad
	for exp in "${goldens[@]}"; do
		"$triage" "${exp%.expected}.log" 2>/dev/null | cut -f2-
	done >"$work/titles"
	[[ -s $work/titles ]] || return 1
	bad=$(grep -E '0x[0-9a-fA-F]|\+0x|[0-9a-f]{8,}|CPU#?[0-9]|PID|pid [0-9]|\[[0-9]+\]|:[0-9]+' "$work/titles") || true
	[[ -z $bad ]] || { echo "$bad"; return 1; }
}

# injected failures are no reports: -j lists them by site and injector, in
# order of first appearance, and -r's summary.txt ends with them
t_injections() {
	local rc=0
	"$triage" -r "$work/inj" -j "$work/i.json" "$here/fault-injection.log" >"$work/i.out" || rc=$?
	if ((rc != 0)) || [[ -s $work/i.out ]]; then
		echo "rc=$rc"
		cat "$work/i.out"
		return 1
	fi
	grep '^{"site"' "$work/i.json" >"$work/i.got" || true
	cat >"$work/i.want" <<-'EOF'
		{"site":"getname_flags","fault":"failslab","count":1,"first_step":1},
		{"site":"alloc_super","fault":"failslab","count":1,"first_step":1},
		{"site":"__prealloc_shrinker","fault":"failslab","count":1,"first_step":1}
	EOF
	diff -u "$work/i.want" "$work/i.got" || return 1
	grep -q '^injected .* failslab at alloc_super$' "$work/inj/summary.txt" || return 1
	# a stack with no reliable frame (only "? " ones this early) has no site
	"$triage" -j "$work/i2.json" "$here/boot-panic-end-marker.log" >/dev/null || true
	grep -q '^{"site":null,"fault":"fail_vmemmap","count":2,"first_step":null}' "$work/i2.json" || return 1
	# armed before its debugfs folder exists, fail_dump() says "name (null)"
	"$triage" -j "$work/i3.json" "$here/boot-fail-vmemmap-null-name.log" >/dev/null || true
	grep -q '^{"site":null,"fault":"fail_vmemmap","count":3,"first_step":null}' "$work/i3.json"
}

# a user task's "Alignment trap:"/"Unhandled fault:" (no die() after them)
# does not hold on to the kernel's own trap one step later
t_arm_pending() {
	"$triage" -j "$work/a.json" "$here/arm-unhandled-fault.log" >/dev/null || true
	grep -q '"title":"Alignment trap in ksz_port_stats_read","count":1,"first_step":2,' \
		"$work/a.json"
}

t_report_file() {
	local rc=0 f
	"$triage" -r "$work/rep2" "$here/vmemmap-alloc-failure.log" >/dev/null || rc=$?
	f=$(find "$work/rep2" -name '001-*.txt')
	((rc == 0)) && grep -q 'Call Trace:' "$f" && grep -q '^injected: yes' "$f" &&
		grep -q '^step marker: .*rig: step 1 begin' "$f"
}

t_missing_file() {
	local rc=0
	"$triage" "$work/does-not-exist" >/dev/null 2>"$work/err" || rc=$?
	((rc == 2)) && [[ $(wc -l <"$work/err") == 1 ]]
}

t_bad_option() {
	local rc=0
	"$triage" -x "$here/warning.log" >/dev/null 2>&1 || rc=$?
	((rc == 2))
}

# -H prints one ERE that bash can use; the first line of every report triage
# names in every golden log matches it (it is the rig's quick filter).
t_headers() {
	local re exp log f off line count=0
	re=$("$triage" -H) || return 1
	[[ $(printf '%s\n' "$re" | wc -l) == 1 && -n $re ]] || return 1
	[[ "just a line" =~ $re ]] && { echo "matches anything"; return 1; }
	for exp in "${goldens[@]}"; do
		log=${exp%.expected}.log
		rm -rf "$work/hdr"
		"$triage" -r "$work/hdr" "$log" >/dev/null || true
		for f in "$work/hdr"/0*.txt; do
			[[ -e $f ]] || continue
			off=$(sed -n 's/^example: console byte \([0-9]*\),.*/\1/p' "$f")
			line=$(tail -c +$((off + 1)) "$log" | head -c 8192 | tr '\r' '\n' | head -n 1)
			count=$((count + 1))
			[[ $line =~ $re ]] || { echo "$(basename "$log"): not matched: $line"; return 1; }
		done
	done
	echo "$count report lines matched"
	((count > 0))
}

# A log of many read buffers: the same titles, counts and offsets from the
# file as through a pipe (whose reads end elsewhere), and a last line
# without its line end.
t_mapped() {
	local exp big=$work/big.log
	: >"$big"
	while (($(stat -c %s "$big") < 3 * 1048576 / 2)); do
		for exp in "${goldens[@]}"; do
			cat "${exp%.expected}.log" >>"$big"
		done
	done
	printf '%s' '[   99.000000] WARNING: CPU: 0 PID: 1 at mm/x.c:1 f+0x1/0x2' >>"$big"
	"$triage" -j "$work/map.json" "$big" >"$work/map.out" || true
	# shellcheck disable=SC2002 # a pipe, whose reads end elsewhere than a file's
	cat "$big" | "$triage" -j "$work/pipe.json" - >"$work/pipe.out" || true
	[[ -s $work/map.out ]] && cmp "$work/map.out" "$work/pipe.out" &&
		cmp "$work/map.json" "$work/pipe.json"
}

echo "TAP version 13"
echo "1..$((${#goldens[@]} + ${#checks[@]}))"
for exp in "${goldens[@]}"; do
	golden "$exp"
done
check stdin_same_as_file t_stdin
check from_byte_skips_earlier_reports t_from_past
check from_byte_keeps_marker_state t_from_state
check reports_dir_and_json t_outputs
check truncated_report_is_corrupted t_truncated
check report_file_has_trace_and_step t_report_file
check missing_file_exits_2 t_missing_file
check bad_option_exits_2 t_bad_option
check headers_regex_matches_every_report t_headers
check reboot_cut_report_is_corrupted t_reboot_cut
check titles_hold_no_addresses_or_ids t_clean_titles
check injected_failures_listed_by_site t_injections
check unconfirmed_arm_fault_starts_nothing t_arm_pending
check mapped_file_same_as_pipe t_mapped
((n == ${#goldens[@]} + ${#checks[@]})) || echo "# run.sh: the checks list is out of date"
echo "# triage: $((n - failed)) passed, $failed failed"
((failed == 0))
