# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Checks after every step: what was observed against what the model
# expects. The console's new kernel reports (named by the triage); QEMU's
# memory devices; the guest's memory blocks (presence, node, state, zone),
# MemTotal in all and per node, and the series' vmemmap counters, against
# the boot baseline plus what each device kind expects. Each check returns 0,
# 1 (a kernel problem) or 2 (the rig failed), with diag lines. Sourced by
# rig; calls observe, the model and the device kinds.

TRIAGE=${TRIAGE:-$RIG_BUILD/tools/triage}
# The per-block memmap count is exact except in soaks, which measure it as
# a rate at their checkpoints.
CHECK_MEMMAP_EXACT=1

# The console is followed as it grows, in bash: a quiet step costs no fork.
# A line that may start or belong to a kernel report (REPORT_RE, printed by
# the triage from the same family table it detects reports with, so the two
# cannot drift) has the triage name the step's reports.
console_open() {
	REPORT_RE=$("$TRIAGE" --headers) || die "$TRIAGE --headers failed"
	exec {CON_FD}<"$RUN_DIR/console.log"
	CON_OFF=0 CON_PART='' CON_SUSPECT=0
}

# console_scan: read what the console gained; CON_OFF is the byte offset of
# the first line not read whole yet, CON_SUSPECT 1 when a line looked like a
# kernel report. The new lines are read at once and matched as one text
# (REPORT_RE has no anchors, so a line that matches makes the text match);
# only a text that matches is gone through line by line: a regex match a
# line cost about 0.25 ms, a few ms a step.
# A console that gained more than CONSOLE_SCAN_LINES lines since the last
# step (a flood of printk debugging) has the rest read by one grep: bash
# took 35 s for 200000 lines. The triage at the finish reads the whole log
# again, so a header that a flood cut in two is still found there.
CONSOLE_SCAN_LINES=500
console_scan() {
	local line pos text
	local -a got
	mapfile -n "$CONSOLE_SCAN_LINES" -u "$CON_FD" got
	if ((${#got[@]})); then
		got[0]=$CON_PART${got[0]} CON_PART=''
		if [[ ${got[-1]} != *$'\n' ]]; then
			CON_PART=${got[-1]}
			unset 'got[-1]'
		fi
		printf -v text '%s' "${got[@]}"
		CON_OFF=$((CON_OFF + ${#text}))
		if [[ $text =~ $REPORT_RE ]]; then
			for line in "${got[@]}"; do
				# the rig's own step markers quote the step, not the kernel
				[[ $line == *"rig: step "* ]] && continue
				[[ $line =~ $REPORT_RE ]] && { CON_SUSPECT=1; break; }
			done
		fi
	fi
	# as many whole lines as asked for: there may be more
	if ((${#got[@]} >= CONSOLE_SCAN_LINES)); then
		# grep reads on from the same file offset to the end (-c reads
		# it all), and the next scan starts where it stopped
		(($(grep -a -c -E -e "$REPORT_RE" <&"$CON_FD"))) && CON_SUSPECT=1
		read -r _ pos <"/proc/$BASHPID/fdinfo/$CON_FD"
		CON_OFF=$pos CON_PART=''
		return 0
	fi
	[[ -n $CON_PART && $CON_PART =~ $REPORT_RE ]] && CON_SUSPECT=1
	return 0
}

# check_console FROM: the kernel reports since byte FROM: reports an armed
# injector explains are noted, any other fails the step.
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
	while read -r title; do
		diag "injected failure seen: $title"
	done < <(jq -r '.injections[]? | "\(.fault // "failure") at \(.site // "(no stack)")"' \
		"$RUN_DIR/.step-reports.json")
	return $st
}

# baseline_take: the guest as booted, before any step (B_*), once the
# device kinds present at boot have settled; their memory is not part of
# the baseline: the checks count it with the devices.
baseline_take() {
	vmem_boot || { warn "${VMEM_ERROR:-virtio-mem}"; return 1; }
	baseline_from_guest || return 1
	MEMMAP_ON_MEMORY=0
	[[ " $SC_CMDLINE ${KVARIANT_CMDLINE:-} " =~ \ memory_hotplug\.memmap_on_memory=(1|y|Y|on)\  ]] && MEMMAP_ON_MEMORY=1
	HAVE_VMEMMAP=0
	[[ -n ${G_VMEMMAP[buddy_pages]:-} ]] && HAVE_VMEMMAP=1
	BOOT_AUTO_ONLINE=$G_AUTO
	model_auto "$G_AUTO"
	vmem_baseline
	return 0
}

# baseline_from_guest: the guest's blocks, MemTotal (all and per node) and
# vmemmap counters as they are now become the baseline (B_*): at boot, and
# after a sweep case that changed the guest for good.
baseline_from_guest() {
	agent_call state || return 1
	guest_state || return 1
	declare -gA B_BLOCK B_NODEMEM B_VMEMMAP
	B_BLOCK=() B_NODEMEM=() B_VMEMMAP=()
	local k
	for k in "${!G_BLOCK[@]}"; do B_BLOCK[$k]=${G_BLOCK[$k]}; done
	for k in "${!G_NODEMEM[@]}"; do B_NODEMEM[$k]=${G_NODEMEM[$k]}; done
	for k in "${!G_VMEMMAP[@]}"; do B_VMEMMAP[$k]=${G_VMEMMAP[$k]}; done
	B_MEMTOTAL=$G_MEMTOTAL
}

# expect_reset: the named outputs every device kind's *_expect adds to.
#   EXP_BLOCK[i]        owner of block i ("d0", "virtio-mem vm0")
#   EXP_BLOCK_NODE[i]   its node; EXP_BLOCK_STATE[i], EXP_BLOCK_ZONE[i]
#                       the state and zone ('' any) it must be in, or
#   EXP_BLOCK_EXACT[i]  the whole "node state zones" it must still have
#   EXP_GONE[i]         owner of a block that must not exist
#   EXP_KB, EXP_NODE_KB[n]           MemTotal added, kB
#   EXP_SLACK_KB, EXP_NODE_SLACK[n]  what may come on top of that
#   EXP_MEMMAP          memmap pages added since boot
#   EXP_DEVICES         DIMMs QEMU has (their adds may have failed)
#   EXP_DEVICE_BLOCKS   virtio-mem blocks the guest has, at boot or since
#   EXP_QEMU[id]        "KIND ADDR SIZE NODE [MAX]" QEMU must report
#   EXP_PROBLEMS        what a kind found wrong on its own
#   EXP_VMEM_SEEN[i]    virtio-mem blocks as they matched (check_guest keeps them)
expect_reset() {
	declare -gA EXP_BLOCK=() EXP_BLOCK_NODE=() EXP_BLOCK_STATE=() EXP_BLOCK_ZONE=() \
		EXP_BLOCK_EXACT=() EXP_GONE=() EXP_NODE_KB=() EXP_NODE_SLACK=() EXP_QEMU=() EXP_VMEM_SEEN=()
	EXP_KB=0 EXP_SLACK_KB=0 EXP_MEMMAP=0 EXP_DEVICES=0 EXP_DEVICE_BLOCKS=0 EXP_PROBLEMS=()
	local b
	for b in "${!B_BLOCK[@]}"; do EXP_BLOCK[$b]="boot memory"; done
}

# expect_build: the expectations of every device kind.
expect_build() {
	expect_reset
	dimm_expect
	vmem_expect
}

# check_devices: QEMU's view against the model.
check_devices() {
	local id addr size node max req bad=0 line kind want
	local -A seen=()
	qmp_memory_devices || { diag "$QMP_ERROR"; return 2; }
	expect_build
	for line in "${QMP_MEMDEVS[@]}"; do
		read -r id addr size node <<<"$line"
		[[ $id == - ]] && continue
		seen[$id]=1
		want=${EXP_QEMU[$id]:-}
		if [[ $want != pc-dimm* ]]; then
			diag "QEMU has memory device $id, which the rig unplugged"
			bad=1
		elif [[ $want != "pc-dimm $addr $size $node" ]]; then
			read -r _ want <<<"$want"
			diag "QEMU has $id at $addr size $size node $node, expected ${want% *} node ${want##* }"
			bad=1
		fi
	done
	for line in "${QMP_VMEMS[@]}"; do
		read -r id addr size node max req _ <<<"$line"
		seen[$id]=1
		want=${EXP_QEMU[$id]:-}
		if [[ $want != virtio-mem* ]]; then
			diag "QEMU has virtio-mem device $id, which the scenario does not declare"
			bad=1
			continue
		fi
		read -r _ _ want _ _ <<<"$want"
		if [[ $size != "$want" || $req != "$want" ]]; then
			diag "QEMU has virtio-mem $id at size $(human "$size") (requested $(human "$req")), expected $(human "$want")"
			bad=1
		elif [[ ${EXP_QEMU[$id]} != "virtio-mem $addr $want $node $max" ]]; then
			read -r _ want _ kind line <<<"${EXP_QEMU[$id]}"
			diag "QEMU has virtio-mem $id at $addr node $node max $max, expected $want node $kind max $line"
			bad=1
		fi
	done
	for id in "${!EXP_QEMU[@]}"; do
		[[ -n ${seen[$id]:-} ]] && continue
		kind=${EXP_QEMU[$id]%% *}
		diag "QEMU lost ${kind/pc-dimm/memory} device $id"
		bad=1
	done
	return $bad
}

# check_guest_ask: check_guest's request sent ahead, for the guest to
# answer while the host checks QEMU's devices.
check_guest_ask() {
	agent_ask state ${STEP_END_MARK:+--mark "$STEP_END_MARK"} || true
}

# check_guest: the guest's blocks and accounting against the expectations.
check_guest() {
	local st t0 t1
	now_ms t0
	# the step's end marker rides on the same request (one round trip);
	# the request may be out already (check_guest_ask)
	if [[ -n $AGENT_ASKED ]]; then
		agent_answer
	else
		agent_call state ${STEP_END_MARK:+--mark "$STEP_END_MARK"}
	fi
	st=$?
	now_ms t1
	# make bench's breakdown: the request, apart from the comparing
	PHASE_MS[guest_request]=$((${PHASE_MS[guest_request]:-0} + t1 - t0))
	[[ -n ${STEP_END_MARK:-} ]] && ((st == 0)) && STEP_END_MARKED=1
	STEP_END_MARK=''
	((st == 0)) || { agent_failed $st "state"; return; }
	guest_state || { diag "unreadable guest state"; return 2; }
	expect_build
	local bad=0 b owner node state zone want p
	VM_SEEN=()
	for b in "${!EXP_VMEM_SEEN[@]}"; do VM_SEEN[$b]=${EXP_VMEM_SEEN[$b]}; done
	for p in "${EXP_PROBLEMS[@]}"; do diag "$p"; bad=1; done
	for b in "${!G_BLOCK[@]}"; do
		[[ -n ${EXP_BLOCK[$b]:-} ]] && continue
		diag "guest has memory$b ($(human $((b * BLOCK_BYTES)))), which belongs to no device: ${G_BLOCK[$b]}"
		bad=1
	done
	for b in "${!EXP_BLOCK[@]}"; do
		owner=${EXP_BLOCK[$b]}
		if [[ -z ${G_BLOCK[$b]:-} ]]; then
			diag "guest lacks memory$b of $owner"
			bad=1
			continue
		fi
		[[ $owner == "boot memory" ]] && continue
		# "NODE STATE ZONES", split without a here-string (a temporary
		# file or pipe a block)
		node=${G_BLOCK[$b]%% *} zone=${G_BLOCK[$b]#* }
		state=${zone%% *} zone=${zone#* }
		if [[ $node != "${EXP_BLOCK_NODE[$b]}" ]]; then
			diag "memory$b of $owner is on node $node, plugged on node ${EXP_BLOCK_NODE[$b]}"
			bad=1
			[[ $owner == virtio-mem* ]] && continue
		fi
		if [[ -n ${EXP_BLOCK_EXACT[$b]:-} ]]; then
			[[ ${G_BLOCK[$b]} == "${EXP_BLOCK_EXACT[$b]}" ]] ||
				{ diag "memory$b of $owner is $state ${zone:-}, it was ${EXP_BLOCK_EXACT[$b]#* }"; bad=1; }
		elif [[ $state != "${EXP_BLOCK_STATE[$b]}" ]]; then
			diag "memory$b of $owner is $state, expected ${EXP_BLOCK_STATE[$b]}"
			bad=1
		elif [[ $state == online && -n ${EXP_BLOCK_ZONE[$b]} && $zone != "${EXP_BLOCK_ZONE[$b]}" ]]; then
			diag "memory$b of $owner is in zone $zone, expected ${EXP_BLOCK_ZONE[$b]}"
			bad=1
		fi
	done
	for b in "${!EXP_GONE[@]}"; do
		[[ -n ${G_BLOCK[$b]:-} ]] || continue
		diag "memory$b of ${EXP_GONE[$b]} exists, but its hot-add was to fail whole: ${G_BLOCK[$b]}"
		bad=1
	done
	((HAVE_VMEMMAP)) && { check_vmemmap || bad=1; }
	want=$((B_MEMTOTAL + EXP_KB))
	if ((G_MEMTOTAL < want || G_MEMTOTAL > want + EXP_SLACK_KB)); then
		if ((EXP_SLACK_KB)); then
			diag "MemTotal is $G_MEMTOTAL kB, expected $want to $((want + EXP_SLACK_KB)) kB (boot $B_MEMTOTAL + online DIMMs and virtio-mem $EXP_KB, + up to $EXP_SLACK_KB of virtio-mem in part online)"
		else
			diag "MemTotal is $G_MEMTOTAL kB, expected $want kB (boot $B_MEMTOTAL + online DIMMs${M_VMEM[0]:+ and virtio-mem} $EXP_KB)"
		fi
		bad=1
	fi
	for node in "${!B_NODEMEM[@]}"; do
		want=$((B_NODEMEM[$node] + ${EXP_NODE_KB[$node]:-0}))
		if [[ -z ${G_NODEMEM[$node]:-} ]] || ((G_NODEMEM[$node] < want || G_NODEMEM[$node] > want + ${EXP_NODE_SLACK[$node]:-0})); then
			diag "node $node MemTotal is ${G_NODEMEM[$node]:-missing} kB, expected $want kB${EXP_NODE_SLACK[$node]:+ (+ up to ${EXP_NODE_SLACK[$node]})}"
			bad=1
		fi
	done
	return $bad
}

# check_vmemmap: the series' view. vmemmap/check must say OK; the pages
# backing memmap (buddy and altmap) must be the boot baseline plus exactly
# what the hot-added memory needs; with nothing hot-added (DIMMs, virtio-mem
# blocks now and at boot) the vmemmap's page-table pages must be back at
# the baseline too.
check_vmemmap() {
	local bad=0 have base l
	if [[ ${G_VCHECK[*]} != OK ]]; then
		for l in "${G_VCHECK[@]}"; do diag "vmemmap/check: $l"; done
		bad=1
	fi
	((CHECK_MEMMAP_EXACT)) || return $bad
	have=$((G_VMEMMAP[buddy_pages] + ${G_VMEMMAP[altmap_pages]:-0}))
	base=$((B_VMEMMAP[buddy_pages] + ${B_VMEMMAP[altmap_pages]:-0}))
	if ((have != base + EXP_MEMMAP)); then
		diag "vmemmap/stats: memmap pages (buddy+altmap) $have, expected $((base + EXP_MEMMAP)) (boot $base + plugged DIMMs${M_VMEM[0]:+ and virtio-mem blocks since boot} $EXP_MEMMAP)"
		bad=1
	fi
	if ((EXP_DEVICES + EXP_DEVICE_BLOCKS == 0 && G_VMEMMAP[pgtable_pages] != B_VMEMMAP[pgtable_pages])); then
		diag "vmemmap/stats: pgtable_pages ${G_VMEMMAP[pgtable_pages]}, boot baseline ${B_VMEMMAP[pgtable_pages]}, with nothing hot-added"
		bad=1
	fi
	return $bad
}
