# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The machine: the machine record (model.sh: M_CPUS, M_NODE_MEM, M_SLOTS,
# M_MAXMEM, M_CPU) becomes a QEMU command line (the device kinds add theirs:
# run.sh); the accelerator probe; start and stop. Sourced by rig.

# earlyprintk: a kernel that dies before its console starts still says why
# (a silent hang is what users of such tools complain about most).
# Under TCG a busy host stalls RCU and the soft-lockup watchdog without any
# kernel bug: raise both; there is no NMI watchdog to detect hard lockups.
# swiotlb=noforce: no bounce buffers. x86 sets up 64 MiB of them when
# memory may reach past 4 GiB, as the hotplug window does, and zeroing them
# took about 300 ms of a TCG boot (RIP samples in memblock_alloc_try_nid
# and swiotlb_init_io_tlb_mem). No device of the machine needs them: the
# virtio devices use guest-physical addresses (no iommu_platform), and
# nothing else does DMA.
readonly RIG_BASE_CMDLINE="console=ttyS0 earlyprintk=serial,ttyS0,115200 panic=-1 rdinit=/init memhp_default_state=offline printk.time=1 rcupdate.rcu_cpu_stall_timeout=120 watchdog_thresh=60 nmi_watchdog=0 rig.hung_task_timeout=120 swiotlb=noforce"
# the machine type (qemu_cmdline says why q35)
readonly QEMU_MACHINE=q35
# QEMU's minimal firmware (qemu-system-data), when installed
readonly QEMU_QBOOT=/usr/share/qemu/qboot.rom

# accel_probe KERNEL: the accelerator to use for ACCEL=auto. KVM only when a
# short probe boots far enough to print; the answer is kept per host kernel
# and QEMU version, since a hanging KVM costs a timeout every time.
accel_probe() {
	local kernel=$1 cache=$RIG_BUILD/accel key out
	key="$(uname -r) $(qemu-system-x86_64 --version | head -1)"
	if [[ -f $cache && $(head -1 "$cache") == "$key" ]]; then
		tail -1 "$cache"
		return
	fi
	if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
		printf '%s\n%s\n' "$key" tcg >"$cache"
		echo tcg
		return
	fi
	out=$(mktemp)
	timeout -s KILL 6 qemu-system-x86_64 -accel kvm -M "$QEMU_MACHINE" -nodefaults -display none \
		-no-reboot -m 256M -kernel "$kernel" -append "console=ttyS0 earlyprintk=serial panic=-1" \
		-serial "file:$out" >/dev/null 2>&1 || true
	if grep -q "Linux version" "$out"; then
		printf '%s\n%s\n' "$key" kvm >"$cache"
		echo kvm
	else
		say "KVM probe: no console output within 6 s, using TCG"
		printf '%s\n%s\n' "$key" tcg >"$cache"
		echo tcg
	fi
	rm -f "$out"
}

# qemu_boot_params ACCEL: kernel parameters that shorten a boot without
# changing what it tests, into QEMU_BOOT_PARAMS. no_timer_check: the IOAPIC
# timer test waits ten jiffies (70-100 ms under TCG). lpj=: each secondary
# CPU calibrates its delay loop (no sibling in its package to copy it from:
# one socket per CPU), 0.2-0.3 s under TCG; the value the boot CPU took
# from the TSC on an earlier boot on this host (qemu_learn_lpj) is given.
qemu_boot_params() {
	local lpj
	QEMU_BOOT_PARAMS=no_timer_check
	if read -r lpj 2>/dev/null <"$RIG_BUILD/lpj-$1" && [[ $lpj =~ ^[1-9][0-9]{3,11}$ ]]; then
		QEMU_BOOT_PARAMS+=" lpj=$lpj"
	fi
	qemu_rcu_params
}

