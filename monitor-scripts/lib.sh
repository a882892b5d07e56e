# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# hotplug-rig host library, the bottom layer: exit codes, messages, the
# clock, and validation of numbers and sizes. Sourced by rig; calls nothing
# above it.

# printable VAR TEXT: VAR gets TEXT with control characters (but tab and
# newline) and bytes that are not ASCII as '?', so what the guest printed
# or a file was named never reaches a terminal as an escape sequence.
printable() {
	printf -v "$1" '%s' "${2//[$'\x01'-$'\x08'$'\x0b'-$'\x1f'$'\x7f'-$'\xff']/?}"
}

# A one-line error naming the problem; bad input and rig errors exit 2.
die() {
	local msg
	printable msg "$*"
	echo "rig: error: $msg" >&2
	exit 2
}

# sc_die TEXT: bad scenario input, named by file and line (exit 2).
sc_die() {
	die "${SC_FILE:-scenario}:${SC_LINENO:-0}: $*"
}

warn() {
	local msg
	printable msg "$*"
	echo "rig: warning: $msg" >&2
}

# Progress for the user, on stderr so stdout stays KTAP; the verdict's
# reasons quote guest output.
say() {
	local msg
	printable msg "$*"
	[[ ${RIG_QUIET:-0} == 1 ]] || echo "rig: $msg" >&2
}

# log_line FILE TAG TEXT...: time-stamped lines of a channel's log in the
# run folder, one a TEXT, in one write, on a descriptor kept open for the
# run (an open and a close cost more than the write). TAG is the rig's own
# (<, > or !). log_reopen: the next line opens FILE again (after it was
# moved away).
declare -A LOG_FD=()
log_line() {
	if [[ -z ${LOG_FD[$1]:-} ]]; then
		{ exec {LOG_FD[$1]}>>"$RUN_DIR/$1"; } 2>/dev/null || { LOG_WRITE_FAILED=1; return 0; }
	fi
	# shellcheck disable=SC2059 # the stamp and TAG are the rig's, TEXT is not
	printf "$EPOCHREALTIME $2 %s\\n" "${@:3}" >&"${LOG_FD[$1]}" 2>/dev/null ||
		LOG_WRITE_FAILED=1
}

log_reopen() {
	local fd
	[[ -n ${LOG_FD[$1]:-} ]] || return 0
	fd=${LOG_FD[$1]}
	exec {fd}>&-
	unset "LOG_FD[$1]"
}

# now_ms VAR: VAR gets the wall clock in milliseconds (no fork: the checks
# run it several times a step).
now_ms() {
	printf -v "$1" '%d' $((${EPOCHREALTIME/./} / 1000))
}

# diag TEXT: a diagnostic line of the step being run (KTAP "# TEXT").
diag() {
	STEP_DIAG+=("$*")
}

is_uint() {
	[[ $1 =~ ^[0-9]+$ ]]
}

# with_lock FILE CMD...: CMD while holding FILE's lock (flock), so two runs
# sharing a build folder do not build the same thing at once.
with_lock() {
	local file=$1 fd st=0
	shift
	mkdir -p "$(dirname "$file")"
	exec {fd}>"$file"
	flock "$fd"
	"$@" || st=$?
	exec {fd}>&-
	return $st
}

# dec VAR TEXT [MAX]: VAR gets TEXT as a decimal number (08 is 8, never
# octal), when it is one and at most MAX (default 10^15); 1 otherwise.
dec() {
	[[ $2 =~ ^[0-9]{1,16}$ ]] || return 1
	local _dec=$((10#$2))
	((_dec <= ${3:-1000000000000000})) || return 1
	printf -v "$1" '%d' "$_dec"
}

# to_bytes 256M: BYTES=268435456; sizes take K, M, G or T (powers of 1024),
# always decimal (0256M is 256M), and at most 2^50 bytes.
to_bytes() {
	[[ $1 =~ ^([0-9]{1,16})([KMGT]?)(i?B)?$ ]] || return 1
	local n=$((10#${BASH_REMATCH[1]})) shift=0
	case ${BASH_REMATCH[2]} in
	K) shift=10 ;;
	M) shift=20 ;;
	G) shift=30 ;;
	T) shift=40 ;;
	esac
	((n <= (1 << (50 - shift)))) || return 1
	BYTES=$((n << shift))
}

# human 268435456 -> 256M; human_to VAR BYTES sets VAR (no fork).
human_to() {
	local n=$2
	if ((n % (1 << 30) == 0)); then printf -v "$1" '%dG' $((n >> 30))
	elif ((n % (1 << 20) == 0)); then printf -v "$1" '%dM' $((n >> 20))
	else printf -v "$1" '%dK' $((n >> 10)); fi
}

human() {
	local h
	human_to h "$1"
	echo "$h"
}

# duration_s 30m -> 1800 (s, m, h; a bare number is seconds)
duration_s() {
	[[ $1 =~ ^([0-9]{1,9})([smh]?)$ ]] || return 1
	local n=$((10#${BASH_REMATCH[1]}))
	case ${BASH_REMATCH[2]} in
	m) echo $((n * 60)) ;;
	h) echo $((n * 3600)) ;;
	*) echo "$n" ;;
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

# json_opt VAR TEXT: as json_str, but null for an empty TEXT.
json_opt() {
	if [[ -z $2 ]]; then printf -v "$1" null; else json_str "$1" "$2"; fi
}

# join_by SEP WORD...: the words with SEP between them.
join_by() {
	local sep=$1 out w
	shift
	(($#)) || return 0
	out=$1
	shift
	for w in "$@"; do out+=$sep$w; done
	echo "$out"
}
