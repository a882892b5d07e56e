# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The model of the machine: the machine record (M_*), and what is plugged
# and in what state, as records with one function per transition. There are
# two instances with the same names behind them: "static", the parser's
# prediction of a scenario before QEMU starts, and "live", what the run has
# done so far. model_select points the MD_* names at one of them, so the
# predictor of a verb and its runner move the model with the same
# functions. Sourced by rig; calls only lib.sh.
#
# Machine (set by the header, read by every layer above):
#   M_CPUS M_SLOTS M_MAXMEM M_CPU M_BOOT; M_NODE_MEM[i] bytes per node (0 for
#   a memory-less node); M_VMEM names of the virtio-mem devices in order, and
#   per name M_VMEM_NODE, M_VMEM_MAX, M_VMEM_BLOCK, M_VMEM_REQ (at boot);
#   M_VMEM_TOTAL their max sizes summed.
# DIMM records (per name): MD_SIZE bytes, MD_NODE, MD_STATE (offline, online,
#   absent: its hot-add failed whole, unknown: the outcome cannot be
#   predicted, only unplug applies), MD_ZONE (Movable, Normal or '' for any),
#   MD_OTYPE (the online type last written), MD_ADDR (live: QEMU's address).
# virtio-mem records (per name): MD_VSIZE, the requested size so far.
# Loads: MD_LOAD[name]=1 while a load runs. MD_AUTO: auto_online_blocks.

# The x86_64 memory block size for guests under 64 GiB; the runner checks the
# guest agrees at boot.
readonly BLOCK_BYTES=$((128 << 20))
# struct page is 64 bytes: one page of memmap per 64 pages of memory.
readonly MEMMAP_DIV=64

declare -a M_NODE_MEM=() M_VMEM=()
declare -A M_VMEM_NODE=() M_VMEM_MAX=() M_VMEM_BLOCK=() M_VMEM_REQ=()
M_VMEM_TOTAL=0
declare -A MS_SIZE=() MS_NODE=() MS_STATE=() MS_ZONE=() MS_OTYPE=() MS_ADDR=() MS_VSIZE=() MS_LOAD=()
declare -A ML_SIZE=() ML_NODE=() ML_STATE=() ML_ZONE=() ML_OTYPE=() ML_ADDR=() ML_VSIZE=() ML_LOAD=()
MS_AUTO=offline ML_AUTO=offline

# model_select static|live
model_select() {
	local p
	case $1 in
	static) p=MS ;;
	live) p=ML ;;
	*) die "model_select: no model instance '$1'" ;;
	esac
	declare -gn MD_SIZE=${p}_SIZE MD_NODE=${p}_NODE MD_STATE=${p}_STATE MD_ZONE=${p}_ZONE \
		MD_OTYPE=${p}_OTYPE MD_ADDR=${p}_ADDR MD_VSIZE=${p}_VSIZE MD_LOAD=${p}_LOAD MD_AUTO=${p}_AUTO
	MODEL=$1
}

# model_reset AUTO: nothing plugged, virtio-mem at its boot size, no loads.
model_reset() {
	MD_SIZE=() MD_NODE=() MD_STATE=() MD_ZONE=() MD_OTYPE=() MD_ADDR=() MD_VSIZE=() MD_LOAD=()
	MD_AUTO=$1
	local v
	for v in ${M_VMEM[@]+"${M_VMEM[@]}"}; do MD_VSIZE[$v]=${M_VMEM_REQ[$v]}; done
}

# model_auto_get: AUTO_STATE and AUTO_ZONE, the state and zone a block
# comes up in by itself (auto_online_blocks).
model_auto_get() {
	AUTO_STATE=offline AUTO_ZONE=''
	case $MD_AUTO in
	online_movable) AUTO_STATE=online AUTO_ZONE=Movable ;;
	online_kernel) AUTO_STATE=online AUTO_ZONE=Normal ;;
	online*) AUTO_STATE=online ;;
	esac
}

# model_auto VALUE: auto_online_blocks changed.
model_auto() {
	MD_AUTO=$1
}

# model_dimm_plug NAME BYTES NODE OUTCOME: OUTCOME added (the blocks come up
# as auto_online_blocks says), absent (the add failed whole) or unknown.
model_dimm_plug() {
	MD_SIZE[$1]=$2 MD_NODE[$1]=$3 MD_OTYPE[$1]=''
	case $4 in
	added) model_auto_get; MD_STATE[$1]=$AUTO_STATE MD_ZONE[$1]=$AUTO_ZONE ;;
	*) MD_STATE[$1]=$4 MD_ZONE[$1]='' ;;
	esac
}

# model_dimm_place NAME ADDR: where QEMU put it (live only).
model_dimm_place() {
	MD_ADDR[$1]=$2
}

# model_dimm_online NAME TYPE: online_movable, online_kernel or online.
model_dimm_online() {
	MD_STATE[$1]=online MD_OTYPE[$1]=$2
	case $2 in
	online_movable) MD_ZONE[$1]=Movable ;;
	online_kernel) MD_ZONE[$1]=Normal ;;
	*) MD_ZONE[$1]='' ;;
	esac
}

model_dimm_offline() {
	MD_STATE[$1]=offline
}

# model_dimm_online_any NAME: online in whatever zone the kernel picked.
model_dimm_online_any() {
	MD_STATE[$1]=online MD_ZONE[$1]=''
}

model_dimm_unknown() {
	MD_STATE[$1]=unknown
}

model_dimm_unplug() {
	unset "MD_SIZE[$1]" "MD_NODE[$1]" "MD_STATE[$1]" "MD_ZONE[$1]" "MD_OTYPE[$1]" "MD_ADDR[$1]"
}

# model_dimm_blocks NAME: DB_FIRST and DB_COUNT, the DIMM's memory blocks
# (live: it needs the address).
model_dimm_blocks() {
	DB_FIRST=$((MD_ADDR[$1] / BLOCK_BYTES)) DB_COUNT=$((MD_SIZE[$1] / BLOCK_BYTES))
}

# model_dimm_bytes: MODEL_BYTES, the bytes of every DIMM in the model.
model_dimm_bytes() {
	local d
	MODEL_BYTES=0
	for d in "${!MD_SIZE[@]}"; do MODEL_BYTES=$((MODEL_BYTES + MD_SIZE[$d])); done
}

model_vmem_resize() {
	MD_VSIZE[$1]=$2
}

model_load_start() {
	MD_LOAD[$1]=1
}

model_load_stop() {
	unset "MD_LOAD[$1]"
}