# qemu_rcu_params: expedited RCU (QEMU_BOOT_PARAMS) when the host has a
# core for every vCPU of the guests running at once (RIG_GUESTS, which the
# matrix and make coverage set to their PAR; 1 by default). Every hotplug
# operation takes mem_hotplug_lock for write, a percpu_rw_semaphore whose
# rcu_sync waits a whole grace period once the last writer is more than a
# grace period or two ago: 25-50 ms under TCG at HZ=100, paid by each step
# the checks set apart from the one before and by no step of a bare cycle
# (104 of a checked smoke cycle's 339 ms). Expedited, that wait is an IPI
# to each busy CPU; but when vCPUs outnumber the host's cores the IPI
# waits for the target's thread to be scheduled, and two 2-vCPU soaks on
# 2 cores made 11860 checked cycles an hour expedited against 14726
# without. A scenario's "cmdline rcupdate.rcu_expedited=0" comes later on
# the command line and wins.
qemu_rcu_params() {
	local guests=${RIG_GUESTS:-1}
	[[ $guests =~ ^[1-9][0-9]{0,3}$ ]] || guests=1
	((guests * M_CPUS <= $(nproc))) && QEMU_BOOT_PARAMS+=" rcupdate.rcu_expedited=1"
	return 0
}

# qemu_learn_lpj ACCEL: after a boot that calibrated (no lpj= given), the
# boot CPU's loops per jiffy from the console, for the next boots here.
qemu_learn_lpj() {
	[[ -s $RIG_BUILD/lpj-$1 ]] && return 0
	local v
	# Every stage reads to the end: "grep -m1" left tail writing into a
	# closed pipe, and under pipefail that SIGPIPE ended the first run on
	# a new machine ("the runner stopped unexpectedly").
	v=$(tail -c +"$((${CON_BOOT_OFF:-0} + 1))" "$RUN_DIR/console.log" |
		grep -a -o 'Calibrating delay loop (skipped), value calculated using timer frequency.*(lpj=[0-9]*)' |
		sed -n '1s/.*(lpj=\([0-9]*\))$/\1/p')
	[[ $v =~ ^[1-9][0-9]{3,11}$ ]] || return 0
	echo "$v" >"$RIG_BUILD/lpj-$1.$$" && mv -f "$RIG_BUILD/lpj-$1.$$" "$RIG_BUILD/lpj-$1"
}

# qemu_agent_port: the guest port the agent serves (QEMU_AGENT_PORT, the
# guest's rig.agent=) and the QEMU options that give it the agent's socket
# (QEMU_AGENT_ARGS). A virtio console port where the kernel has the driver
# built in: the guest's replies cross the second 16550 UART an interrupt
# per 16 bytes under TCG, a virtqueue in one write (measured beside each
# other: a state request 25 against 21 ms, a checked smoke cycle 249
# against 220 ms). Its price is one PCI device at boot: 28 ms of
# virtio_pci_driver_init on q35 (on pc, 212 ms: see qemu_cmdline).
# Elsewhere (virtio_console modular or absent, or an image without its
# config) the UART, which every x86 kernel has.
qemu_agent_port() {
	if [[ -n ${KCONFIG:-} ]] && grep -qx "CONFIG_VIRTIO_CONSOLE=y" "$KCONFIG"; then
		QEMU_AGENT_PORT=virtio:rig.agent
		# shellcheck disable=SC2054 # the commas are QEMU's, inside one word
		QEMU_AGENT_ARGS=(-device virtio-serial-pci,id=rigser,max_ports=2
			-device virtserialport,bus=rigser.0,chardev=agent,name=rig.agent)
	else
		QEMU_AGENT_PORT=ttyS1
		QEMU_AGENT_ARGS=(-serial chardev:agent)
	fi
}

