# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox ash, sourced by the guest agent
# The kernel's own memory-hotplug selftest (tools/testing/selftests/
# memory-hotplug/mem-on-off-test.sh from the same source tree), run under
# busybox (its bash shebang points at busybox here). Its notifier phase
# finds the built-in injector in debugfs; its modprobe calls find nothing to
# load, which is right for a built-in. The host folds the output into KTAP.

# kselftest-mem-on-off RATIO: run it, then "kselftest-exit N".
verb_kselftest_mem_on_off() {
	local st=0
	[ -r /lib/kselftest/mem-on-off-test.sh ] || { echo "kselftest-missing"; return 0; }
	# on every CPU, not the agent's one (guest/agent)
	UID=0 taskset "$ALL_CPUS" sh /lib/kselftest/mem-on-off-test.sh -r "${1:-2}" 2>&1 || st=$?
	echo "kselftest-exit $st"
}
