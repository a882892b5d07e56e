# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Seeded random steps: `random N` in a scenario expands, at load time, into N
# valid steps over the declared machine (plug, online movable, offline,
# unplug, loads with verification, injections with a known outcome), drawn
# from a generator seeded with SEED, so SEED=n replays the same list. Only
# operations whose outcome the model can predict are drawn: memory onlined to
# ZONE_NORMAL may legitimately refuse to go offline, so it is left out.
# Injections that hit known, unfixed 6.1 bugs (a failed populate WARNs in
# add_pages) are drawn only with FIXES=1, and injections only on a kernel
# that has the injector (kernel_offers): a stock kernel gets plain steps,
# and a seed gives the same steps on kernels that can take the same ones.
# Sourced by rig.

verb_define random 'N' '' 'N seeded random steps over the declared machine (SEED= replays them)'

parse_random() {
	(($# == 1)) || sc_die "usage: random STEPS"
	sc_random "$1"
	SC_RANDOM=1
}

predict_random() {
	return 0
}

# The drawn steps are in the list already; random itself is not a step.
print_random() {
	P_TEXT=''
}

# A 64-bit LCG in bash arithmetic (wraps the same everywhere), so the list
# does not depend on bash's own RANDOM.
rnd_seed() {
	RND_STATE=$(($1 ^ 0x5deece66d))
}

# rnd N: RND gets a number in [0, N).
rnd() {
	RND_STATE=$((RND_STATE * 6364136223846793005 + 1442695040888963407))
	RND=$((((RND_STATE >> 33) & 0x7fffffff) % $1))
}

# sc_random N: append N generated steps through sc_step, which checks each
# against the model like a written step.
sc_random() {
	local n=$1 i name size node d plugged online offline pick
	local -a names=() sizes=(128M 256M 384M)
	dec n "$n" 99999 && ((n > 0)) || sc_die "usage: random STEPS (1 to 99999)"
	[[ -n ${SEED:-} ]] || sc_die "random needs a seed"
	rnd_seed "$SEED"
	local can_inject=0
	kernel_offers CONFIG_FAIL_VMEMMAP && can_inject=1
	for ((i = 0; i < M_SLOTS && i < 8; i++)); do names+=("r$i"); done
	local -A load_on=()
	local made=0
	while ((made < n)); do
		plugged=() online=() offline=()
		for d in "${names[@]}"; do
			case ${MD_STATE[$d]:-} in
			online) plugged+=("$d") online+=("$d") ;;
			offline | absent) plugged+=("$d") offline+=("$d") ;;
			esac
		done
		rnd 100
		pick=$RND
		if ((pick < 30 && ${#plugged[@]} < ${#names[@]})); then
			for d in "${names[@]}"; do [[ -z ${MD_STATE[$d]:-} ]] && { name=$d; break; }; done
			rnd ${#sizes[@]}; size=${sizes[RND]}
			rnd ${#M_NODE_MEM[@]}; node=$RND
			to_bytes "$size"
			local total=$M_BOOT
			for d in "${plugged[@]}"; do total=$((total + MD_SIZE[$d])); done
			((total + BYTES <= M_MAXMEM)) || continue
			rnd 10
			if ((RND == 0 && can_inject)); then
				sc_step inject fail_vmemmap kinds=pmd times=-1
				sc_step plug "$name" "$size" "node=$node"
				sc_step clear fail_vmemmap
				made=$((made + 3))
			elif ((RND == 1 && can_inject)) && [[ ${FIXES:-0} == 1 ]]; then
				sc_step inject fail_vmemmap kinds=all times=-1
				sc_step plug "$name" "$size" "node=$node" expect-fail
				sc_step clear fail_vmemmap
				made=$((made + 3))
			else
				sc_step plug "$name" "$size" "node=$node"
				made=$((made + 1))
			fi
		elif ((pick < 50 && ${#offline[@]})); then
			rnd ${#offline[@]}; d=${offline[RND]}
			if [[ ${MD_STATE[$d]} == absent ]]; then
				sc_step unplug "$d"
			else
				sc_step online "$d" movable
			fi
			made=$((made + 1))
		elif ((pick < 65 && ${#online[@]})); then
			rnd ${#online[@]}; d=${online[RND]}
			# a load on the node first, so the offline migrates data
			if [[ -z ${load_on[$d]:-} ]]; then
				rnd 1000
				sc_step load "l$d" "node=${MD_NODE[$d]}" 32M "seed=$RND"
				load_on[$d]=1
				made=$((made + 1))
			fi
			sc_step offline "$d"
			sc_step verify "l$d"
			sc_step unload "l$d"
			unset "load_on[$d]"
			made=$((made + 3))
		elif ((pick < 85 && ${#offline[@]})); then
			rnd ${#offline[@]}; d=${offline[RND]}
			sc_step unplug "$d"
			made=$((made + 1))
		elif ((${#online[@]})); then
			rnd ${#online[@]}; d=${online[RND]}
			sc_step offline "$d"
			made=$((made + 1))
		fi
	done
	# end with nothing plugged, so the checks compare with the boot state
	for d in "${names[@]}"; do
		[[ -n ${load_on[$d]:-} ]] && sc_step unload "l$d"
		[[ ${MD_STATE[$d]:-} == online ]] && sc_step offline "$d"
		[[ -n ${MD_STATE[$d]:-} ]] && sc_step unplug "$d"
	done
	return 0
}