# qemu_cmdline: the command line into QEMU_CMD (an array).
qemu_cmdline() {
	local accel=$1 kernel=$2 initrd=$3 append=$4
	local n=${#M_NODE_MEM[@]} boot=0 i c cpus
	for i in "${M_NODE_MEM[@]}"; do boot=$((boot + i)); done
	# q35, not pc: on pc the agent's virtio port takes its INTx through a
	# PIIX link device, and the kernel evaluates the DSDT's _PRT (a loop
	# building 128 entries) and the link's methods for it: 212 ms of
	# virtio_pci_driver_init under TCG, 28 ms on q35 (initcall_debug).
	QEMU_CMD=(qemu-system-x86_64 -accel "$accel" -M "$QEMU_MACHINE" -nodefaults -display none -no-reboot)
	# qboot (QEMU's minimal firmware) boots -kernel straight, with the
	# ACPI tables (SRAT, memory hotplug) QEMU builds: about 0.5-1 s less
	# than SeaBIOS under TCG; SeaBIOS where it is not installed
	[[ -r $QEMU_QBOOT ]] && QEMU_CMD+=(-bios "$QEMU_QBOOT")
	if [[ $accel == kvm ]]; then QEMU_CMD+=(-cpu host); else QEMU_CMD+=(-cpu "$M_CPU"); fi
	# One socket per CPU: two nodes on one socket gives a topology_sane
	# WARNING at boot, a false kernel report in every run.
	QEMU_CMD+=(-smp "$M_CPUS,sockets=$M_CPUS,cores=1,threads=1")
	QEMU_CMD+=(-m "$((boot >> 20))M,slots=$M_SLOTS,maxmem=$((M_MAXMEM >> 20))M")
	for ((i = 0; i < n; i++)); do
		cpus=
		for ((c = i; c < M_CPUS; c += n)); do cpus+=${cpus:+,cpus=}$c; done
		local node="node,nodeid=$i${cpus:+,cpus=$cpus}"
		if ((M_NODE_MEM[i] > 0)); then
			QEMU_CMD+=(-object "memory-backend-ram,id=ram$i,size=$((M_NODE_MEM[i] >> 20))M")
			node+=",memdev=ram$i"
		fi
		QEMU_CMD+=(-numa "$node")
	done
	qemu_agent_port
	QEMU_CMD+=(-kernel "$kernel" -initrd "$initrd" -append "$append rig.agent=$QEMU_AGENT_PORT")
	# a comma in a path (the run folder holds the scenario's name) is
	# written twice, or QEMU's option parser splits there
	# append: a guest restarted in the run continues the same log
	QEMU_CMD+=(-chardev "file,id=console,path=${RUN_DIR//,/,,}/console.log,append=on" -serial chardev:console)
	QEMU_CMD+=(-chardev "socket,id=agent,path=${RIG_SOCK//,/,,}/agent.sock,server=on,wait=off")
	QEMU_CMD+=("${QEMU_AGENT_ARGS[@]}")
	QEMU_CMD+=(-chardev "socket,id=qmp,path=${RIG_SOCK//,/,,}/qmp.sock,server=on,wait=off" -mon "chardev=qmp,mode=control")
}

# qemu_start [ARG...]: QEMU_CMD started (with ARGs after it: a restore's
# -incoming), once its QMP and agent sockets exist; 1 when QEMU died or
# made no sockets within 10 s.
qemu_start() {
	# the run's own command line; a restore's additions are in qemu.log
	if (($#)); then
		{
			printf '# restart:'
			printf ' %q' "$@"
			echo
		} >>"$RUN_DIR/qemu.log"
	else
		printf '%q ' "${QEMU_CMD[@]}" >"$RUN_DIR/qemu.cmdline"
		echo >>"$RUN_DIR/qemu.cmdline"
	fi
	now_ms QEMU_T0
	# Its own session, so a signal meant for the runner's process group
	# (Ctrl-C, kill -- -PGID) reaches the runner, which stops QEMU and says
	# why; and a parent-death signal, so a runner killed outright (kill -9,
	# the OOM killer) takes QEMU with it.
	setsid setpriv --pdeathsig TERM "${QEMU_CMD[@]}" "$@" </dev/null >>"$RUN_DIR/qemu.log" 2>&1 &
	QEMU_PID=$!
	local deadline=$((QEMU_T0 + 10000)) now
	while [[ ! -S $RIG_SOCK/qmp.sock || ! -S $RIG_SOCK/agent.sock ]]; do
		qemu_alive || return 1
		now_ms now
		((now < deadline)) || return 1
		sleep 0.01
	done
}

# qemu_snapshot_take FILE: the ready guest's whole state (devices and
# RAM; QEMU skips zero pages) into FILE as a migration stream, for
# run_restart to start from instead of a boot. The guest is stopped while
# it is written and goes on after. 1 with QMP_ERROR when it failed.
qemu_snapshot_take() {
	local f=$1 st deadline now
	[[ $f =~ ^[A-Za-z0-9_./-]+$ ]] || { QMP_ERROR="snapshot path $f has characters a shell would read"; return 1; }
	# QEMU throttles migration to 32 MiB/s by default: unthrottled to a file
	qmp_exec migrate-set-parameters '{"max-bandwidth": 1099511627776}' || return 1
	qmp_exec stop || return 1
	if ! qmp_exec migrate "{\"uri\": \"exec:cat >$f\"}"; then
		st=$QMP_ERROR
		qmp_exec cont
		QMP_ERROR=$st
		return 1
	fi
	now_ms deadline
	deadline=$((deadline + 60000))
	while :; do
		qmp_exec query-migrate || break
		st=$(jq -r '.return.status // ""' <<<"$QMP_RETURN")
		[[ $st == completed || $st == failed || $st == cancelled ]] && break
		now_ms now
		((now < deadline)) || { st="still $st after 60 s"; break; }
		sleep 0.02
	done
	qmp_exec cont || return 1
	[[ $st == completed ]] && return 0
	QMP_ERROR="migration to $f: ${st:-$QMP_ERROR}"
	rm -f "$f"
	return 1
}

# qemu_snapshot_resume: a QEMU started with -incoming from a snapshot
# taken by qemu_snapshot_take runs the guest once the stream is loaded (it
# was stopped when saved, so QEMU does not start it on its own). 1 with
# QMP_ERROR when the load failed or took over 30 s.
qemu_snapshot_resume() {
	local st deadline now
	now_ms deadline
	deadline=$((deadline + 30000))
	while :; do
		qmp_exec query-status || return 1
		st=$(jq -r '.return.status // ""' <<<"$QMP_RETURN")
		[[ $st == inmigrate ]] || break
		now_ms now
		((now < deadline)) || { QMP_ERROR="the snapshot was still loading after 30 s"; return 1; }
		sleep 0.01
	done
	[[ $st == running ]] && return 0
	[[ $st == paused || $st == postmigrate || $st == prelaunch ]] ||
		{ QMP_ERROR="after loading the snapshot QEMU is $st"; return 1; }
	qmp_exec cont
}

# qemu_alive: QEMU runs (an exited QEMU not yet reaped is a zombie, which
# kill -0 would still find).
qemu_alive() {
	[[ -n ${QEMU_PID:-} ]] || return 1
	local _pid _comm state
	read -r _pid _comm state _ 2>/dev/null <"/proc/$QEMU_PID/stat" || return 1
	[[ $state != Z ]]
}

# qemu_reap: QEMU has exited; QEMU_EXIT gets its status (128+n: signal n).
qemu_reap() {
	[[ -n ${QEMU_PID:-} ]] || return 0
	QEMU_EXIT=0
	wait "$QEMU_PID" 2>/dev/null || QEMU_EXIT=$?
	QEMU_PID=
}

# qemu_stop: ask politely over QMP, then TERM, then KILL.
qemu_stop() {
	qemu_alive || { qemu_reap; return 0; }
	[[ -n ${CHAN_W[qmp]:-} ]] && qmp_exec quit >/dev/null 2>&1
	local i
	for i in {1..50}; do
		qemu_alive || break
		sleep 0.02
	done
	qemu_alive && kill -TERM "$QEMU_PID" 2>/dev/null
	for i in {1..100}; do
		qemu_alive || break
		sleep 0.02
	done
	qemu_alive && kill -KILL "$QEMU_PID" 2>/dev/null
	qemu_reap
}
