# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# sweep-nth NAME SIZE node=N KINDS [MAX]: fail the vmemmap allocations of
# one hot-add of the DIMM from the 1st on, then from the 2nd on, ...
# (fail_vmemmap space=N times=-1, KINDS as its kinds file takes them; a
# fallback's allocations fail too, so the Nth is a failure the add cannot
# get round), until an add goes through with nothing injected.
# After each injected failure the add must have failed whole (no blocks,
# memmap pages and vmemmap/check at boot values) or, where the kernel has a
# fallback (a PMD block falls back to base pages), succeeded whole. Each
# round is a diagnostic line. The step ends with the DIMM plugged. Sourced
# by rig.

verb_define sweep-nth 'NAME SIZE node=N KINDS [MAX]' '' \
	'fail the 1st, 2nd, ... vmemmap allocation of KINDS in a hot-add until one needs no more'

parse_sweep_nth() {
	(($# == 4 || $# == 5)) || sc_die "usage: sweep-nth NAME SIZE node=N KINDS [MAX]"
	parse_plug "$1" "$2" "$3"
	[[ $4 =~ ^[a-z+,]+$ ]] || sc_die "sweep-nth: '$4' is not a list of fail_vmemmap kinds"
	local max=''
	[[ -z ${5:-} ]] || { dec max "$5" 10000 && ((max > 0)); } || sc_die "sweep-nth: '$5' is not a count"
	P_ARGS="$4${max:+ $max}"
}

predict_sweep_nth() {
	predict_plug
}

print_sweep_nth() {
	local h
	human_to h "$P_BYTES"
	P_TEXT="sweep-nth $P_NAME $h node=$P_NODE $P_ARGS"
}

run_sweep_nth() {
	local name=$ST_NAME kinds max n before after st present
	read -r kinds max <<<"$ST_ARGS"
	max=${max:-32}
	for ((n = 1; n <= max; n++)); do
		agent_call state && guest_state || { diag "sweep: unreadable guest state"; return 2; }
		before=${G_VMEMMAP[injected_total]:-}
		[[ -n $before ]] || { diag "sweep: the kernel has no fail_vmemmap"; return 2; }
		inject_arm fail_vmemmap "kinds=$kinds" "space=$n" times=-1 || { st=$?; diag "sweep: arm nth=$n"; return $st; }
		st=0
		dimm_plug "$name" "$ST_BYTES" "$ST_NODE" expect-fail || st=$?
		((st == 0)) || return $st
		agent_call clear fail_vmemmap
		agent_failed $? "sweep: clear" || return
		# _OST came after the ACPI handler: whatever blocks the add
		# made exist by now.
		agent_call state && guest_state || { diag "sweep: unreadable guest state"; return 2; }
		after=${G_VMEMMAP[injected_total]}
		dimm_present "$name"
		present=$DB_PRESENT
		((present)) && model_dimm_plug "$name" "$ST_BYTES" "$ST_NODE" added
		st=0
		check_guest || st=$?
		if ((st != 0)); then
			diag "sweep: nth=$n ($((after - before)) injected) left the add half-done (above)"
			return "$st"
		fi
		if ((after == before)); then
			diag "sweep: nth=$n injected nothing: the add needs $((n - 1)) vmemmap allocations of kinds $kinds"
			((present)) && return 0
			diag "sweep: yet the add failed"
			return 1
		fi
		if ((present)); then
			diag "sweep: nth=$n failed an allocation, the kernel fell back and the add succeeded whole"
		else
			diag "sweep: nth=$n failed the add, rolled back whole"
		fi
		dimm_unplug "$name" '' || return
	done
	diag "sweep: still injecting after $max allocations"
	return 1
}
