# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Registered undo, as the net selftests' defer and LTP's save/restore: a step
# that turns a knob (an injector, auto_online_blocks, a running load)
# registers its undo on the line that turns it; the run's finish runs what
# is still registered, newest first, however the run ends. Sourced by rig.

declare -a DEFER_KEYS=()
declare -A DEFER_DESC=() DEFER_WORDS=()

# defer KEY DESCRIPTION CMD...: run CMD when the run finishes, in reverse
# order of registration; a KEY registered already keeps its first place.
# The words are stored as they are: nothing is evaluated.
defer() {
	local key=$1 desc=$2 IFS=$'\x1f'
	shift 2
	[[ -n ${DEFER_DESC[$key]+set} ]] && return 0
	DEFER_KEYS+=("$key")
	DEFER_DESC[$key]=$desc DEFER_WORDS[$key]="$*"
}

# undefer KEY: the step undid it itself.
undefer() {
	unset "DEFER_DESC[$1]" "DEFER_WORDS[$1]"
}

# defer_run: every undo still registered, newest first, while the guest
# answers; a failed one is a note in the reasons, never the verdict.
defer_run() {
	local i key
	local -a words
	for ((i = ${#DEFER_KEYS[@]} - 1; i >= 0; i--)); do
		key=${DEFER_KEYS[i]}
		[[ -n ${DEFER_DESC[$key]+set} ]] || continue
		IFS=$'\x1f' read -ra words <<<"${DEFER_WORDS[$key]}"
		"${words[@]}" >/dev/null 2>&1 || REASONS+=("note: could not ${DEFER_DESC[$key]} at the end")
		undefer "$key"
	done
	DEFER_KEYS=()
}

# defer_reset: the guest the undos were for is gone (restarted): forget them.
defer_reset() {
	DEFER_KEYS=() DEFER_DESC=() DEFER_WORDS=()
}
