# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Device kind virtio-mem: virtio-mem-pci devices present from boot (QEMU 7.2
# cannot hot-add or remove one), grown and shrunk through requested-size.
# This file owns all the rig knows of the kind: its header line (and its
# printer, for shrunk scenarios), its QEMU arguments, its boot, the resize
# operation, the memory blocks it maps to, and its share of the
# expectations. Sourced by rig; calls the model, QMP, the agent and observe.

# QEMU's block-size default for a memory-backend-ram (the host's THP size).
readonly VMEM_QEMU_BLOCK=$((2 << 20))
# The guest plugs subblocks of max(block-size, pageblock): 2M pageblocks
# with HUGETLB_PAGE, 4M (MAX_ORDER-1) without. Sizes in whole 4M (and
# whole blocks) can be reached by either kernel.
readonly VMEM_GUEST_SB=$((4 << 20))
# A resize fails when QEMU's size stops moving for RESIZE_STALL_MS (6.1's
# driver retries a failed unplug only after 50 s, then backs off to 5 min),
# or when it takes longer than RESIZE_TIMEOUT_MS in all.
RESIZE_STALL_MS=${RESIZE_STALL_MS:-20000}
RESIZE_TIMEOUT_MS=${RESIZE_TIMEOUT_MS:-300000}

# Live state of the kind: per name QEMU's memaddr; VM_SEEN,
# the state each of their memory blocks was first seen in (a block keeps
# it); B_VMEM_BLOCKS, their blocks at boot.
declare -A VM_ADDR=() VM_SEEN=()
B_VMEM_BLOCKS=0

vmem_reset_machine() {
	M_VMEM=() M_VMEM_NODE=() M_VMEM_MAX=() M_VMEM_BLOCK=() M_VMEM_REQ=() M_VMEM_TOTAL=0
}

# vmem_size_check WHAT NAME BYTES: a requested size that both QEMU and the
# guest can reach.
vmem_size_check() {
	local what=$1 name=$2 size=$3 block=${M_VMEM_BLOCK[$2]:-$VMEM_QEMU_BLOCK} gran
	gran=$block
	((gran >= VMEM_GUEST_SB)) || gran=$VMEM_GUEST_SB
	((size <= M_VMEM_MAX[$name])) ||
		sc_die "$what: $(human "$size") is more than $name's max=$(human "${M_VMEM_MAX[$name]}")"
	((size % gran == 0)) ||
		sc_die "$what: $(human "$size") is not a multiple of $(human "$gran") (QEMU's block-size is $(human "$block"); the guest plugs whole subblocks of up to 4M)"
}

# vmem_header NAME node=N max=SIZE [block=SIZE] [requested=SIZE]: the
# scenario header line, after the machine line.
vmem_header() {
	local name=${1:-} kv key val node='' max='' block='' req=0 total
	[[ $name =~ ^[a-z][a-z0-9_-]{0,15}$ ]] ||
		sc_die "virtio-mem: '$name' is not a device name ([a-z][a-z0-9_-], up to 16)"
	[[ -z ${M_VMEM_NODE[$name]:-} ]] || sc_die "virtio-mem $name: declared twice"
	shift
	for kv in "$@"; do
		[[ $kv == *=* ]] || sc_die "virtio-mem $name: '$kv' is not key=value"
		key=${kv%%=*} val=${kv#*=}
		case $key in
		node)
			dec node "$val" && ((node < ${#M_NODE_MEM[@]})) ||
				sc_die "virtio-mem $name: node $val does not exist (the machine has ${#M_NODE_MEM[@]} nodes, 0 to $((${#M_NODE_MEM[@]} - 1)))"
			;;
		max) to_bytes "$val" || sc_die "virtio-mem $name: max=$val is not a size"; max=$BYTES ;;
		block) to_bytes "$val" || sc_die "virtio-mem $name: block=$val is not a size"; block=$BYTES ;;
		requested) to_bytes "$val" || sc_die "virtio-mem $name: requested=$val is not a size"; req=$BYTES ;;
		*) sc_die "virtio-mem $name: unknown key '$key' (node, max, block, requested)" ;;
		esac
	done
	[[ -n $node ]] || sc_die "virtio-mem $name: node=N is required"
	[[ -n $max ]] || sc_die "virtio-mem $name: max=SIZE is required"
	((max > 0 && max % BLOCK_BYTES == 0)) ||
		sc_die "virtio-mem $name: max=$(human "$max") is not a multiple of the guest's memory block size (128M)"
	if [[ -n $block ]]; then
		# QEMU: a power of two (below its 2M default it warns) that
		# divides the backend's size.
		((block >= 1 << 20 && (block & (block - 1)) == 0)) ||
			sc_die "virtio-mem $name: block=$(human "$block") is not a power of two of at least 1M"
		((max % block == 0)) ||
			sc_die "virtio-mem $name: block=$(human "$block") does not divide max=$(human "$max")"
	fi
	# QEMU gives memory devices maxmem minus the boot memory; a virtio-mem
	# device takes its whole max from it, and no DIMM slot.
	total=$((M_BOOT + M_VMEM_TOTAL + max))
	((total <= M_MAXMEM)) ||
		sc_die "virtio-mem $name: boot memory and virtio-mem max sizes come to $(human "$total"), more than maxmem=$(human "$M_MAXMEM")"
	M_VMEM+=("$name")
	M_VMEM_NODE[$name]=$node M_VMEM_MAX[$name]=$max M_VMEM_BLOCK[$name]=$block
	M_VMEM_TOTAL=$((M_VMEM_TOTAL + max))
	vmem_size_check "virtio-mem $name: requested" "$name" "$req"
	M_VMEM_REQ[$name]=$req
}

