# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# make coverage's fast tests (no kernel, no QEMU): the error-block finder
# and the summary lines on a fixture source and tracefile against their
# golden output, and bad input refused before anything runs. Sourced by
# tests/tier-check.sh; needs ROOT, RIG, TMP and bad_input.

check_coverage() {
	local fx=$ROOT/tests/coverage
	(
		# shellcheck source=monitor-scripts/coverage.sh
		. "$ROOT/monitor-scripts/coverage.sh"
		sed "s#@TREE@#$fx/tree#" "$fx/coverage.info.in" >"$TMP/cov.info"
		coverage_error_blocks "$TMP/cov.info" "$fx/tree" >"$TMP/cov.blocks"
		cat "$TMP/cov.blocks"
		coverage_summary "$TMP/cov.info" "$fx/tree" "$TMP/cov.blocks"
	) >"$TMP/cov.out" 2>&1
	if diff -u "$fx/expected" "$TMP/cov.out" >"$TMP/cov.diff"; then
		t_ok "coverage: error blocks and summary lines of the fixture match tests/coverage/expected"
	else
		sed 's/^/# /' "$TMP/cov.diff" | head -20
		t_fail "coverage: error blocks and summary lines of the fixture match tests/coverage/expected"
	fi
	bad_input "make coverage: an unknown scenario" "unknown scenario 'no-such'" \
		make -s -C "$ROOT" coverage SCENARIOS="smoke no-such"
	bad_input "make coverage: a bad SWEEP" "SWEEP=all: use 0, 1" make -s -C "$ROOT" coverage SWEEP=all
	bad_input "make coverage: another VARIANT" "make coverage runs VARIANT=coverage" \
		make -s -C "$ROOT" coverage VARIANT=debug
	bad_input "VARIANT=coverage on 6.12" "written for KERNEL=6.1" "$RIG" run smoke VARIANT=coverage KERNEL=6.12
}

# coverage_calls INFO FILE FUNCTION: the calls gcov counted.
coverage_calls() {
	awk -v f="/$2" -v fn="$3" '/^SF:/ { cur = (substr($0, length($0) - length(f) + 1) == f) }
		cur && /^FNDA:/ { s = substr($0, 6); i = index(s, ","); if (substr(s, i + 1) == fn) n += substr(s, 1, i - 1) }
		END { print n + 0 }' "$1"
}

# check_coverage_counters ONLINING PLUG_ONLY (make check-all): the counters
# move with what a run does. ONLINING onlines memory, so online_pages runs;
# PLUG_ONLY hot-adds (add_memory_resource runs) and never onlines.
check_coverage_counters() {
	local sc dir info add on st want
	for sc in "$1" "$2"; do
		want=online
		[[ $sc == "$2" ]] && want=plug-only
		st=0
		"$RIG" run "$sc" VARIANT=coverage >"$TMP/cov.out" 2>"$TMP/cov.err" || st=$?
		dir=$(sed -n 's/^# logs //p' "$TMP/cov.out" | head -1)
		info=$ROOT/$dir/coverage/coverage.info
		if ((st != 0)) || [[ ! -s $info ]]; then
			tail -3 "$TMP/cov.err" | sed 's/^/# /'
			t_fail "coverage: ${sc##*/} on VARIANT=coverage leaves coverage.info (status $st)"
			continue
		fi
		# the report's source text is the image's own copy, not the
		# shared tree that later builds patch
		if [[ $(cat "$ROOT/$dir/coverage/src") == "$ROOT"/build/images/*/src ]]; then
			t_ok "coverage: ${sc##*/} reads its source text from the image's copy"
		else
			t_fail "coverage: ${sc##*/} reads its source text from the image's copy"
		fi
		add=$(coverage_calls "$info" mm/memory_hotplug.c add_memory_resource)
		on=$(coverage_calls "$info" mm/memory_hotplug.c online_pages)
		echo "# ${sc##*/}: add_memory_resource $add calls, online_pages $on calls"
		if [[ $want == online ]]; then
			((on > 0))
			t_result "coverage: ${sc##*/} (onlines memory) reaches online_pages" $?
		else
			((add > 0 && on == 0))
			t_result "coverage: ${sc##*/} (plugs, never onlines) reaches add_memory_resource, not online_pages" $?
		fi
	done
}
