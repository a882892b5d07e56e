# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# make check: guest_state (monitor-scripts/observe.sh) splits the guest's
# state lines with expansions and globs; here each line form is held to
# the regex that states it, over good lines and lines a broken guest or a
# cut reply could send. Sourced by tests/tier-check.sh.

# observe_spec: guest_state as regexes, the reference.
# shellcheck disable=SC2004 # G_BLOCK, G_NODEMEM and G_VMEMMAP are associative (observe.sh)
observe_spec() {
	local line
	G_BLOCK=() G_NODEMEM=() G_VMEMMAP=() G_VCHECK=() G_MEMTOTAL='' G_AUTO=''
	for line in "${AGENT_OUT[@]}"; do
		if [[ $line == "vmemmap-check "* ]]; then
			G_VCHECK+=("${line#vmemmap-check }")
		elif [[ $line =~ ^vmemmap\ ([a-z_]+)\ ([0-9]+)$ ]]; then
			G_VMEMMAP[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		elif [[ $line =~ ^block\ ([0-9]+)\ ([0-9]+|-)\ ([a-z-]+)\ ([A-Za-z0-9\ -]+)$ ]]; then
			G_BLOCK[${BASH_REMATCH[1]}]="${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]}"
		elif [[ $line =~ ^memtotal\ ([0-9]+)$ ]]; then
			G_MEMTOTAL=${BASH_REMATCH[1]}
		elif [[ $line =~ ^node\ ([0-9]+)\ ([0-9]+)$ ]]; then
			G_NODEMEM[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		elif [[ $line =~ ^auto_online\ ([a-z_]+)$ ]]; then
			G_AUTO=${BASH_REMATCH[1]}
		fi
	done
	[[ -n $G_MEMTOTAL ]]
}

# observe_dump FN: FN's status and what it parsed, as text.
observe_dump() {
	local st=0
	"$1" || st=$?
	echo "status $st"
	declare -p G_BLOCK G_NODEMEM G_VMEMMAP G_VCHECK G_MEMTOTAL G_AUTO
}

check_observe() {
	local -a good=(
		'block_size 134217728' 'memtotal 953596' 'node 0 504020' 'node 1 449576'
		'auto_online offline' 'block 0 0 online DMA32' 'block 32 1 offline -'
		'block 33 1 online Movable' 'block 34 - offline Normal Movable'
		'vmemmap buddy_pages 64' 'vmemmap injected_total 0' 'vmemmap-check OK'
		'vmemmap-check section 33 memmap not backed'
	)
	# each is ignored by the spec, or parsed differently from the good
	# line it was cut or bent from
	local -a bad=(
		'memtotal' 'memtotal ' 'memtotal 9x' 'memtotal 1 2' 'memtotal -5'
		'node 5' 'node  5' 'node 1 ' 'node 1 2 3' 'node x 5' 'node 1 5k'
		'auto_online' 'auto_online ' 'auto_online online movable' 'auto_online Online'
		'block 7' 'block 7 1' 'block 7 1 online' 'block 7 1 online ' 'block  7 1 online X'
		'block 7  1 online X' 'block 7 1  online X' 'block x 1 online X' 'block 7 x online X'
		'block 7 1 Online X' 'block 7 1 online X_Y' 'block 7 1 online  X' 'block 7 -- online X'
		'vmemmap 5' 'vmemmap abc' 'vmemmap a b 5' 'vmemmap  a 5' 'vmemmap a  5' 'vmemmap a 5 '
		'vmemmap A 5' 'vmemmap a -5' 'vmemmap a 5x' 'vmemmap a'
		'vmemmap-check' 'memtotalx 5' 'nodes 1 2' 'blocks 1 1 online X' ''
	)
	local l want got n=0 bad_lines=''
	AGENT_OUT=("${good[@]}")
	want=$(observe_dump observe_spec)
	got=$(observe_dump guest_state)
	if [[ $got != "$want" ]]; then
		t_fail "guest_state parses the state lines as their regexes do (good lines: $(diff <(echo "$want") <(echo "$got") | tr '\n' ' '))"
		return
	fi
	for l in "${bad[@]}"; do
		AGENT_OUT=("${good[@]}" "$l")
		want=$(observe_dump observe_spec)
		got=$(observe_dump guest_state)
		[[ $got == "$want" ]] || bad_lines+=" '$l'"
		n=$((n + 1))
	done
	if [[ -z $bad_lines ]]; then
		t_ok "guest_state parses the state lines as their regexes do ($n bent lines)"
	else
		t_fail "guest_state parses the state lines as their regexes do (differs on:$bad_lines)"
	fi
}
