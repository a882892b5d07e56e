# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The virtio-mem verb: resize a device declared in the header (see
# verbs.sh for the four functions a verb has). Sourced by rig.

# Once QEMU has the size, the guest gets RESIZE_SETTLE_MS to show the blocks
# and MemTotal.
RESIZE_SETTLE_MS=${RESIZE_SETTLE_MS:-10000}

verb_define resize 'NAME SIZE' 'expect-fail' \
	"qom-set a virtio-mem device's requested-size; wait for QEMU's size and the guest's blocks and MemTotal"
VERB_NO_ERRNO[resize]='the device reports only sizes'

parse_resize() {
	(($# == 2)) || sc_die "usage: resize NAME SIZE [expect-fail]"
	P_NAME=$1
	[[ -n ${M_VMEM_NODE[$1]:-} ]] ||
		sc_die "resize $1: no virtio-mem device $1 (declare it in the header: virtio-mem NAME node=N max=SIZE)"
	to_bytes "$2" || sc_die "resize $1: '$2' is not a size"
	P_BYTES=$BYTES
	vmem_size_check "resize $1" "$1" "$P_BYTES"
}

predict_resize() {
	[[ -n $P_XF ]] || model_vmem_resize "$P_NAME" "$P_BYTES"
}

print_resize() {
	P_TEXT="resize $P_NAME $(vmem_human "$P_BYTES")$P_XFT"
}

# resize_settle: once QEMU has the size, the guest may still be adding and
# onlining (or removing) the last memory block: the checks are run quietly
# until they pass, for up to RESIZE_SETTLE_MS (the step's own checks then
# say what is wrong). VS_MS: how long it took.
resize_settle() {
	local t0=${EPOCHREALTIME/./} st
	local -a keep=("${STEP_DIAG[@]}")
	while :; do
		STEP_DIAG=()
		st=0
		check_guest || st=$?
		((st == 0 || st == 2 || GUEST_HUNG)) && break
		((${EPOCHREALTIME/./} - t0 < RESIZE_SETTLE_MS * 1000)) || break
		sleep 0.1
	done
	STEP_DIAG=("${keep[@]}")
	VS_MS=$(((${EPOCHREALTIME/./} - t0) / 1000))
}

# A guest that stops short (memory it cannot unplug) fails the step, unless
# expect-fail: then the requested size goes back to the old one, which the
# guest must reach again, so the model still holds.
run_resize() {
	local name=$ST_NAME want=$ST_BYTES old=${MD_VSIZE[$ST_NAME]} st
	vmem_resize "$name" "$want"
	st=$?
	((st == 2)) && { diag "resize $name: $QMP_ERROR"; return 2; }
	if ((st == 0)); then
		resize_settle
		diag "resize $name $(vmem_human "$old") -> $(vmem_human "$want"): QEMU's size in $VW_MS ms, the guest's blocks and MemTotal checked $VS_MS ms later ($VW_EVENTS size events)"
		[[ -n $ST_XF ]] || return 0
		diag "resize $name reached $(vmem_human "$want"), expected the guest to stop short"
		return 1
	fi
	diag "resize $name $(vmem_human "$old") -> $(vmem_human "$want"): the guest stopped at $(vmem_human "$VW_SIZE"): QEMU's size did not change for $((RESIZE_STALL_MS / 1000)) s"
	[[ -n $ST_XF ]] || return 1
	vmem_resize "$name" "$old"
	st=$?
	((st == 2)) && { diag "resize $name: $QMP_ERROR"; return 2; }
	if ((st == 1)); then
		diag "resize $name: back to $(vmem_human "$old") failed too: the guest stopped at $(vmem_human "$VW_SIZE")"
		return 1
	fi
	resize_settle
	diag "resize $name stopped short as expected; back at $(vmem_human "$old") in $VW_MS ms"
	return 0
}
