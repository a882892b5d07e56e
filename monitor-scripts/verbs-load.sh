# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Load verbs: guest/src/rigload fills SIZE bytes bound to node N from a
# seed (the run's unless given), optionally holding PIN bytes with vmsplice;
# verify checks every byte, release drops the held pages, unload frees it
# all. A lost byte is a kernel problem. See verbs.sh for the four functions
# a verb has. Sourced by rig.

declare -gA LOAD_START=()

verb_define load 'NAME node=N SIZE [seed=S] [pin=SIZE]' '' \
	'rigload in the guest: SIZE bytes bound to node N from a seed; pin= holds pages'
verb_define verify 'NAME' '' "every byte of the load checked"
verb_define release 'NAME' '' "drop the load's held pages"
verb_define unload 'NAME' '' 'stop the load and free its memory'

parse_load() {
	[[ $# -ge 3 && $1 =~ ^[a-z][a-z0-9_-]{0,15}$ && $2 =~ ^node=([0-9]+)$ ]] && dec P_NODE "${BASH_REMATCH[1]}" 999 ||
		sc_die "usage: load NAME node=N SIZE [seed=S] [pin=SIZE]"
	P_NAME=$1
	((P_NODE < ${#M_NODE_MEM[@]})) || sc_die "load $1: node $P_NODE does not exist"
	to_bytes "$3" || sc_die "load $1: '$3' is not a size"
	P_BYTES=$BYTES
	# rigload gets every number decimal and without leading zeros (it
	# would read 0256M as octal)
	human_to P_ARGS "$BYTES"
	local a seed pin
	for a in "${@:4}"; do
		if [[ $a == seed=* ]]; then
			dec seed "${a#seed=}" || sc_die "load $1: '$a' is not seed=N (decimal, up to 10^15)"
			P_ARGS+=" seed=$seed"
		elif [[ $a =~ ^pin=([0-9]+[KMG]?)$ ]] && to_bytes "${BASH_REMATCH[1]}"; then
			human_to pin "$BYTES"
			P_ARGS+=" pin=$pin"
		else
			sc_die "load $1: '$a' is not seed=N or pin=SIZE"
		fi
	done
}

predict_load() {
	[[ -z ${MD_LOAD[$P_NAME]:-} ]] || sc_die "load $P_NAME: $P_NAME is loaded already"
	model_load_start "$P_NAME"
}

print_load() {
	P_TEXT="load $P_NAME node=$P_NODE $P_ARGS"
}

run_load() {
	local size seed=$SEED pin='' kv
	local -a words
	read -ra words <<<"$ST_ARGS"
	size=${words[0]}
	for kv in "${words[@]:1}"; do
		case $kv in
		seed=*) seed=${kv#seed=} ;;
		pin=*) pin=${kv#pin=} ;;
		esac
	done
	agent_call load-start "$ST_NAME" "$ST_NODE" "$size" "$seed" ${pin:+"$pin"}
	agent_failed $? "load $ST_NAME" || return
	model_load_start "$ST_NAME"
	# what started it, for a sweep that must start it again
	LOAD_START[$ST_NAME]="$ST_NODE $size $seed $pin"
	defer loads "stop the loads" agent_call -t 60000 load-stop-all
}

# verify, release and unload name a running load.
parse_load_name() {
	(($# == 1)) || sc_die "usage: $P_VERB NAME"
	P_NAME=$1
}

predict_load_name() {
	[[ -n ${MD_LOAD[$P_NAME]:-} ]] || sc_die "$P_VERB $P_NAME: no load named $P_NAME"
}

print_load_name() {
	P_TEXT="$P_VERB $P_NAME"
}

parse_verify() { parse_load_name "$@"; }
predict_verify() { predict_load_name; }
print_verify() { print_load_name; }

run_verify() {
	agent_call load-verify "$ST_NAME"
	agent_failed $? "verify $ST_NAME" || return
	diag "verify $ST_NAME: ${AGENT_OUT[*]}"
}

parse_release() { parse_load_name "$@"; }
predict_release() { predict_load_name; }
print_release() { print_load_name; }

run_release() {
	agent_call load-release "$ST_NAME"
	agent_failed $? "release $ST_NAME"
}

parse_unload() { parse_load_name "$@"; }
predict_unload() { predict_load_name && model_load_stop "$P_NAME"; }
print_unload() { print_load_name; }

# load_restart_on NODE: the loads bound to NODE stopped and started again
# as they were first started, so that their pages land where a fresh load's
# would (an offline sweep's DIMM) with the same bytes.
load_restart_on() {
	local name
	local -a a
	for name in "${!LOAD_START[@]}"; do
		[[ -n ${MD_LOAD[$name]:-} ]] || continue
		read -ra a <<<"${LOAD_START[$name]}"
		[[ ${a[0]} == "$1" ]] || continue
		agent_call load-stop "$name"
		agent_failed $? "unload $name" || return
		agent_call load-start "$name" "${a[@]}"
		agent_failed $? "load $name" || return
	done
}

run_unload() {
	agent_call load-stop "$ST_NAME"
	agent_failed $? "unload $ST_NAME" || return
	model_load_stop "$ST_NAME"
	((${#MD_LOAD[@]})) || undefer loads
}
