# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # a part of rig: what it sets, the other parts read
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

# vmem_boot: the virtio-mem devices as booted. Each plugs its boot-time
# requested size by itself (the driver's workqueue, after the agent may be
# up), so wait until QEMU reports that size and the guest has the blocks
# online (as memhp_default_state says), then take the model (VM_*) from the
# header and the addresses from QEMU. 1 with VMEM_ERROR when they never do.
vmem_boot() {
	local v line id addr size node max req block pending count want i deadline
	VM_NAMES=() VM_NODE=() VM_MAX=() VM_SIZE=() VM_ADDR=() VM_BLOCK=() VM_SEEN=()
	((${#M_VMEM[@]})) || return 0
	deadline=$(($((${EPOCHREALTIME/./} / 1000)) + ${VMEM_BOOT_TIMEOUT_MS:-60000}))
	while :; do
		qmp_memory_devices || { VMEM_ERROR=$QMP_ERROR; return 1; }
		pending=''
		for line in "${QMP_VMEMS[@]}"; do
			read -r id addr size node max req block <<<"$line"
			[[ -n ${M_VMEM_NODE[$id]:-} ]] || continue
			VM_ADDR[$id]=$addr VM_BLOCK[$id]=$block
			((size == req)) || pending+=" $id has $(human "$size") of $(human "$req");"
		done
		for v in "${M_VMEM[@]}"; do
			[[ -n ${VM_ADDR[$v]:-} ]] || { VMEM_ERROR="query-memory-devices does not list virtio-mem $v"; return 1; }
		done
		[[ -z $pending ]] && break
		if (($((${EPOCHREALTIME/./} / 1000)) > deadline)); then
			VMEM_ERROR="virtio-mem did not reach its boot size:$pending"
			return 1
		fi
		sleep 0.2
	done
	for v in "${M_VMEM[@]}"; do
		VM_NAMES+=("$v")
		VM_NODE[$v]=${M_VMEM_NODE[$v]} VM_MAX[$v]=${M_VMEM_MAX[$v]} VM_SIZE[$v]=${M_VMEM_REQ[$v]}
	done
	while :; do
		agent_call state && guest_state || { VMEM_ERROR="no guest state"; return 1; }
		pending=''
		for v in "${VM_NAMES[@]}"; do
			vmem_range "$v"
			count=0
			for ((i = VR_FIRST; i < VR_END; i++)); do
				[[ -n ${G_BLOCK[$i]:-} ]] || continue
				count=$((count + 1))
				[[ $G_AUTO != online* || ${G_BLOCK[$i]} == *" online "* ]] || pending+=" memory$i of $v is ${G_BLOCK[$i]};"
			done
			want=$(((VM_SIZE[$v] + GUEST_BLOCK_SIZE - 1) / GUEST_BLOCK_SIZE))
			((count == want)) || pending+=" $v has $count blocks, $want expected;"
		done
		[[ -z $pending ]] && return 0
		if (($((${EPOCHREALTIME/./} / 1000)) > deadline)); then
			VMEM_ERROR="the guest did not add virtio-mem's boot memory:$pending"
			return 1
		fi
		sleep 0.2
	done
}

# vmem_range NAME: VR_FIRST and VR_END (exclusive), the memory blocks of a
# virtio-mem device's region [memaddr, memaddr + max).
vmem_range() {
	VR_FIRST=$((VM_ADDR[$1] / GUEST_BLOCK_SIZE)) VR_END=$(((VM_ADDR[$1] + VM_MAX[$1]) / GUEST_BLOCK_SIZE))
}

# baseline_take: the guest as booted, before any step. Memory that
# virtio-mem devices plugged at boot is not part of the baseline: the
# checks count it with the devices.
baseline_take() {
	vmem_boot || { warn "${VMEM_ERROR:-virtio-mem}"; return 1; }
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
	GUEST_DEFAULT_STATE=offline BOOT_AUTO_ONLINE=$G_AUTO
	[[ $G_AUTO == online* ]] && GUEST_DEFAULT_STATE=online
	AUTO_ZONE=''
	[[ $G_AUTO == online_movable ]] && AUTO_ZONE=Movable
	[[ $G_AUTO == online_kernel ]] && AUTO_ZONE=Normal
	local v i kb
	B_VMEM_BLOCKS=0
	for v in "${VM_NAMES[@]}"; do
		vmem_range "$v"
		for ((i = VR_FIRST; i < VR_END; i++)); do
			[[ -n ${B_BLOCK[$i]:-} ]] || continue
			VM_SEEN[$i]=${B_BLOCK[$i]}
			unset "B_BLOCK[$i]"
			B_VMEM_BLOCKS=$((B_VMEM_BLOCKS + 1))
		done
		if [[ $GUEST_DEFAULT_STATE == online ]]; then
			kb=$((VM_SIZE[$v] / 1024))
			B_MEMTOTAL=$((B_MEMTOTAL - kb))
			[[ -z ${B_NODEMEM[${VM_NODE[$v]}]:-} ]] ||
				B_NODEMEM[${VM_NODE[$v]}]=$((B_NODEMEM[${VM_NODE[$v]}] - kb))
		fi
	done
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
	local max req block
	for line in "${QMP_VMEMS[@]}"; do
		read -r id addr size node max req block <<<"$line"
		seen+="$id "
		if [[ -z ${VM_SIZE[$id]:-} ]]; then
			diag "QEMU has virtio-mem device $id, which the scenario does not declare"
			bad=1
		elif [[ $size != "${VM_SIZE[$id]}" || $req != "${VM_SIZE[$id]}" ]]; then
			diag "QEMU has virtio-mem $id at size $(human "$size") (requested $(human "$req")), expected $(human "${VM_SIZE[$id]}")"
			bad=1
		elif [[ $addr != "${VM_ADDR[$id]}" || $node != "${VM_NODE[$id]}" || $max != "${VM_MAX[$id]}" ]]; then
			diag "QEMU has virtio-mem $id at $addr node $node max $max, expected ${VM_ADDR[$id]} node ${VM_NODE[$id]} max ${VM_MAX[$id]}"
			bad=1
		fi
	done
	for id in "${VM_NAMES[@]}"; do
		[[ $seen == *" $id "* ]] || { diag "QEMU lost virtio-mem device $id"; bad=1; }
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
	local slack_kb=0 vmem_blocks=0
	local -A node_slack=()
	((${#VM_NAMES[@]})) && { check_vmem_blocks || bad=1; }
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
		[[ $d == base || $d == vmem ]] && continue
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
	((HAVE_VMEMMAP)) && { check_vmemmap "$memmap_pages" $((${#D_SIZE[@]} + vmem_blocks + B_VMEM_BLOCKS)) || bad=1; }
	# slack: virtio-mem devices with online and offline blocks at once,
	# whose plugged memory is online only in part.
	if ((G_MEMTOTAL < B_MEMTOTAL + expect_kb || G_MEMTOTAL > B_MEMTOTAL + expect_kb + slack_kb)); then
		if ((slack_kb)); then
			diag "MemTotal is $G_MEMTOTAL kB, expected $((B_MEMTOTAL + expect_kb)) to $((B_MEMTOTAL + expect_kb + slack_kb)) kB (boot $B_MEMTOTAL + online DIMMs and virtio-mem $expect_kb, + up to $slack_kb of virtio-mem in part online)"
		else
			diag "MemTotal is $G_MEMTOTAL kB, expected $((B_MEMTOTAL + expect_kb)) kB (boot $B_MEMTOTAL + online DIMMs${VM_NAMES[0]:+ and virtio-mem} $expect_kb)"
		fi
		bad=1
	fi
	for node in "${!B_NODEMEM[@]}"; do
		want=$((B_NODEMEM[$node] + ${node_kb[$node]:-0}))
		if [[ -z ${G_NODEMEM[$node]:-} ]] || ((G_NODEMEM[$node] < want || G_NODEMEM[$node] > want + ${node_slack[$node]:-0})); then
			diag "node $node MemTotal is ${G_NODEMEM[$node]:-missing} kB, expected $want kB${node_slack[$node]:+ (+ up to ${node_slack[$node]})}"
			bad=1
		fi
	done
	return $bad
}

# check_vmem_blocks: the guest's side of each virtio-mem device, for
# check_guest (whose want_block, memmap_pages, expect_kb, node_kb, slack_kb,
# node_slack and vmem_blocks it adds to). The driver adds and removes whole
# memory blocks in the device's region as it plugs and unplugs subblocks:
# at least size/128M rounded up of them, each with a plugged subblock (2M at
# least), on the device's node. A block it adds comes up as
# memhp_default_state (auto_online_blocks) says at that time, and keeps its
# state (VM_SEEN). Online blocks count only their plugged subblocks in
# MemTotal (6.1's Sub Block Mode keeps the rest fake-offline), so the
# device adds its size when its blocks are online; its memmap is 512 pages
# per block, plugged in full or not.
check_vmem_blocks() {
	local v i bad=0 count on off min node state zone lo hi
	local -A seen=()
	for v in "${VM_NAMES[@]}"; do
		vmem_range "$v"
		count=0 on=0 off=0
		for ((i = VR_FIRST; i < VR_END; i++)); do
			[[ -n ${G_BLOCK[$i]:-} ]] || continue
			want_block[$i]=vmem
			count=$((count + 1))
			read -r node state zone <<<"${G_BLOCK[$i]}"
			if [[ $state == online ]]; then on=$((on + 1)); else off=$((off + 1)); fi
			if [[ $node != "${VM_NODE[$v]}" ]]; then
				diag "memory$i of virtio-mem $v is on node $node, the device's is ${VM_NODE[$v]}"
				bad=1
				continue
			fi
			if [[ -n ${VM_SEEN[$i]:-} ]]; then
				if [[ ${VM_SEEN[$i]} != "${G_BLOCK[$i]}" ]]; then
					diag "memory$i of virtio-mem $v is $state ${zone:-}, it was ${VM_SEEN[$i]#* }"
					bad=1
					continue
				fi
			elif [[ $state != "$GUEST_DEFAULT_STATE" ]]; then
				diag "memory$i of virtio-mem $v is $state, expected $GUEST_DEFAULT_STATE (auto_online_blocks)"
				bad=1
				continue
			elif [[ $state == online && -n ${AUTO_ZONE:-} && $zone != "$AUTO_ZONE" ]]; then
				diag "memory$i of virtio-mem $v is in zone $zone, expected $AUTO_ZONE"
				bad=1
				continue
			fi
			seen[$i]=${G_BLOCK[$i]}
		done
		min=$(((VM_SIZE[$v] + GUEST_BLOCK_SIZE - 1) / GUEST_BLOCK_SIZE))
		if ((count < min || count * (2 << 20) > VM_SIZE[$v])); then
			diag "virtio-mem $v has $count memory blocks for $(human "${VM_SIZE[$v]}") plugged (expected $min, at most one per 2M plugged)"
			bad=1
		fi
		vmem_blocks=$((vmem_blocks + count))
		memmap_pages=$((memmap_pages + count * GUEST_BLOCK_SIZE / 262144))
		# the plugged memory in online blocks, in kB: all of it, none,
		# or (some blocks offline) between what the offline ones can hold
		# and what the online ones can
		lo=$((VM_SIZE[$v] - off * GUEST_BLOCK_SIZE)) hi=$((on * GUEST_BLOCK_SIZE))
		((lo > 0)) || lo=0
		((hi < VM_SIZE[$v])) || hi=${VM_SIZE[$v]}
		((hi >= lo)) || hi=$lo
		lo=$((lo / 1024)) hi=$((hi / 1024))
		expect_kb=$((expect_kb + lo))
		node_kb[${VM_NODE[$v]}]=$((${node_kb[${VM_NODE[$v]}]:-0} + lo))
		if ((hi > lo)); then
			slack_kb=$((slack_kb + hi - lo))
			node_slack[${VM_NODE[$v]}]=$((${node_slack[${VM_NODE[$v]}]:-0} + hi - lo))
		fi
	done
	memmap_pages=$((memmap_pages - B_VMEM_BLOCKS * GUEST_BLOCK_SIZE / 262144))
	# Blocks that matched are remembered; a block removed is forgotten.
	VM_SEEN=()
	for i in "${!seen[@]}"; do VM_SEEN[$i]=${seen[$i]}; done
	return $bad
}

# check_vmemmap MEMMAP_PAGES HOTPLUGGED: the series' view. vmemmap/check
# must say OK; the pages backing memmap (buddy and altmap) must be the boot
# baseline plus exactly what the plugged DIMMs and virtio-mem blocks added
# since boot need; with nothing hot-added (HOTPLUGGED: DIMMs, virtio-mem
# blocks now and at boot) the vmemmap's page-table pages must be back at the
# baseline too.
check_vmemmap() {
	local want=$1 hotplugged=${2:-${#D_SIZE[@]}} bad=0 have base l
	if [[ ${G_VCHECK[*]} != OK ]]; then
		for l in "${G_VCHECK[@]}"; do diag "vmemmap/check: $l"; done
		bad=1
	fi
	# A soak measures the accounting at its checkpoints, as a rate.
	((${SOAK:-0})) && return $bad
	have=$((G_VMEMMAP[buddy_pages] + ${G_VMEMMAP[altmap_pages]:-0}))
	base=$((B_VMEMMAP[buddy_pages] + ${B_VMEMMAP[altmap_pages]:-0}))
	if ((have != base + want)); then
		diag "vmemmap/stats: memmap pages (buddy+altmap) $have, expected $((base + want)) (boot $base + plugged DIMMs${VM_NAMES[0]:+ and virtio-mem blocks since boot} $want)"
		bad=1
	fi
	if ((hotplugged == 0 && G_VMEMMAP[pgtable_pages] != B_VMEMMAP[pgtable_pages])); then
		diag "vmemmap/stats: pgtable_pages ${G_VMEMMAP[pgtable_pages]}, boot baseline ${B_VMEMMAP[pgtable_pages]}, with nothing hot-added"
		bad=1
	fi
	return $bad
}
