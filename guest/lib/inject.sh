# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox ash, sourced by the guest agent
# hotplug-rig guest verbs for fault injection: arm and clear failslab,
# fail_page_alloc, fail_function, fail_vmemmap and fail_hotplug (our series)
# and the memory notifier injector, and read a capability's counters back. Every knob is saved before its first write and restored
# by clear, and arming and clearing leave markers in the kernel log for the
# host's triage ("rig: inject armed NAME").

DBG=/sys/kernel/debug
SAVED=/tmp/inject-saved

# Under TCG a fork and exec costs the guest a few ms, and a sweep case
# arms and clears an injector: these verbs use none (the saved first values
# are read with read, and a restored one is emptied, not removed).

# inject_dir NAME: INJ_DIR is NAME's debugfs folder; 1 for no injector.
inject_dir() {
	case "$1" in
	failslab | fail_page_alloc | fail_function | fail_vmemmap | fail_hotplug) INJ_DIR=$DBG/$1 ;;
	notifier) INJ_DIR=$DBG/notifier-error-inject/memory/actions ;;
	*) return 1 ;;
	esac
}

# read_text: what is left of standard input, every line, into TEXT.
read_text() {
	local line
	TEXT=
	while IFS= read -r line || [ -n "$line" ]; do
		TEXT="$TEXT$line
"
	done
}

# knob_set FILE VALUE: remember FILE's first value, then write VALUE.
knob_set() {
	local key=${1//\//_}
	if [ ! -s "$SAVED/$key" ]; then
		[ -d "$SAVED" ] || mkdir -p "$SAVED" || return 1
		# a knob whose first value cannot be saved is not turned
		read_text <"$1" || { echo "cannot read $1"; return 1; }
		printf '%s\n%s' "$1" "$TEXT" >"$SAVED/$key" || { echo "cannot save $1"; return 1; }
	fi
	echo "$2" >"$1" || { echo "cannot write '$2' to $1"; return 1; }
}

# inject NAME KEY=VALUE...: probability 100, interval 1, verbose 2 unless
# given; fail_function takes func= and retval=; notifier takes
# MEM_GOING_ONLINE=-12 style action=errno pairs.
verb_inject() {
	local name=$1 dir kv key val func=
	inject_dir "$name" || { echo "unknown injector '$name'"; return 1; }
	dir=$INJ_DIR
	# 4, as kselftest's skip: the kernel lacks the injector, no fault of it
	[ -d "$dir" ] || { echo "$dir missing: the kernel lacks $name"; return 4; }
	shift
	if [ "$name" = notifier ]; then
		for kv in "$@"; do
			key=${kv%%=*} val=${kv#*=}
			knob_set "$dir/$key/error" "$val" || return 1
		done
		echo "rig: inject armed notifier" >/dev/kmsg
		return 0
	fi
	for kv in "$@"; do
		case "$kv" in func=*) func=${kv#func=} ;; esac
	done
	if [ "$name" = fail_function ]; then
		[ -n "$func" ] || { echo "fail_function needs func="; return 1; }
		echo "$func" >"$dir/inject" || { echo "$func is not injectable"; return 1; }
	fi
	knob_set "$dir/probability" 100 || return 1
	knob_set "$dir/interval" 1 || return 1
	knob_set "$dir/verbose" 2 || return 1
	for kv in "$@"; do
		key=${kv%%=*} val=${kv#*=}
		case "$key" in
		func) ;;
		retval)
			# the file takes an unsigned long: -12 is 0xfff...f4
			case "$val" in -*) val=$(printf '%#x' "$val") ;; esac
			knob_set "$dir/$func/retval" "$val" || return 1 ;;
		*)
			[ -e "$dir/$key" ] || { echo "$name has no knob '$key'"; return 1; }
			knob_set "$dir/$key" "$val" || return 1 ;;
		esac
	done
	echo "rig: inject armed $name" >/dev/kmsg
}

# clear NAME|all: every saved knob back to its first value.
verb_clear() {
	local f file name
	for name in ${1:-all}; do
		[ "$name" = all ] && name=
		if [ -z "$name" ] || [ "$name" = fail_function ]; then
			[ -e "$DBG/fail_function/inject" ] && echo >"$DBG/fail_function/inject"
		fi
		for f in "$SAVED"/*; do
			[ -s "$f" ] || continue
			case "$f" in *"$name"*) ;; *) continue ;; esac
			{
				read -r file
				read_text
			} <"$f"
			printf '%s' "$TEXT" >"$file" 2>/dev/null
			: >"$f"
		done
		echo "rig: inject disarmed ${name:-all}" >/dev/kmsg
	done
}

# fault-counters NAME: "space N" and "times N" of a should_fail()
# capability as they are now. fail_hotplug counts one per allocation of a
# hotplug operation, so a sweep learns from them whether its failure was
# injected (times went down) and how many allocations an operation made
# (space went down).
verb_fault_counters() {
	local dir knob val
	[ "$1" != notifier ] || { echo "no counters for notifier"; return 1; }
	inject_dir "$1" || { echo "unknown injector '$1'"; return 1; }
	dir=$INJ_DIR
	[ -d "$dir" ] || { echo "$dir missing: the kernel lacks $1"; return 1; }
	for knob in space times; do
		{ read -r val || [ -n "$val" ]; } <"$dir/$knob" || return 1
		echo "$knob $val"
	done
}

# vmemmap: the series' stats and check, one "vmemmap NAME VALUE" per counter
# and "vmemmap-check LINE" per line of check.
verb_vmemmap() {
	local name val line
	[ -r "$DBG/vmemmap/stats" ] || return 0
	while read -r name val; do
		echo "vmemmap $name $val"
	done <"$DBG/vmemmap/stats"
	while read -r line; do
		echo "vmemmap-check $line"
	done <"$DBG/vmemmap/check"
	[ -r "$DBG/fail_vmemmap/injected" ] || return 0
	while read -r name val; do
		echo "vmemmap injected_$name $val"
	done <"$DBG/fail_vmemmap/injected"
}
