# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The step vocabulary: one row per verb in a table (verb_define: usage, the
# suffixes it takes, a help line), and per verb V four functions in the
# verbs-*.sh files: parse_V WORDS... fills the step's fields once (P_NAME,
# P_BYTES, P_NODE, P_ARGS; sc_step has split off P_XF and P_ERRNOS);
# predict_V moves the static model and refuses what cannot work, before
# boot; print_V sets P_TEXT, the canonical text that the KTAP, summary.json
# and shrunk scenarios carry; run_V runs the step from its fields (ST_*).
# (random, in random.sh, only expands into other steps: it has no run_.)
# scenarios/README.md documents the same table; a test holds them together.
# Sourced by rig.

declare -A VERB_USAGE=() VERB_SUFFIX=() VERB_HELP=() VERB_NO_ERRNO=()
declare -a VERB_ORDER=()

# verb_define NAME USAGE SUFFIXES HELP: SUFFIXES is a space-separated list
# of expect-fail (no errno: VERB_NO_ERRNO[NAME] says why), expect-fail[ERRNO]
# (errnos allowed), may-fail.
verb_define() {
	VERB_ORDER+=("$1")
	VERB_USAGE[$1]=$2 VERB_SUFFIX[$1]=$3 VERB_HELP[$1]=$4
}

# verbs_print: the table, one verb a line: NAME<TAB>USAGE<TAB>SUFFIXES<TAB>HELP.
verbs_print() {
	local v
	for v in "${VERB_ORDER[@]}"; do
		printf '%s\t%s\t%s\t%s\n' "$v" "${VERB_USAGE[$v]}" "${VERB_SUFFIX[$v]}" "${VERB_HELP[$v]}"
	done
}

# Parsed steps, by index: S_TEXT (canonical), S_VERB, S_NAME, S_BYTES,
# S_NODE, S_XF ('' | expect-fail | may-fail), S_ERRNOS, S_ARGS.
declare -a S_TEXT=() S_VERB=() S_NAME=() S_BYTES=() S_NODE=() S_XF=() S_ERRNOS=() S_ARGS=()

steps_reset() {
	S_TEXT=() S_VERB=() S_NAME=() S_BYTES=() S_NODE=() S_XF=() S_ERRNOS=() S_ARGS=()
}

# sc_step VERB WORDS...: one step through the table: its suffix split off
# and checked (P_XFT: the suffix as the canonical text writes it), then the
# verb's parser, predictor and printer; appended to the step list (unless
# the verb only expands into other steps).
sc_step() {
	local verb=${1:-} fn
	shift
	[[ -n ${VERB_USAGE[$verb]+set} ]] || sc_die "unknown verb '$verb' (see scenarios/README.md)"
	local takes=" ${VERB_SUFFIX[$verb]} " xf='' errnos=''
	local -a words=()
	while (($#)); do
		if [[ $1 == may-fail ]]; then
			(($# == 1)) || sc_die "$verb: may-fail ends the step"
			[[ $takes == *" may-fail "* ]] || sc_die "$verb takes no may-fail"
			xf=may-fail
			break
		fi
		if [[ $1 == expect-fail ]]; then
			(($# <= 2)) || sc_die "$verb: expect-fail takes one list of errnos (EBUSY,EINTR)"
			[[ -z ${2:-} || $2 =~ ^E[A-Z0-9]+(,E[A-Z0-9]+)*$ ]] ||
				sc_die "$verb: '$2' is not an errno list like EBUSY,EINTR"
			xf=expect-fail errnos=${2:-}
			break
		fi
		words+=("$1")
		shift
	done
	[[ -z $xf || $takes == *" expect-fail"* || $xf == may-fail ]] || sc_die "$verb takes no expect-fail"
	P_VERB=$verb P_NAME='' P_BYTES='' P_NODE='' P_ARGS='' P_XF=$xf P_ERRNOS=$errnos P_TEXT=''
	[[ -z $errnos || $takes == *" expect-fail[ERRNO] "* ]] ||
		sc_die "$verb: expect-fail takes no errno (${VERB_NO_ERRNO[$verb]:-it fails without one})"
	# the verb's part of its function names: hyphens become _
	fn=${verb//-/_}
	P_XFT=${xf:+ $xf}${errnos:+ $errnos}
	"parse_$fn" "${words[@]}"
	"predict_$fn"
	"print_$fn"
	[[ -n $P_TEXT ]] || return 0
	S_TEXT+=("$P_TEXT") S_VERB+=("$verb") S_NAME+=("$P_NAME") S_BYTES+=("$P_BYTES")
	S_NODE+=("$P_NODE") S_XF+=("$P_XF") S_ERRNOS+=("$P_ERRNOS") S_ARGS+=("$P_ARGS")
}

# step_select N: the fields of step N (0-based) into ST_*.
step_select() {
	ST_TEXT=${S_TEXT[$1]} ST_VERB=${S_VERB[$1]} ST_NAME=${S_NAME[$1]} ST_BYTES=${S_BYTES[$1]}
	ST_NODE=${S_NODE[$1]} ST_XF=${S_XF[$1]} ST_ERRNOS=${S_ERRNOS[$1]} ST_ARGS=${S_ARGS[$1]}
}

# step_run: the selected step's runner.
step_run() {
	"run_${ST_VERB//-/_}"
}

# step_args VAR TEXT: VAR gets the words after the verb (none for "check").
step_args() {
	local a=''
	[[ $2 == *" "* ]] && a=${2#* }
	printf -v "$1" '%s' "$a"
}

# Shared by the parsers: a device or load name, a size, a node.
parse_name() { # WHAT NAME
	[[ $2 =~ ^[a-z][a-z0-9_-]{0,15}$ ]] || sc_die "$1: '$2' is not a device name ([a-z][a-z0-9_-], up to 16)"
}

parse_node() { # WHAT WORD: P_NODE
	[[ $2 =~ ^node=([0-9]+)$ ]] && dec P_NODE "${BASH_REMATCH[1]}" 999 || sc_die "$1: '$2' should be node=N"
	((P_NODE < ${#M_NODE_MEM[@]})) ||
		sc_die "$1: node $P_NODE does not exist (the machine has ${#M_NODE_MEM[@]} nodes, 0 to $((${#M_NODE_MEM[@]} - 1)))"
}
