# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox ash, sourced by the guest agent
# hotplug-rig guest verbs for memory blocks: list, wait, online, offline and
# the kernel's accounting of them. Blocks are named by index (memoryN).

MEMDIR=/sys/devices/system/memory

# block_line N: "block N NODE STATE ZONE"; builtins only, a fork per block
# costs milliseconds under TCG.
block_line() {
	local st zone node l
	read -r st <"$MEMDIR/memory$1/state"
	zone=-
	[ "$st" = online ] && read -r zone <"$MEMDIR/memory$1/valid_zones"
	node=-
	for l in "$MEMDIR/memory$1"/node*; do
		[ -e "$l" ] && node=${l##*/node}
	done
	echo "block $1 $node $st $zone"
}

# state [--mark TEXT]: everything the host compares against its own view
# after each step, from the one-pass helper (guest/src/rigstate.c); first
# the step's end marker, when the host sends it along. The agent's serving
# helper writes straight to the agent's port, whatever this verb's stdout,
# and ends the reply there.
verb_state() {
	if [ "${1:-}" = --mark ]; then
		shift
		verb_mark "$@"
	fi
	# the agent's helper (guest/agent), while it lives (a write to its
	# fifo once it is gone would end the agent: SIGPIPE); it ends the
	# agent's reply too, in the same write as its lines
	if [ -n "${RIGSTATE_PID:-}" ] && [ -n "${REQ_ID:-}" ] && kill -0 "$RIGSTATE_PID" 2>/dev/null; then
		local st
		echo "$REQ_ID" >&5
		if read -r st <&6; then
			# shellcheck disable=SC2034 # the agent's (guest/agent)
			REPLIED=1
			return "$st"
		fi
		RIGSTATE_PID=
	fi
	/bin/rigstate
}

# state_sh: the same in the shell, a byte per read: rigstate's reference
# (tests/scenarios/state-helper compares the two).
state_sh() {
	local hex key val nid n auto d
	read -r hex <"$MEMDIR/block_size_bytes"
	printf 'block_size %d\n' "0x$hex"
	while read -r key val _; do
		[ "$key" = MemTotal: ] && echo "memtotal $val"
	done </proc/meminfo
	for n in /sys/devices/system/node/node[0-9]*; do
		while read -r _ nid key val _; do
			[ "$key" = MemTotal: ] && echo "node $nid $val"
		done <"$n/meminfo"
	done
	read -r auto <"$MEMDIR/auto_online_blocks"
	echo "auto_online $auto"
	for d in "$MEMDIR"/memory[0-9]*; do
		block_line "${d##*/memory}"
	done
	verb_vmemmap
}

# wait-blocks FIRST COUNT TIMEOUT_S: until every block of the range exists.
verb_wait_blocks() {
	local first count left i
	first=$1 count=$2 left=$(($3 * 100))
	i=$first
	while [ "$i" -lt $((first + count)) ]; do
		if [ -e "$MEMDIR/memory$i/state" ]; then
			i=$((i + 1))
			continue
		fi
		[ "$left" -gt 0 ] || { echo "memory$i did not appear"; return 1; }
		left=$((left - 1))
		usleep 10000
	done
	i=$first
	while [ "$i" -lt $((first + count)) ]; do
		block_line "$i"
		i=$((i + 1))
	done
}

# auto-online offline|online|online_kernel|online_movable: the kernel's
# auto_online_blocks (the host puts the boot value back at the end).
verb_auto_online() {
	rigctl write "$1" "$MEMDIR/auto_online_blocks"
}

# block_files FIRST COUNT [down] [STATE]: the state files of a range, lowest
# first (or highest first with "down"), all or only those in STATE.
block_files() {
	local i=$1 st
	files=''
	while [ "$i" -lt $(($1 + $2)) ]; do
		if [ -n "${4:-}" ]; then
			read -r st <"$MEMDIR/memory$i/state"
			[ "$st" = "$4" ] || { i=$((i + 1)); continue; }
		fi
		if [ "${3:-}" = down ]; then
			files="$MEMDIR/memory$i/state $files"
		else
			files="$files $MEMDIR/memory$i/state"
		fi
		i=$((i + 1))
	done
}

# online FIRST COUNT online|online_kernel|online_movable [rest]: one rigctl
# for all blocks (an exec costs milliseconds under TCG); prints "ERRNO FILE"
# on failure. "rest" onlines only the blocks still offline (the cleanup after
# an expected failure).
verb_online() {
	block_files "$1" "$2" up ${4:+offline}
	[ -n "$files" ] || return 0
	# shellcheck disable=SC2086 # one word per file
	rigctl write "$3" $files
}

# offline FIRST COUNT TIMEOUT_S [rest]: highest block first; offline_pages
# retries until a signal arrives, so each write gets SIGALRM after TIMEOUT_S.
verb_offline() {
	block_files "$1" "$2" down ${4:+online}
	[ -n "$files" ] || return 0
	# shellcheck disable=SC2086
	rigctl write -t "$3" offline $files
}

# floor FIRST COUNT N: the in-guest online_movable/offline loop, the lower
# bound for a host-driven cycle.
verb_floor() {
	block_files "$1" "$2"
	# shellcheck disable=SC2086 # one word per file
	rigctl cycle "$3" $files
}

# sample: a soak checkpoint, taken with nothing plugged: caches dropped
# first, then the counters a leak would move, one "name value" per line.
verb_sample() {
	local key val _ n nid d count=0
	sync
	echo 3 >/proc/sys/vm/drop_caches
	while read -r key val _; do
		case "$key" in
		MemTotal: | MemFree: | Slab: | PageTables: | KernelStack: | Percpu:)
			echo "${key%:} $val" ;;
		esac
	done </proc/meminfo
	for n in /sys/devices/system/node/node[0-9]*; do
		while read -r _ nid key val _; do
			[ "$key" = MemFree: ] && echo "node${nid}_MemFree $val"
		done <"$n/meminfo"
	done
	for d in "$MEMDIR"/memory[0-9]*; do count=$((count + 1)); done
	echo "blocks $count"
	[ -r /sys/kernel/debug/vmemmap/stats ] || return 0
	while read -r key val; do
		echo "vmemmap_$key $val"
	done </sys/kernel/debug/vmemmap/stats
}

# For scenarios' guest-sh lines, which need to know where pages landed
# before they can say what an offline must do.

# node_blocks NODE: the memory blocks of a node, lowest first, one a line.
node_blocks() {
	local l
	for l in /sys/devices/system/node/node"$1"/memory*; do
		[ -e "$l" ] && echo "${l##*/memory}"
	done | sort -n
}

# huge_pages_in_block N: how many hugetlb pages begin in memory block N,
# from /proc/kpageflags (KPF_COMPOUND_HEAD 15 and KPF_HUGE 17 set), read a
# page of flags at a time.
huge_pages_in_block() {
	local hex pages
	read -r hex <"$MEMDIR/block_size_bytes"
	pages=$((0x$hex / 4096))
	dd if=/proc/kpageflags bs=4096 skip=$(($1 * pages / 512)) count=$((pages / 512)) 2>/dev/null |
		od -An -v -tu8 -w8 | awk 'and($1, 163840) == 163840 { n++ } END { print n + 0 }'
}