# vmem_header_print: the header lines back, as vmem_header reads them.
vmem_header_print() {
	local v
	for v in ${M_VMEM[@]+"${M_VMEM[@]}"}; do
		printf 'virtio-mem %s node=%s max=%s%s requested=%s\n' "$v" "${M_VMEM_NODE[$v]}" \
			"$(human "${M_VMEM_MAX[$v]}")" "${M_VMEM_BLOCK[$v]:+ block=$(human "${M_VMEM_BLOCK[$v]}")}" \
			"$(vmem_human "${M_VMEM_REQ[$v]}")"
	done
}

# vmem_needs: the kernel options a machine with virtio-mem needs.
vmem_needs() {
	((${#M_VMEM[@]})) && echo CONFIG_VIRTIO_PCI CONFIG_VIRTIO_MEM
	return 0
}

# vmem_qemu_args: the devices for QEMU_CMD. The machine (q35) has the PCI
# bus they need, also with -nodefaults.
vmem_qemu_args() {
	local v
	for v in ${M_VMEM[@]+"${M_VMEM[@]}"}; do
		QEMU_CMD+=(-object "memory-backend-ram,id=vmem-$v,size=$((M_VMEM_MAX[$v] >> 20))M")
		QEMU_CMD+=(-device "virtio-mem-pci,id=$v,memdev=vmem-$v,node=${M_VMEM_NODE[$v]},requested-size=${M_VMEM_REQ[$v]}${M_VMEM_BLOCK[$v]:+,block-size=${M_VMEM_BLOCK[$v]}}")
	done
}

vmem_human() { # BYTES: 0 or 512M
	if (($1)); then human "$1"; else echo 0; fi
}

# vmem_range NAME: VR_FIRST and VR_END (exclusive), the memory blocks of a
# device's region [memaddr, memaddr + max).
vmem_range() {
	VR_FIRST=$((VM_ADDR[$1] / BLOCK_BYTES)) VR_END=$(((VM_ADDR[$1] + M_VMEM_MAX[$1]) / BLOCK_BYTES))
}

# vmem_boot: the devices as booted. Each plugs its boot-time requested size
# by itself (the driver's workqueue, after the agent may be up), so wait
# until QEMU reports that size and the guest has the blocks online (as
# memhp_default_state says), and take the addresses from QEMU. 1 with
# VMEM_ERROR when they never do.
vmem_boot() {
	local v line id addr size req pending count want i deadline now
	VM_ADDR=() VM_SEEN=()
	((${#M_VMEM[@]})) || return 0
	now_ms now
	deadline=$((now + ${VMEM_BOOT_TIMEOUT_MS:-60000}))
	while :; do
		qmp_memory_devices || { VMEM_ERROR=$QMP_ERROR; return 1; }
		pending=''
		for line in "${QMP_VMEMS[@]}"; do
			read -r id addr size _ _ req _ <<<"$line"
			[[ -n ${M_VMEM_NODE[$id]:-} ]] || continue
			VM_ADDR[$id]=$addr
			((size == req)) || pending+=" $id has $(human "$size") of $(human "$req");"
		done
		for v in "${M_VMEM[@]}"; do
			[[ -n ${VM_ADDR[$v]:-} ]] || { VMEM_ERROR="query-memory-devices does not list virtio-mem $v"; return 1; }
		done
		[[ -z $pending ]] && break
		now_ms now
		((now <= deadline)) || { VMEM_ERROR="virtio-mem did not reach its boot size:$pending"; return 1; }
		sleep 0.2
	done
	while :; do
		agent_call state && guest_state || { VMEM_ERROR="no guest state"; return 1; }
		pending=''
		for v in "${M_VMEM[@]}"; do
			vmem_range "$v"
			count=0
			for ((i = VR_FIRST; i < VR_END; i++)); do
				[[ -n ${G_BLOCK[$i]:-} ]] || continue
				count=$((count + 1))
				[[ $G_AUTO != online* || ${G_BLOCK[$i]} == *" online "* ]] || pending+=" memory$i of $v is ${G_BLOCK[$i]};"
			done
			want=$(((MD_VSIZE[$v] + BLOCK_BYTES - 1) / BLOCK_BYTES))
			((count == want)) || pending+=" $v has $count blocks, $want expected;"
		done
		[[ -z $pending ]] && return 0
		now_ms now
		((now <= deadline)) || { VMEM_ERROR="the guest did not add virtio-mem's boot memory:$pending"; return 1; }
		sleep 0.2
	done
}

# vmem_baseline: the boot baseline (B_*) without the devices' memory: the
# checks count it with the devices. Their blocks keep the state they
# booted in.
vmem_baseline() {
	local v i kb
	B_VMEM_BLOCKS=0
	for v in ${M_VMEM[@]+"${M_VMEM[@]}"}; do
		vmem_range "$v"
		for ((i = VR_FIRST; i < VR_END; i++)); do
			[[ -n ${B_BLOCK[$i]:-} ]] || continue
			VM_SEEN[$i]=${B_BLOCK[$i]}
			unset "B_BLOCK[$i]"
			B_VMEM_BLOCKS=$((B_VMEM_BLOCKS + 1))
		done
		model_auto_get
		if [[ $AUTO_STATE == online ]]; then
			kb=$((MD_VSIZE[$v] / 1024))
			B_MEMTOTAL=$((B_MEMTOTAL - kb))
			[[ -z ${B_NODEMEM[${M_VMEM_NODE[$v]}]:-} ]] ||
				B_NODEMEM[${M_VMEM_NODE[$v]}]=$((B_NODEMEM[${M_VMEM_NODE[$v]}] - kb))
		fi
	done
}

# vmem_wait NAME BYTES: until QEMU says the device's size is BYTES. QEMU
# sends MEMORY_DEVICE_SIZE_CHANGE as the guest plugs and unplugs, but at most
# one a second per device, holding the last one back until the second ends:
# between events the size is polled (qom-get). 0 reached: VW_MS from VW_T0
# (us, taken before the qom-set) until QEMU had it (the event's timestamp,
# or the poll that saw it); 1 the size stopped short at VW_SIZE (no change
# for RESIZE_STALL_MS, or RESIZE_TIMEOUT_MS in all); 2 QMP failed.
vmem_wait() {
	local name=$1 want=$2 now last=-1 moved deadline
	deadline=$((VW_T0 / 1000 + RESIZE_TIMEOUT_MS)) moved=$((VW_T0 / 1000))
	VW_EVENTS=0 VW_SIZE=- VW_MS=-
	while :; do
		if qmp_wait_event 100 "MEMORY_DEVICE_SIZE_CHANGE:\"id\": \"$name\""; then
			VW_EVENTS=$((VW_EVENTS + 1))
			if [[ $QMP_EVENT =~ \"size\":\ ([0-9]+) ]] && ((BASH_REMATCH[1] == want)); then
				VW_SIZE=$want
				[[ $QMP_EVENT =~ \"seconds\":\ ([0-9]+),\ \"microseconds\":\ ([0-9]+) ]] &&
					VW_MS=$(((BASH_REMATCH[1] * 1000000 + 10#${BASH_REMATCH[2]} - VW_T0) / 1000))
				return 0
			fi
		fi
		qemu_alive || return 2
		qmp_qom_get "/machine/peripheral/$name" size || return 2
		[[ $QOM_VALUE =~ ^[0-9]+$ ]] || { QMP_ERROR="qom-get $name size: $QOM_VALUE"; return 2; }
		VW_SIZE=$QOM_VALUE
		now_ms now
		if ((VW_SIZE == want)); then
			VW_MS=$((now - VW_T0 / 1000))
			return 0
		fi
		((VW_SIZE == last)) || last=$VW_SIZE moved=$now
		((now - moved < RESIZE_STALL_MS && now < deadline)) || return 1
	done
}

# vmem_resize NAME BYTES: qom-set requested-size and wait for QEMU's size
# (vmem_wait's statuses; 2 with QMP_ERROR). The live model follows once
# QEMU has the size.
vmem_resize() {
	local st
	qmp_forget "\"id\": \"$1\""
	VW_T0=${EPOCHREALTIME/./}
	qmp_qom_set "/machine/peripheral/$1" requested-size "$2" || return 2
	vmem_wait "$1" "$2"
	st=$?
	((st == 0)) && model_vmem_resize "$1" "$2"
	return $st
}

# vmem_expect: the kind's share of the expectations (see expect_reset in
# checks.sh). The driver adds and removes whole memory blocks in the
# device's region as it plugs and unplugs subblocks: at least size/128M
# rounded up of them, each with a plugged subblock (2M at least), on the
# device's node. A block it adds comes up as auto_online_blocks says at that
# time, and keeps its state (VM_SEEN). Online blocks count only their
# plugged subblocks in MemTotal (6.1's Sub Block Mode keeps the rest
# fake-offline), so the device adds its size when its blocks are online;
# its memmap is 512 pages per block, plugged in full or not. The blocks
# that match go to EXP_VMEM_SEEN: the guest check makes them VM_SEEN (a
# block removed is forgotten).
vmem_expect() {
	local v i count on off min node state zone lo hi auto_state auto_zone
	local -A seen=()
	model_auto_get
	auto_state=$AUTO_STATE auto_zone=$AUTO_ZONE
	for v in ${M_VMEM[@]+"${M_VMEM[@]}"}; do
		EXP_QEMU[$v]="virtio-mem ${VM_ADDR[$v]} ${MD_VSIZE[$v]} ${M_VMEM_NODE[$v]} ${M_VMEM_MAX[$v]}"
		vmem_range "$v"
		count=0 on=0 off=0
		for ((i = VR_FIRST; i < VR_END; i++)); do
			[[ -n ${G_BLOCK[$i]:-} ]] || continue
			count=$((count + 1))
			read -r node state zone <<<"${G_BLOCK[$i]}"
			if [[ $state == online ]]; then on=$((on + 1)); else off=$((off + 1)); fi
			EXP_BLOCK[$i]="virtio-mem $v"
			EXP_BLOCK_NODE[$i]=${M_VMEM_NODE[$v]}
			if [[ -n ${VM_SEEN[$i]:-} ]]; then
				# as it was first seen, zones and all
				EXP_BLOCK_EXACT[$i]=${VM_SEEN[$i]}
				[[ ${G_BLOCK[$i]} == "${VM_SEEN[$i]}" ]] && seen[$i]=${G_BLOCK[$i]}
				continue
			fi
			EXP_BLOCK_STATE[$i]=$auto_state EXP_BLOCK_ZONE[$i]=$auto_zone
			[[ $node == "${M_VMEM_NODE[$v]}" && $state == "$auto_state" ]] &&
				[[ $state != online || -z $auto_zone || $zone == "$auto_zone" ]] &&
				seen[$i]=${G_BLOCK[$i]}
		done
		min=$(((MD_VSIZE[$v] + BLOCK_BYTES - 1) / BLOCK_BYTES))
		if ((count < min || count * (2 << 20) > MD_VSIZE[$v])); then
			EXP_PROBLEMS+=("virtio-mem $v has $count memory blocks for $(human "${MD_VSIZE[$v]}") plugged (expected $min, at most one per 2M plugged)")
		fi
		EXP_DEVICE_BLOCKS=$((EXP_DEVICE_BLOCKS + count))
		EXP_MEMMAP=$((EXP_MEMMAP + count * BLOCK_BYTES / 4096 / MEMMAP_DIV))
		# the plugged memory in online blocks, in kB: all of it, none,
		# or (some blocks offline) between what the offline ones can hold
		# and what the online ones can
		lo=$((MD_VSIZE[$v] - off * BLOCK_BYTES)) hi=$((on * BLOCK_BYTES))
		((lo > 0)) || lo=0
		((hi < MD_VSIZE[$v])) || hi=${MD_VSIZE[$v]}
		((hi >= lo)) || hi=$lo
		lo=$((lo / 1024)) hi=$((hi / 1024))
		EXP_KB=$((EXP_KB + lo))
		EXP_NODE_KB[${M_VMEM_NODE[$v]}]=$((${EXP_NODE_KB[${M_VMEM_NODE[$v]}]:-0} + lo))
		if ((hi > lo)); then
			EXP_SLACK_KB=$((EXP_SLACK_KB + hi - lo))
			EXP_NODE_SLACK[${M_VMEM_NODE[$v]}]=$((${EXP_NODE_SLACK[${M_VMEM_NODE[$v]}]:-0} + hi - lo))
		fi
	done
	EXP_MEMMAP=$((EXP_MEMMAP - B_VMEM_BLOCKS * BLOCK_BYTES / 4096 / MEMMAP_DIV))
	EXP_DEVICE_BLOCKS=$((EXP_DEVICE_BLOCKS + B_VMEM_BLOCKS))
	EXP_VMEM_SEEN=()
	for i in "${!seen[@]}"; do EXP_VMEM_SEEN[$i]=${seen[$i]}; done
}
