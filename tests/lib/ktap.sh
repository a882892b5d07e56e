# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The rig's test library, as kselftest's ktap_helpers.sh: result lines,
# skips with their reason, a test's declared needs, and the closing totals
# ("N passed, N failed, N skipped", the line CI reads). Sourced by the
# tests/ scripts.

PASSED=0 FAILED=0 SKIPPED=0 N=0

t_ok() { N=$((N + 1)); PASSED=$((PASSED + 1)); echo "ok $N $1"; }
t_fail() { N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N $1"; }
t_skip() { N=$((N + 1)); SKIPPED=$((SKIPPED + 1)); echo "ok $N $1 # SKIP $2"; }
note() { echo "# $*"; }

# t_result DESC STATUS: ok when STATUS is 0.
t_result() {
	if (($2 == 0)); then t_ok "$1"; else t_fail "$1"; fi
}

# t_needs WHAT...: the first need this machine lacks, or nothing. A need is
# a command name, "root", or "kvm".
t_needs() {
	local w
	for w in "$@"; do
		case $w in
		root) ((EUID == 0)) || { echo "needs root"; return; } ;;
		kvm) [[ -w /dev/kvm ]] || { echo "needs /dev/kvm"; return; } ;;
		*) command -v "$w" >/dev/null || { echo "needs $w"; return; } ;;
		esac
	done
}

ktap_totals() {
	echo "1..$N"
	echo "# Totals: pass:$PASSED fail:$FAILED xfail:0 xpass:0 skip:$SKIPPED error:0"
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	((FAILED == 0 && PASSED > 0))
}
