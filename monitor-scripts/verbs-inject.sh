# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Fault injection verbs: arm and clear the guest's injectors
# (guest/lib/inject.sh), and read the series' vmemmap counters (see verbs.sh
# for the four functions a verb has). Sourced by rig.

# Injectors the guest can arm.
readonly INJECTORS="failslab fail_page_alloc fail_function fail_vmemmap fail_hotplug notifier"

verb_define inject 'NAME KEY=VALUE...' '' \
	'arm an injector in the guest (every knob saved first, restored by clear or at the end)'
verb_define clear '[NAME]' '' "put an injector's knobs back (all of them without NAME)"
verb_define expect 'vmemmap.COUNTER =|>=|<= N' '' \
	'the change of a vmemmap/stats counter (or injected_KIND) since boot'
verb_define expect-boot 'vmemmap.COUNTER =|>=|<= N' '' "a vmemmap counter's value at boot"

# --- inject NAME KEY=VALUE... ---------------------------------------------------
parse_inject() {
	(($# >= 1)) || sc_die "usage: inject NAME KEY=VALUE..."
	[[ " $INJECTORS " == *" $1 "* ]] || sc_die "inject: unknown injector '$1' ($INJECTORS)"
	local a key n
	local -a kv=()
	for a in "${@:2}"; do
		[[ $a =~ ^[A-Za-z_][A-Za-z0-9_-]*=-?[A-Za-z0-9_,+]*$ ]] || sc_die "inject $1: '$a' is not KEY=VALUE"
		# the kernel reads its knobs in base 0 (010 is 8, 08 is refused):
		# a number goes to the guest as decimal without leading zeros
		if [[ $a =~ ^([^=]*=-?)([0-9]+)$ ]]; then
			key=${BASH_REMATCH[1]}
			dec n "${BASH_REMATCH[2]}" || sc_die "inject $1: '$a': the number is past 10^15"
			a=$key$n
		fi
		kv+=("$a")
	done
	P_NAME=$1 P_ARGS=${kv[*]}
}

predict_inject() {
	return 0
}

print_inject() {
	P_TEXT="inject $P_NAME${P_ARGS:+ $P_ARGS}"
}

# inject_arm NAME KEY=VALUE...: armed until cleared, or the end of the run.
# An injector the kernel lacks makes the step, and so the run, a skip.
inject_arm() {
	local why st=0
	why=$(injector_lacking "$1") && { step_skip "$why"; return; }
	agent_call inject "$@" || st=$?
	if ((st == 1)) && [[ $AGENT_STATUS == 4 ]]; then
		step_skip "${AGENT_OUT[*]}"
		return
	fi
	agent_failed $st "inject $1" || return
	defer injectors "clear the injectors" agent_call -t 5000 clear all
}

run_inject() {
	local -a kv
	read -ra kv <<<"$ST_ARGS"
	inject_arm "$ST_NAME" "${kv[@]}"
}

# --- clear [NAME] -----------------------------------------------------------------
parse_clear() {
	(($# <= 1)) || sc_die "usage: clear [NAME]"
	[[ -z ${1:-} || " $INJECTORS " == *" $1 "* ]] || sc_die "clear: unknown injector '$1'"
	P_NAME=${1:-all}
}

predict_clear() {
	return 0
}

print_clear() {
	P_TEXT="clear $P_NAME"
}

run_clear() {
	agent_call clear "$ST_NAME"
	agent_failed $? "clear $ST_NAME" || return
	[[ $ST_NAME != all ]] || undefer injectors
}

# --- expect / expect-boot vmemmap.COUNTER OP N ------------------------------------
parse_expect() {
	local n
	[[ $# == 3 && $1 =~ ^vmemmap\.[a-z_]+$ && $2 =~ ^(=|\>=|\<=)$ ]] && dec n "$3" ||
		sc_die "usage: $P_VERB vmemmap.COUNTER =|>=|<= N"
	P_NAME=$1 P_ARGS="$2 $n"
}

predict_expect() {
	return 0
}

print_expect() {
	P_TEXT="$P_VERB $P_NAME $P_ARGS"
}

# expect_counter BOOT: the counter of the series' vmemmap/stats (or
# fail_vmemmap/injected as injected_KIND) against the step's bound: its
# change since boot, or (BOOT=1) its value at boot.
expect_counter() {
	local boot=$1 counter=${ST_NAME#vmemmap.} op n now base delta
	read -r op n <<<"$ST_ARGS"
	agent_call state
	agent_failed $? "expect" || return
	guest_state || { diag "unreadable guest state"; return 2; }
	now=${G_VMEMMAP[$counter]:-} base=${B_VMEMMAP[$counter]:-}
	if [[ -z $base ]] && ! ((HAVE_VMEMMAP)); then
		step_skip "the kernel has no vmemmap counters (the series' CONFIG_DEBUG_VMEMMAP)"
		return
	fi
	[[ -n $now && -n $base ]] || { diag "the kernel has no vmemmap counter $counter"; return 2; }
	delta=$((now - base))
	((boot)) && delta=$base
	case $op in
	'=') ((delta == n)) ;;
	'>=') ((delta >= n)) ;;
	'<=') ((delta <= n)) ;;
	esac && { diag "vmemmap.$counter: $base -> $now (change $delta)"; return 0; }
	if ((boot)); then
		diag "vmemmap.$counter was $base at boot, expected $op $n"
	else
		diag "vmemmap.$counter changed by $delta since boot ($base -> $now), expected $op $n"
	fi
	return 1
}

run_expect() {
	expect_counter 0
}

parse_expect_boot() { parse_expect "$@"; }
predict_expect_boot() { return 0; }
print_expect_boot() { print_expect; }
run_expect_boot() { expect_counter 1; }
