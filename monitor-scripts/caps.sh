# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What the kernel under test can do, seen from inside the guest: each option
# a scenario may need that leaves a trace in sysfs or debugfs (an injector's
# folder, the series' vmemmap counters, a driver) is probed once after boot.
# The KTAP header and summary.json say which injection points and checks the
# run had; a scenario whose needs the guest lacks skips with the reason,
# whatever the config said (a module that did not load, an image with no
# config at all). Sourced by rig; calls the agent.

# The options the guest can be asked about, and the path each one makes.
declare -rA CAP_PATH=(
	[CONFIG_MEMORY_HOTPLUG]=/sys/devices/system/memory
	[CONFIG_NUMA]=/sys/devices/system/node/node0
	[CONFIG_HUGETLBFS]=/sys/kernel/mm/hugepages
	[CONFIG_VIRTIO_PCI]=/sys/bus/pci/drivers/virtio-pci
	[CONFIG_VIRTIO_MEM]=/sys/bus/virtio/drivers/virtio_mem
	[CONFIG_FAILSLAB]=/sys/kernel/debug/failslab
	[CONFIG_FAIL_PAGE_ALLOC]=/sys/kernel/debug/fail_page_alloc
	[CONFIG_FAIL_FUNCTION]=/sys/kernel/debug/fail_function
	[CONFIG_FAIL_VMEMMAP]=/sys/kernel/debug/fail_vmemmap
	[CONFIG_FAIL_HOTPLUG]=/sys/kernel/debug/fail_hotplug
	[CONFIG_DEBUG_VMEMMAP]=/sys/kernel/debug/vmemmap/stats
	[CONFIG_MEMORY_NOTIFIER_ERROR_INJECT]=/sys/kernel/debug/notifier-error-inject/memory
)

# The option behind each injector of the inject verb (verbs-inject.sh).
declare -rA INJECTOR_CONFIG=(
	[failslab]=CONFIG_FAILSLAB
	[fail_page_alloc]=CONFIG_FAIL_PAGE_ALLOC
	[fail_function]=CONFIG_FAIL_FUNCTION
	[fail_vmemmap]=CONFIG_FAIL_VMEMMAP
	[fail_hotplug]=CONFIG_FAIL_HOTPLUG
	[notifier]=CONFIG_MEMORY_NOTIFIER_ERROR_INJECT
)

# The per-step checks (checks.sh): those every kernel gets, and the series'
# debugfs files that run only where the kernel has them.
readonly CHECKS_ALWAYS="console devices blocks memtotal"
declare -rA CHECK_PATH=(
	[vmemmap/stats]=/sys/kernel/debug/vmemmap/stats
	[vmemmap/check]=/sys/kernel/debug/vmemmap/check
)

# CAP[opt] 1 or 0 once probed; CAP_SEEN[path] the same by path.
declare -A CAP=() CAP_SEEN=()
CAPS_PROBED=0

# caps_probe: ask the guest which of the paths exist (one agent call).
caps_probe() {
	local -a paths
	local p ans opt
	CAP=() CAP_SEEN=()
	mapfile -t paths < <(printf '%s\n' "${CAP_PATH[@]}" "${CHECK_PATH[@]}" | sort -u)
	agent_call exists "${paths[@]}" || return 1
	for p in "${AGENT_OUT[@]}"; do
		read -r ans p <<<"$p"
		case $ans in
		yes) CAP_SEEN[$p]=1 ;;
		no) CAP_SEEN[$p]=0 ;;
		esac
	done
	for opt in "${!CAP_PATH[@]}"; do
		CAP[$opt]=${CAP_SEEN[${CAP_PATH[$opt]}]:-0}
	done
	CAPS_PROBED=1
}

# cap_lacks OPTION: the probe showed the guest without OPTION (an option
# the probe cannot see is never lacking).
cap_lacks() {
	((CAPS_PROBED)) && [[ -n ${CAP_PATH[$1]:-} && ${CAP[$1]:-1} == 0 ]]
}

# injector_lacking NAME: why the guest cannot arm injector NAME, if it cannot.
injector_lacking() {
	local opt=${INJECTOR_CONFIG[$1]:-}
	[[ -n $opt ]] && cap_lacks "$opt" || return 1
	echo "the kernel lacks $1 ($opt: no ${CAP_PATH[$opt]} in the guest)"
}

# caps_lists: CAPS_INJ and CAPS_NOINJ (injectors the guest has and lacks),
# CAPS_CHK and CAPS_NOCHK (checks active and not).
caps_lists() {
	local n
	CAPS_INJ=() CAPS_NOINJ=() CAPS_CHK=() CAPS_NOCHK=()
	for n in $INJECTORS; do
		if cap_lacks "${INJECTOR_CONFIG[$n]}"; then CAPS_NOINJ+=("$n"); else CAPS_INJ+=("$n"); fi
	done
	if ((CHECKS == 0)); then
		read -ra CAPS_NOCHK <<<"$CHECKS_ALWAYS ${!CHECK_PATH[*]}"
		return 0
	fi
	read -ra CAPS_CHK <<<"$CHECKS_ALWAYS"
	for n in vmemmap/stats vmemmap/check; do
		if [[ ${CAP_SEEN[${CHECK_PATH[$n]}]:-0} == 1 ]]; then CAPS_CHK+=("$n"); else CAPS_NOCHK+=("$n"); fi
	done
}

# caps_report: the KTAP header lines of what this run has.
caps_report() {
	caps_lists
	local why=''
	[[ " ${CAPS_NOCHK[*]} " == *" vmemmap/stats "* ]] &&
		why=" (no /sys/kernel/debug/vmemmap: the series' CONFIG_DEBUG_VMEMMAP is not in this kernel)"
	((CHECKS)) || why=" (CHECKS=0)"
	ktap "# checks: ${CAPS_CHK[*]:-none}${CAPS_NOCHK[0]:+; not active: ${CAPS_NOCHK[*]}$why}"
	ktap "# injection points: ${CAPS_INJ[*]:-none}${CAPS_NOINJ[0]:+; not in this kernel: ${CAPS_NOINJ[*]}}"
}

# caps_unmet: the scenario's needs the guest shows it lacks, one a line.
caps_unmet() {
	local n
	for n in $(run_needs); do
		cap_lacks "$n" || continue
		if [[ -n ${KMOD_FOR[$n]:-} && -n ${KCONFIG:-} ]] && grep -qx "$n=m" "$KCONFIG"; then
			echo "$n (its module ${KMOD_FOR[$n]} did not load: see console.log)"
		else
			echo "$n (no ${CAP_PATH[$n]} in the guest)"
		fi
	done
}

# caps_json: what summary.json records of the probe (null before it).
caps_json() {
	((CAPS_PROBED)) || { echo null; return; }
	caps_lists
	local o
	{
		for o in "${!CAP_PATH[@]}"; do printf '%s\t%s\n' "$o" "${CAP[$o]}"; done
	} | jq -Rn --arg inj "${CAPS_INJ[*]}" --arg noinj "${CAPS_NOINJ[*]}" \
		--arg chk "${CAPS_CHK[*]}" --arg nochk "${CAPS_NOCHK[*]}" '
		def words: split(" ") | map(select(length > 0));
		{probed: ([inputs | split("\t") | {(.[0]): (.[1] == "1")}] | add // {}),
		 injectors: ($inj | words), injectors_missing: ($noinj | words),
		 checks: ($chk | words), checks_inactive: ($nochk | words)}'
}
