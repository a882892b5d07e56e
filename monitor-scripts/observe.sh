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
	local line k v n st
	G_BLOCK=() G_NODEMEM=() G_VMEMMAP=() G_VCHECK=() G_MEMTOTAL='' G_AUTO=''
	# Split with expansions and checked with globs, not regexes: bash
	# compiles a regex at every match, 35 us a line on a busy host against
	# 26 here. Each form is the one tests/observe.sh holds to its regex:
	#   vmemmap NAME VALUE            NAME [a-z_]+, VALUE [0-9]+
	#   block N NODE STATE ZONES      N [0-9]+, NODE [0-9]+ or -,
	#                                 STATE [a-z-]+, ZONES [A-Za-z0-9 -]+
	#   memtotal KB, node N KB        numbers
	#   auto_online POLICY            [a-z_]+
	for line in "${AGENT_OUT[@]}"; do
		case $line in
		"vmemmap-check "*) G_VCHECK+=("${line#vmemmap-check }") ;;
		"vmemmap "*)
			k=${line#vmemmap } v=${line##* }
			[[ $k == *" "* ]] || continue
			k=${k% *}
			[[ -n $k && $k != *[!a-z_]* && -n $v && $v != *[!0-9]* ]] && G_VMEMMAP[$k]=$v
			;;
		"block "*)
			k=${line#block }
			[[ $k == *" "*" "*" "* ]] || continue
			n=${k%% *} k=${k#* }
			v=${k%% *} k=${k#* }
			st=${k%% *} k=${k#* }
			[[ -n $n && $n != *[!0-9]* && ($v == - || (-n $v && $v != *[!0-9]*)) &&
				-n $st && $st != *[!a-z-]* && -n $k && $k != *[!A-Za-z0-9\ -]* ]] &&
				G_BLOCK[$n]="$v $st $k"
			;;
		"memtotal "*)
			v=${line#memtotal }
			[[ -n $v && $v != *[!0-9]* ]] && G_MEMTOTAL=$v
			;;
		"node "*)
			k=${line#node } v=${line##* }
			[[ $k == *" "* ]] || continue
			k=${k% *}
			[[ -n $k && $k != *[!0-9]* && -n $v && $v != *[!0-9]* ]] && G_NODEMEM[$k]=$v
			;;
		"auto_online "*)
			v=${line#auto_online }
			[[ -n $v && $v != *[!a-z_]* ]] && G_AUTO=$v
			;;
		esac
	done
	[[ -n $G_MEMTOTAL ]]
}
