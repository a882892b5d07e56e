# SPDX-License-Identifier: GPL-2.0
# Checks after every step: new kernel reports in the console; QEMU's memory
# devices against the model; the guest's memory blocks (presence, node,
# state, zone) and its accounting (MemTotal, per node) against the model and
# the boot baseline. Each returns 0 or 1 (kernel problem) with diag lines.
# Sourced by rig.

TRIAGE=${TRIAGE:-$RIG_BUILD/tools/triage}

# Lines that start or belong to a kernel report; the triage names them.
readonly REPORT_RE='(BUG:|WARNING:|Oops|Kernel panic|general protection fault|kernel BUG at|INFO: task .* blocked|soft lockup|hard LOCKUP|rcu: INFO|detected stall|page allocation failure|vmemmap alloc failure|FAULT_INJECTION|list_add corruption|list_del corruption|KASAN|KFENCE|unreferenced object|possible .*deadlock|suspicious RCU usage|Call Trace:|rig: FAIL)'

# The console is followed as it grows, in bash: a quiet step costs no fork.
console_open() {
	exec {CON_FD}<"$RUN_DIR/console.log"
	CON_OFF=0 CON_PART='' CON_SUSPECT=0
}

# console_scan: read what the console gained; CON_OFF is the byte offset of
# the first line not read whole yet, CON_SUSPECT 1 when a line looked like a
# kernel report.
console_scan() {
	local line
	while IFS= read -r -u "$CON_FD" line; do
		line=$CON_PART$line CON_PART=
		CON_OFF=$((CON_OFF + ${#line} + 1))
		[[ $line =~ $REPORT_RE ]] && CON_SUSPECT=1
	done
	CON_PART+=$line
	[[ $CON_PART =~ $REPORT_RE ]] && CON_SUSPECT=1
	return 0
}

# check_console FROM: the kernel reports a step brought, named by the triage
# (build/tools/triage): reports an armed injector explains are noted, any
# other fails the step.
check_console() {
	local from=$1 st=0 flag title
	console_scan
	((CON_SUSPECT)) || return 0
	CON_SUSPECT=0
	"$TRIAGE" -f "$from" -j "$RUN_DIR/.step-reports.json" "$RUN_DIR/console.log" >/dev/null || st=$?
	((st <= 1)) || { diag "triage failed on console.log (status $st)"; return 2; }
	while read -r flag title; do
		if [[ $flag == true ]]; then
			diag "kernel report: $title"
		else
			diag "injected failure seen: $title"
		fi
	done < <(jq -r '.reports | sort_by(.unexplained | not) | .[] | "\(.unexplained) \(.title)"' \
		"$RUN_DIR/.step-reports.json")
	return $st
}

# guest_state: parse the agent's "state" into G_* (numbers validated before
# any arithmetic: they came from the guest).
guest_state() {
	local line
	declare -gA G_BLOCK G_NODEMEM G_VMEMMAP
	G_BLOCK=() G_NODEMEM=() G_VMEMMAP=() G_VCHECK=() G_MEMTOTAL='' G_AUTO=''
	for line in "${AGENT_OUT[@]}"; do
		if [[ $line =~ ^vmemmap\ ([a-z_]+)\ ([0-9]+)$ ]]; then
			G_VMEMMAP[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		elif [[ $line == "vmemmap-check "* ]]; then
			G_VCHECK+=("${line#vmemmap-check }")
		elif [[ $line =~ ^block\ ([0-9]+)\ ([0-9]+|-)\ ([a-z-]+)\ ([A-Za-z0-9\ -]+)$ ]]; then
			G_BLOCK[${BASH_REMATCH[1]}]="${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]}"
		elif [[ $line =~ ^memtotal\ ([0-9]+)$ ]]; then
			G_MEMTOTAL=${BASH_REMATCH[1]}
		elif [[ $line =~ ^node\ ([0-9]+)\ ([0-9]+)$ ]]; then
			G_NODEMEM[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		elif [[ $line =~ ^auto_online\ ([a-z_]+)$ ]]; then
			G_AUTO=${BASH_REMATCH[1]}
		elif [[ $line =~ ^block_size\ ([0-9]+)$ ]]; then
			G_BLOCK_SIZE=${BASH_REMATCH[1]}
		fi
	done
	[[ -n $G_MEMTOTAL ]]
}

# baseline_take: the guest as booted, before any step.
baseline_take() {
	agent_call state || return 1
	guest_state || return 1
	declare -gA B_BLOCK B_NODEMEM B_VMEMMAP
	B_BLOCK=() B_NODEMEM=() B_VMEMMAP=()
	local k
	for k in "${!G_BLOCK[@]}"; do B_BLOCK[$k]=${G_BLOCK[$k]}; done
	for k in "${!G_NODEMEM[@]}"; do B_NODEMEM[$k]=${G_NODEMEM[$k]}; done
	for k in "${!G_VMEMMAP[@]}"; do B_VMEMMAP[$k]=${G_VMEMMAP[$k]}; done
	MEMMAP_ON_MEMORY=0
	[[ " $SC_CMDLINE ${KVARIANT_CMDLINE:-} " =~ \ memory_hotplug\.memmap_on_memory=(1|y|Y|on)\  ]] && MEMMAP_ON_MEMORY=1
	HAVE_VMEMMAP=0
	[[ -n ${G_VMEMMAP[buddy_pages]:-} ]] && HAVE_VMEMMAP=1
	B_MEMTOTAL=$G_MEMTOTAL
	GUEST_DEFAULT_STATE=offline
	[[ $G_AUTO == online* ]] && GUEST_DEFAULT_STATE=online
	return 0
}

# check_devices: QEMU's view against the model.
check_devices() {
	local id addr size node bad=0 seen=" " line
	qmp_memory_devices || { diag "$QMP_ERROR"; return 2; }
	for line in "${QMP_MEMDEVS[@]}"; do
		read -r id addr size node <<<"$line"
		[[ $id == - ]] && continue
		seen+="$id "
		if [[ -z ${D_SIZE[$id]:-} ]]; then
			diag "QEMU has memory device $id, which the rig unplugged"
			bad=1
		elif [[ $size != "${D_SIZE[$id]}" || $node != "${D_NODE[$id]}" || $addr != "${D_ADDR[$id]}" ]]; then
			diag "QEMU has $id at $addr size $size node $node, expected ${D_ADDR[$id]} ${D_SIZE[$id]} node ${D_NODE[$id]}"
			bad=1
		fi
	done
	for id in "${!D_SIZE[@]}"; do
		[[ $seen == *" $id "* ]] || { diag "QEMU lost memory device $id"; bad=1; }
	done
	return $bad
}

# check_guest: the guest's blocks and accounting against model and baseline.
check_guest() {
	local st
	agent_call state
	st=$?
	((st == 0)) || { agent_failed $st "state"; return; }
	guest_state || { diag "unreadable guest state"; return 2; }
	local bad=0 b d first count i want node state zone expect_kb=0
	declare -A want_block=()
	for b in "${!B_BLOCK[@]}"; do want_block[$b]=base; done
	local -A node_kb=()
	local memmap_pages=0
	for d in "${!D_SIZE[@]}"; do
		[[ ${D_STATE[$d]} == absent ]] && continue
		# struct page is 64 bytes: 512 pages of memmap per 128 MiB
		memmap_pages=$((memmap_pages + D_SIZE[$d] / 262144))
		dimm_blocks "$d"; first=$DB_FIRST count=$DB_COUNT
		for ((i = first; i < first + count; i++)); do want_block[$i]=$d; done
		if [[ ${D_STATE[$d]} == online ]]; then
			local kb=$((D_SIZE[$d] / 1024))
			# memmap_on_memory: a one-block DIMM carries its own memmap
			# (size/64), which never reaches the buddy allocator.
			if ((MEMMAP_ON_MEMORY && D_SIZE[$d] == GUEST_BLOCK_SIZE)); then
				kb=$((kb - D_SIZE[$d] / 64 / 1024))
			fi
			expect_kb=$((expect_kb + kb))
			node_kb[${D_NODE[$d]}]=$((${node_kb[${D_NODE[$d]}]:-0} + kb))
		fi
	done
	for b in "${!G_BLOCK[@]}"; do
		[[ -n ${want_block[$b]:-} ]] && continue
		diag "guest has memory$b ($(human $((b * GUEST_BLOCK_SIZE)))), which belongs to no device: ${G_BLOCK[$b]}"
		bad=1
	done
	for b in "${!want_block[@]}"; do
		d=${want_block[$b]}
		if [[ -z ${G_BLOCK[$b]:-} ]]; then
			diag "guest lacks memory$b of ${d/#base/boot memory}"
			bad=1
			continue
		fi
		[[ $d == base ]] && continue
		read -r node state zone <<<"${G_BLOCK[$b]}"
		if [[ $node != "${D_NODE[$d]}" ]]; then
			diag "memory$b of $d is on node $node, plugged on node ${D_NODE[$d]}"
			bad=1
		fi
		if [[ $state != "${D_STATE[$d]}" ]]; then
			diag "memory$b of $d is $state, expected ${D_STATE[$d]}"
			bad=1
		elif [[ $state == online && -n ${D_ZONE[$d]} && $zone != "${D_ZONE[$d]}" ]]; then
			diag "memory$b of $d is in zone $zone, expected ${D_ZONE[$d]}"
			bad=1
		fi
	done
	for d in "${!D_SIZE[@]}"; do
		[[ ${D_STATE[$d]} == absent ]] || continue
		dimm_blocks "$d"; first=$DB_FIRST count=$DB_COUNT
		for ((i = first; i < first + count; i++)); do
			[[ -n ${G_BLOCK[$i]:-} ]] || continue
			diag "memory$i of $d exists, but its hot-add was to fail whole: ${G_BLOCK[$i]}"
			bad=1
		done
	done
	((HAVE_VMEMMAP)) && { check_vmemmap "$memmap_pages" || bad=1; }
	if ((G_MEMTOTAL != B_MEMTOTAL + expect_kb)); then
		diag "MemTotal is $G_MEMTOTAL kB, expected $((B_MEMTOTAL + expect_kb)) kB (boot $B_MEMTOTAL + online DIMMs $expect_kb)"
		bad=1
	fi
	for node in "${!B_NODEMEM[@]}"; do
		want=$((B_NODEMEM[$node] + ${node_kb[$node]:-0}))
		if [[ ${G_NODEMEM[$node]:-} != "$want" ]]; then
			diag "node $node MemTotal is ${G_NODEMEM[$node]:-missing} kB, expected $want kB"
			bad=1
		fi
	done
	return $bad
}

# check_vmemmap MEMMAP_PAGES: the series' view. vmemmap/check must say OK;
# the pages backing memmap (buddy and altmap) must be the boot baseline plus
# exactly what the plugged DIMMs need; with no DIMM plugged the vmemmap's
# page-table pages must be back at the baseline too.
check_vmemmap() {
	local want=$1 bad=0 have base l
	if [[ ${G_VCHECK[*]} != OK ]]; then
		for l in "${G_VCHECK[@]}"; do diag "vmemmap/check: $l"; done
		bad=1
	fi
	# A soak measures the accounting at its checkpoints, as a rate.
	((${SOAK:-0})) && return $bad
	have=$((G_VMEMMAP[buddy_pages] + ${G_VMEMMAP[altmap_pages]:-0}))
	base=$((B_VMEMMAP[buddy_pages] + ${B_VMEMMAP[altmap_pages]:-0}))
	if ((have != base + want)); then
		diag "vmemmap/stats: memmap pages (buddy+altmap) $have, expected $((base + want)) (boot $base + plugged DIMMs $want)"
		bad=1
	fi
	if ((${#D_SIZE[@]} == 0 && G_VMEMMAP[pgtable_pages] != B_VMEMMAP[pgtable_pages])); then
		diag "vmemmap/stats: pgtable_pages ${G_VMEMMAP[pgtable_pages]}, boot baseline ${B_VMEMMAP[pgtable_pages]}, with no DIMM plugged"
		bad=1
	fi
	return $bad
}
