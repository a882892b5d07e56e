# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The guest as observed: the agent's "state" reply parsed into G_* (numbers
# validated before any arithmetic: they came from the guest). Sourced by
# rig; calls nothing but bash.
#   G_BLOCK[i]     "node state zones" of memory block i
#   G_NODEMEM[n]   MemTotal of node n, kB;  G_MEMTOTAL  MemTotal, kB
#   G_VMEMMAP[c]   the series' vmemmap/stats and fail_vmemmap counters
#   G_VCHECK       the lines of vmemmap/check ("OK" when it holds)
#   G_AUTO         auto_online_blocks

declare -A G_BLOCK=() G_NODEMEM=() G_VMEMMAP=()
declare -a G_VCHECK=()

guest_state() {
	local line
	G_BLOCK=() G_NODEMEM=() G_VMEMMAP=() G_VCHECK=() G_MEMTOTAL='' G_AUTO=''
	# the first word picks the one regex a line is matched with (a match
	# compiles its regex each time)
	for line in "${AGENT_OUT[@]}"; do
		case $line in
		"vmemmap-check "*) G_VCHECK+=("${line#vmemmap-check }") ;;
		"vmemmap "*)
			[[ $line =~ ^vmemmap\ ([a-z_]+)\ ([0-9]+)$ ]] &&
				G_VMEMMAP[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
			;;
		"block "*)
			[[ $line =~ ^block\ ([0-9]+)\ ([0-9]+|-)\ ([a-z-]+)\ ([A-Za-z0-9\ -]+)$ ]] &&
				G_BLOCK[${BASH_REMATCH[1]}]="${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]}"
			;;
		"memtotal "*) [[ $line =~ ^memtotal\ ([0-9]+)$ ]] && G_MEMTOTAL=${BASH_REMATCH[1]} ;;
		"node "*)
			[[ $line =~ ^node\ ([0-9]+)\ ([0-9]+)$ ]] &&
				G_NODEMEM[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
			;;
		"auto_online "*) [[ $line =~ ^auto_online\ ([a-z_]+)$ ]] && G_AUTO=${BASH_REMATCH[1]} ;;
		esac
	done
	[[ -n $G_MEMTOTAL ]]
}
