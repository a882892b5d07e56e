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
