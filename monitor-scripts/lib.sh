# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # a part of rig: what it sets, the other parts read
# hotplug-rig host library: exit codes, messages, time, and validation of
# numbers and sizes. Sourced by rig and the other monitor-scripts.

readonly RIG_PASS=0 RIG_FAIL=1 RIG_ERROR=2 RIG_SKIP=4

# A one-line error naming the problem; bad input and rig errors exit 2.
die() {
	echo "rig: error: $*" >&2
	exit "$RIG_ERROR"
}

warn() {
	echo "rig: warning: $*" >&2
}

# Progress for the user, on stderr so stdout stays KTAP.
say() {
	[[ ${RIG_QUIET:-0} == 1 ]] || echo "rig: $*" >&2
}

now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

# Wall-clock stamp for log lines: seconds.microseconds since the epoch.
stamp() {
	echo "$EPOCHREALTIME"
}

is_uint() {
	[[ $1 =~ ^[0-9]+$ ]]
}

# to_bytes 256M: BYTES=268435456; sizes take K, M, G or T (powers of 1024).
to_bytes() {
	[[ $1 =~ ^([0-9]{1,15})([KMGT]?)(i?B)?$ ]] || return 1
	BYTES=${BASH_REMATCH[1]}
	case ${BASH_REMATCH[2]} in
	K) BYTES=$((BYTES << 10)) ;;
	M) BYTES=$((BYTES << 20)) ;;
	G) BYTES=$((BYTES << 30)) ;;
	T) BYTES=$((BYTES << 40)) ;;
	esac
}

size_bytes() {
	to_bytes "$1" && echo "$BYTES"
}

# human 268435456 -> 256M
human() {
	local n=$1
	if ((n % (1 << 30) == 0)); then echo "$((n >> 30))G"
	elif ((n % (1 << 20) == 0)); then echo "$((n >> 20))M"
	else echo "$((n >> 10))K"; fi
}

# duration_s 30m -> 1800 (s, m, h; a bare number is seconds)
duration_s() {
	[[ $1 =~ ^([0-9]+)([smh]?)$ ]] || return 1
	case ${BASH_REMATCH[2]} in
	m) echo $((BASH_REMATCH[1] * 60)) ;;
	h) echo $((BASH_REMATCH[1] * 3600)) ;;
	*) echo "${BASH_REMATCH[1]}" ;;
	esac
}

# json_str VAR TEXT: VAR gets TEXT as a JSON string, so text from the guest
# or the user goes into summary.json as data. No fork: this runs per step.
json_str() {
	local s=$2
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/\\r}
	s=${s//$'\n'/\\n}
	s=${s//[$'\x01'-$'\x1f']/?}
	printf -v "$1" '"%s"' "$s"
}
