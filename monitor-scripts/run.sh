# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The run engine: a run is boot, baseline, drive, finish. The drive is a
# mode's (steps: the scenario's step list; soak: rounds of it, soak.sh),
# chosen with RUN_DRIVE; a mode plugs in through drive_MODE_plan,
# drive_MODE_run, drive_MODE_abort, drive_MODE_done and the two step hooks
# below, and
# nothing else tests which mode runs. Every knob a step turns registers its
# undo (defer.sh) right where it turns it; finish undoes them in reverse, then
# triages the console and writes the verdict, KTAP totals, summary.json and
# JUnit. Sourced by rig.

RUN_DRIVE=steps
# Where a step's KTAP line and its summary.json record go.
STEP_LINE_FN=ktap
STEP_RECORD_FN=record_step
RUN_CYCLES=0
# What a run keeps free for its finish if the disk fills (MiB).
RUN_RESERVE_MB=8

# --- outcomes ------------------------------------------------------------------
fail() { KERNEL_PROBLEM=1; REASONS+=("$*"); }
rig_error() { RIG_ERR=1; REASONS+=("$*"); }

verdict_code() {
	case $VERDICT in
	pass) echo 0 ;; fail) echo 1 ;; skip) echo 4 ;; *) echo 2 ;;
	esac
}

new_run_dir() {
	local base i=1
	base=$(date +%Y%m%d-%H%M%S)-$SCENARIO
	mkdir -p "$RIG_LOGS"
	RUN_ID=$base
	until mkdir "$RIG_LOGS/$RUN_ID" 2>/dev/null; do
		i=$((i + 1))
		RUN_ID=$base-$i
	done
	RUN_DIR=$RIG_LOGS/$RUN_ID
	: >"$RUN_DIR/result.ktap"
	: >"$RUN_DIR/.steps.jsonl"
	: >"$RUN_DIR/.step_ms"
	# Room for the finish (triage, KTAP totals, summary.json, JUnit) even
	# if the disk fills mid-run: given back in finish_run.
	fallocate -l "${RUN_RESERVE_MB}M" "$RUN_DIR/.reserve" 2>/dev/null ||
		head -c "$((RUN_RESERVE_MB << 20))" /dev/zero >"$RUN_DIR/.reserve"
	# unix socket paths must stay under 108 bytes: a short private folder
	RIG_SOCK=$(mktemp -d /tmp/rig.XXXXXX)
	chmod 700 "$RIG_SOCK"
	ln -s "$RIG_SOCK" "$RUN_DIR/sock"
}

# Why QEMU is gone: a panic or a guest reboot is the kernel's (fail), QEMU
# killed or failing is the rig's side (error).
qemu_died() {
	qemu_reap
	local panic
	panic=$(tail -c +"$((CON_BOOT_OFF + 1))" "$RUN_DIR/console.log" 2>/dev/null |
		grep -a -m1 -o 'Kernel panic - not syncing: .*' | tr -d '\r' || true)
	if [[ -n $panic ]]; then
		fail "guest panicked: $panic"
	elif ((QEMU_EXIT == 0)); then
		fail "guest rebooted or powered off during the run (QEMU exited, -no-reboot)"
	elif ((QEMU_EXIT > 128)); then
		rig_error "QEMU was killed by signal $((QEMU_EXIT - 128))"
	else
		rig_error "QEMU exited with status $QEMU_EXIT: $(tail -1 "$RUN_DIR/qemu.log" 2>/dev/null)"
	fi
}

# A hung guest: ask the kernel for its blocked tasks (sysrq w, then t)
# through the keyboard, since the agent cannot answer.
guest_hang_dump() {
	qemu_alive || return 0
	local k size last=-1 deadline now
	now_ms deadline
	deadline=$((deadline + 15000))
	for k in w t; do
		qmp_send_key alt sysrq "$k" >/dev/null 2>&1 ||
			REASONS+=("note: sysrq $k through QMP send-key failed: $QMP_ERROR")
	done
	# until the 't' dump has started and the console has stopped growing
	# for half a second (or 15 s): the dump has no end marker
	while now_ms now && ((now < deadline)) && qemu_alive; do
		size=$(stat -c %s "$RUN_DIR/console.log")
		if ((size == last)) && grep -q -a 'sysrq: Show State' "$RUN_DIR/console.log"; then
			break
		fi
		last=$size
		sleep 0.5
	done
}

# step_skip WHY: the step cannot run on this kernel (an injector or a
# counter it lacks): status 4, and the run skips from here on.
step_skip() {
	STEP_SKIP=$1
	return 4
}

# --- steps -----------------------------------------------------------------------
# run_step N (1-based): markers, the verb's runner, the checks, the console.
run_step() {
	local n=$1 st=0 from t0 now
	RUN_STEP=$n
	step_select $((n - 1))
	STEP_DIAG=() STEP_SUB=() GUEST_HUNG=0 STEP_SKIP=''
	now_ms t0
	# What the console gained since the last step was checked is this
	# step's: a report printed on the boundary between two steps is
	# judged here, not lost (tests/scenarios/step-boundary).
	from=$CON_OFF
	# the begin marker rides ahead of the step's first request (agent_post)
	if ((CHECKS)); then
		agent_post mark "step $n begin $ST_TEXT"
		st=$?
		((st == 0)) || agent_failed $st "step marker" || st=$?
	fi
	phase_end mark "$t0"
	((st == 0)) && { step_run || st=$?; }
	if ((CHECKS)) && ! agent_settle || ((${AGENT_POSTED_ST:-0} != 0)); then
		# the marker failed: the step's own result says more, if it failed
		((st != 0)) || { agent_failed "$AGENT_POSTED_ST" "step marker" || st=$?; }
	fi
	AGENT_POSTED_ST=''
	phase_end run
	STEP_END_MARKED=0
	if ((st == 0 && CHECKS)); then
		# the guest's state is asked for first: the guest reads it while
		# QEMU's devices are checked
		STEP_END_MARK="step $n end"
		check_guest_ask
		check_devices || st=$?
		phase_end devices
		((st == 2)) || check_guest || st=$((st > $? ? st : $?))
		STEP_END_MARK='' AGENT_ASKED=''
		phase_end guest
	fi
	if ((CHECKS && !STEP_END_MARKED)) && ((GUEST_HUNG == 0 && st != 2)) && qemu_alive; then
		agent_call mark "step $n end" || true
	fi
	phase_end mark
	local cst=0
	check_console "$from" || cst=$?
	phase_end console
	((cst == 1)) && st=1
	((cst == 2 && st == 0)) && st=2
	now_ms now
	STEP_MS=$((now - t0))
	return "$st"
}

# phase_end NAME [T0]: the time since the last phase_end (or T0) is
# NAME's, summed over the run for make bench's breakdown of a step
# (summary.json timings.phase_ms). No fork: EPOCHREALTIME.
declare -A PHASE_MS=()
phase_end() {
	local now
	now_ms now
	PHASE_MS[$1]=$((${PHASE_MS[$1]:-0} + now - ${2:-$PHASE_T}))
	PHASE_T=$now
}

# step_not_run N WHY: a step that never ran, as a skipped KTAP line.
step_not_run() {
	local text=${S_TEXT[$(($1 - 1))]} args
	step_args args "$text"
	"$STEP_LINE_FN" "ok $1 $text # SKIP not run: $2"
	"$STEP_RECORD_FN" "$1" "${text%% *}" "$args" "not run" 0
}

run_steps() {
	local n st result abort='' now l text args
	for ((n = 1; n <= ${#S_TEXT[@]}; n++)); do
		text=${S_TEXT[n - 1]}
		KTAP_DONE=$((n - 1))
		if [[ -n $abort ]]; then
			step_not_run "$n" "$abort"
			continue
		fi
		now_ms now
		if ((now > RUN_DEADLINE)); then
			rig_error "scenario time limit (${SC_TIMEOUT} s) reached at step $n"
			abort="time limit reached"
			step_not_run "$n" "$abort"
			continue
		fi
		st=0 STEP_GOES_ON=0
		local died=0
		run_step "$n" || st=$?
		if ((st != 0)) && ! qemu_alive; then
			qemu_died
			died=1
			st=1
			((RIG_ERR)) && st=2
		fi
		for l in "${STEP_SUB[@]}"; do "$STEP_LINE_FN" "    $l"; done
		for l in "${STEP_DIAG[@]}"; do "$STEP_LINE_FN" "# $l"; done
		case $st in
		0) result=ok; "$STEP_LINE_FN" "ok $n $text"; PASSED=$((PASSED + 1)) ;;
		4)
			result=skip
			"$STEP_LINE_FN" "ok $n $text # SKIP $STEP_SKIP"
			SKIP_REASON=${SKIP_REASON:-$STEP_SKIP}
			REASONS+=("skipped: step $n ($text): $STEP_SKIP")
			;;
		1) result=fail; "$STEP_LINE_FN" "not ok $n $text"; fail "step $n ($text): ${STEP_DIAG[0]:-failed}"; FAILED=$((FAILED + 1)) ;;
		*)
			result=error
			"$STEP_LINE_FN" "not ok $n $text"
			((died)) || rig_error "step $n ($text): ${STEP_DIAG[0]:-rig error}"
			FAILED=$((FAILED + 1))
			;;
		esac
		step_args args "$text"
		"$STEP_RECORD_FN" "$n" "${text%% *}" "$args" "$result" "$STEP_MS"
		if ((${LOG_WRITE_FAILED:-0})); then
			rig_error "cannot write to the log folder (full?): $(df -Ph "$RUN_DIR" | awk 'NR == 2 { print $4 " free" }')"
			abort="the log folder is full"
			run_logs_reclaim
		elif ! run_logs_within_cap; then
			abort="the run's logs passed RUN_LOG_MB"
		fi
		# a step that found kernel problems and still left the guest as
		# the next step expects it (a sweep: every case is judged on its
		# own) lets the run go on
		if ((st == 0 && !died)) && ! qemu_alive; then
			# QEMU went after the step passed, before the next began:
			# the run still says why (a panic, or QEMU killed)
			qemu_died
			abort="QEMU exited after step $n"
		elif ((st == 4)); then
			abort="step $n skipped: $STEP_SKIP"
		elif ((st != 0)) && ! ((st == 1 && STEP_GOES_ON && !GUEST_HUNG)) || ! qemu_alive; then
			((GUEST_HUNG)) && guest_hang_dump
			abort="step $n failed"
		fi
	done
	KTAP_DONE=${#S_TEXT[@]}
}

# run_logs_reclaim: the disk filled; the run stops, and what it still has to
# write (the steps not run, the finish) goes into its reserve. A line the
# full disk cut is ended, so the next one starts on its own.
run_logs_reclaim() {
	local f last
	rm -f "$RUN_DIR/.reserve"
	for f in result.ktap .steps.jsonl .step_ms; do
		[[ -s $RUN_DIR/$f ]] || continue
		last=$(tail -c 1 "$RUN_DIR/$f" | od -An -tx1 | tr -d ' ')
		[[ $last == 0a ]] || echo >>"$RUN_DIR/$f"
	done
	LOG_WRITE_FAILED=0
}

# run_logs_within_cap: false, with the reason, once the run's logs have
# passed RUN_LOG_MB (a runaway console must not fill the disk). Looked at
# once a second at most: stat is a fork.
run_logs_within_cap() {
	local now size
	now_ms now
	((now - ${LOG_CAP_SEEN:-0} >= 1000)) || return 0
	LOG_CAP_SEEN=$now
	size=$(stat -c %s "$RUN_DIR"/*.log 2>/dev/null | awk '{ t += $1 } END { print t + 0 }')
	((size <= RUN_LOG_MB << 20)) && return 0
	printf '\nrig: the run stops here: its logs passed RUN_LOG_MB=%s MiB\n' "$RUN_LOG_MB" \
		>>"$RUN_DIR/console.log" 2>/dev/null
	rig_error "the run's logs passed RUN_LOG_MB=$RUN_LOG_MB MiB ($((size >> 20)) MiB): the run stops here"
	return 1
}

# run_restart WHY: a fresh guest for a step that cannot go on with this one
# (a sweep case that killed or wedged it): QEMU stopped, started again with
# the same command line (the console log goes on: it appends), the
# baseline taken again, and the steps before the current one replayed
# quietly to reach the state the current step started from. Sweep steps
# are not replayed: each leaves the guest as it found it. The knobs the
# old guest had armed went with it. 0 ready, 2 the guest cannot be brought
# back (the reasons say why).
run_restart() {
	local why=$1 cur=$RUN_STEP i st=0 t0 now
	local -a keep=("${STEP_DIAG[@]}")
	now_ms t0
	# the old boot's gcov counters, while its guest may still answer
	coverage_run_restart
	chan_close agent
	chan_close qmp
	qemu_alive && kill -KILL "$QEMU_PID" 2>/dev/null
	qemu_reap
	defer_reset
	QMP_EVENTS=() GUEST_HUNG=0
	console_scan
	CON_BOOT_OFF=$((CON_OFF + ${#CON_PART}))
	RUN_BOOTS=$((RUN_BOOTS + 1))
	agent_log "!" "restart $RUN_BOOTS: $why"
	local how=boot
	if run_restore; then
		how=restored
	else
		# a killed QEMU leaves its sockets: qemu_start waits for new ones
		rm -f "$RIG_SOCK/qmp.sock" "$RIG_SOCK/agent.sock"
		if ! qemu_start || ! qmp_open; then
			STEP_DIAG=("${keep[@]}" "restart: QEMU did not start again: ${QMP_ERROR:-$(tail -1 "$RUN_DIR/qemu.log")}")
			return 2
		fi
		agent_wait_ready $((QEMU_T0 + 120000)) 30000 || st=$?
		if ((st != 0)); then
			STEP_DIAG=("${keep[@]}" "restart: the guest did not boot again (status $st)")
			return 2
		fi
	fi
	model_select live
	model_reset offline
	# what the new boot allocated is no leak of the run
	if ((${HAVE_KMEMLEAK:-0})) && ! kmemleak_baseline; then
		STEP_DIAG=("${keep[@]}" "restart: the new guest's kmemleak baseline failed")
		return 2
	fi
	VMEM_ERROR=''
	if ! baseline_take; then
		STEP_DIAG=("${keep[@]}" "restart: cannot read the guest's memory state: ${VMEM_ERROR:-the state request to the agent failed (agent.log)}")
		return 2
	fi
	# the new boot's counters from zero (its boot is not the run's)
	coverage_run_start || COVERAGE_KEPT_ERROR=${COVERAGE_KEPT_ERROR:-$COVERAGE_ERROR}
	for ((i = 0; i < cur - 1; i++)); do
		[[ ${S_VERB[i]} == sweep ]] && continue
		step_select "$i"
		STEP_DIAG=()
		st=0
		step_run || st=$?
		if ((st == 0 && CHECKS)); then
			check_devices || st=$?
			((st == 2)) || { check_guest || st=$((st > $? ? st : $?)); }
		fi
		if ((st != 0)); then
			keep+=("restart: replaying step $((i + 1)) (${S_TEXT[i]}) failed: ${STEP_DIAG[*]}")
			step_select $((cur - 1))
			STEP_DIAG=("${keep[@]}")
			return 2
		fi
	done
	step_select $((cur - 1))
	now_ms now
	local replayed="no earlier step to replay"
	((cur > 2)) && replayed="steps 1 to $((cur - 1)) replayed"
	((cur == 2)) && replayed="step 1 replayed"
	[[ $how == restored ]] && how="restored from the snapshot"
	STEP_DIAG=("${keep[@]}" "restarted the guest (boot $RUN_BOOTS $how, $replayed, $((now - t0)) ms): $why")
	return 0
}

# run_snapshot: for a run that may restart its guest (a sweep step; not
# with RESTORE=boot), the ready guest's state saved once, before the
# baseline, so that run_restart can start from it instead of booting.
run_snapshot() {
	RUN_SNAPSHOT=''
	[[ ${RESTORE:-snapshot} == snapshot && " ${S_VERB[*]} " == *" sweep "* ]] || return 0
	local t0 now
	now_ms t0
	if qemu_snapshot_take "$RIG_SOCK/ready.snap"; then
		RUN_SNAPSHOT=$RIG_SOCK/ready.snap
		now_ms now
		ktap "# snapshot of the ready guest in $((now - t0)) ms, $(($(stat -c %s "$RUN_SNAPSHOT") >> 20)) MiB: restarts restore it"
	else
		ktap "# no snapshot of the ready guest ($QMP_ERROR): restarts boot"
	fi
}

# run_restore: QEMU started from the run's snapshot (QEMU gone already),
# the QMP session and the agent answering. 1 when there is no snapshot or
# it did not come back (then nothing of it is left running).
run_restore() {
	[[ -n ${RUN_SNAPSHOT:-} ]] || return 1
	local st=0
	rm -f "$RIG_SOCK/qmp.sock" "$RIG_SOCK/agent.sock"
	if qemu_start -incoming "exec:cat $RUN_SNAPSHOT" && qmp_open && qemu_snapshot_resume; then
		agent_wait_ready $((QEMU_T0 + 30000)) 30000 hello && return 0
		st=$?
	fi
	agent_log "!" "restore from the snapshot failed (status $st, ${QMP_ERROR:-see qemu.log}): booting"
	chan_close agent
	chan_close qmp
	qemu_alive && kill -KILL "$QEMU_PID" 2>/dev/null
	qemu_reap
	QMP_EVENTS=()
	# a broken snapshot is not tried again
	RUN_SNAPSHOT=''
	return 1
}

# The plain drive: the scenario's steps once, planned up front.
drive_steps_plan() {
	ktap "1..${#S_TEXT[@]}"
	KTAP_PLANNED=1
}

drive_steps_run() {
	STEP_RESTART_FN=run_restart
	run_steps
}

drive_steps_abort() {
	return 0
}

# A failed random run is cut down to a short replayable scenario.
drive_steps_done() {
	[[ $VERDICT == fail && $SC_RANDOM == 1 && ${SHRINK:-1} == 1 ]] || return 0
	shrink_run || true
}

# ktap_not_run WHY: the steps that never got a result line (a run stopped
# by Ctrl-C, a dead QEMU or a failed boot), so the plan still adds up.
ktap_not_run() {
	local i
	for ((i = KTAP_DONE + 1; i <= ${#S_TEXT[@]}; i++)); do
		step_not_run "$i" "$1"
	done
	KTAP_DONE=${#S_TEXT[@]}
}

# --- finish ----------------------------------------------------------------------
finish_run() {
	[[ ${RUN_FINISHED:-0} == 0 ]] || return 0
	RUN_FINISHED=1
	set +e
	trap '' INT TERM
	local guest_ok=0
	qemu_alive && ((${GUEST_HUNG:-0} == 0)) && [[ -n ${CHAN_W[agent]:-} ]] && guest_ok=1
	# Every knob the run turned goes back, while the guest still answers;
	# then look again: an undo may have found the guest hung.
	((guest_ok)) && defer_run
	((guest_ok)) && { coverage_run_collect || rig_error "$COVERAGE_ERROR"; }
	qemu_alive && ((${GUEST_HUNG:-0} == 0)) || guest_ok=0
	# kmemleak (debug kernels): the run's leaks, each a kernel problem
	if ((${HAVE_KMEMLEAK:-0} && guest_ok)); then
		local kst=0 leak
		kmemleak_scan kmemleak || kst=$?
		case $kst in
		0) ;;
		3) fail "INFO: guest hang in the final kmemleak scan" ;;
		*) rig_error "the final kmemleak scan failed (status $kst)" ;;
		esac
		for leak in "${KMEMLEAK_LEAKS[@]}"; do
			fail "kmemleak: $leak"
		done
	fi
	chan_close agent
	chan_close qmp
	if qemu_alive; then
		# The channels are closed: QEMU gets SIGTERM, then qemu_stop
		# waits for it (and kills it if it must).
		kill -TERM "$QEMU_PID" 2>/dev/null
		qemu_stop
	else
		qemu_reap
	fi
	# nothing writes the logs now but the rig: the reserve is theirs
	rm -f "$RUN_DIR/.reserve"
	if [[ -s $RUN_DIR/console.log && -x $TRIAGE ]]; then
		mkdir -p "$RUN_DIR/reports"
		local st=0 t
		"$TRIAGE" -r "$RUN_DIR/reports" -j "$RUN_DIR/reports.json" "$RUN_DIR/console.log" \
			>"$RUN_DIR/reports.txt" 2>>"$RUN_DIR/triage.log" || st=$?
		if ((st == 1)); then
			# every unexplained title, once, into the reasons
			while IFS= read -r t; do
				[[ " ${REASONS[*]} " == *"$t"* ]] || fail "kernel report: $t"
			done < <(jq -r '.reports[] | select(.unexplained) | .title' "$RUN_DIR/reports.json")
		fi
		((st >= 2)) && rig_error "triage failed (see triage.log)"
	fi
	if ((KERNEL_PROBLEM)); then VERDICT=fail
	elif ((RIG_ERR)); then VERDICT=error
	elif [[ -n ${SKIP_REASON:-} ]]; then VERDICT=skip
	else VERDICT=pass; fi
	if ((KTAP_PLANNED)); then
		ktap_not_run "${REASONS[0]:-the run stopped}"
		SKIPPED=$((${#S_TEXT[@]} - PASSED - FAILED))
		ktap "# Totals: pass:$PASSED fail:$FAILED xfail:0 xpass:0 skip:$SKIPPED error:$RIG_ERR"
	fi
	# a sweep's last cases (sweep.json is rewritten at most once a second)
	[[ $RUN_DIR/.sweep-cases.jsonl -nt $RUN_DIR/sweep.json ]] && sweep_json
	write_summary
	write_junit
	ln -sfn "$RUN_ID" "$RIG_LOGS/latest"
	rm -rf "$RIG_SOCK"
	rm -f "$RUN_DIR/sock"
	local r
	for r in "${REASONS[@]}"; do say "$r"; done
	say "verdict: $VERDICT ($PASSED passed, $FAILED failed, $SKIPPED skipped) logs: ${RUN_DIR#"$RIG_ROOT"/}"
}

on_exit() {
	local st=$?
	# A signal's trap runs inside whatever it interrupted, with that
	# command's variables: "IFS= read" in chan_read left IFS empty, and
	# every word split of the finish (the injector list in caps_json)
	# then went wrong and summary.json was never written.
	local IFS=$' \t\n'
	if [[ -n ${RUN_DIR:-} && ${RUN_FINISHED:-0} == 0 ]]; then
		[[ -n ${INTERRUPTED:-} ]] && rig_error "interrupted by $INTERRUPTED"
		((st != 0 && ${#REASONS[@]} == 0)) && rig_error "the runner stopped unexpectedly (status $st)"
		"drive_${RUN_DRIVE}_abort"
		finish_run
		exit "$(verdict_code)"
	fi
}

# Kernel parameters that only a kernel with an option takes: a stock kernel
# ignores fail_vmemmap=1,100,0,-1,pmd and boots as if it were not there, so a run
# that boots with one needs the option as if the scenario declared it.
declare -rA PARAM_NEEDS=([fail_vmemmap]=CONFIG_FAIL_VMEMMAP [fail_hotplug]=CONFIG_FAIL_HOTPLUG)

# run_needs: the scenario's needs, and those of the parameters the run
# boots with (the scenario's cmdline and the variant's).
run_needs() {
	local w n
	local -A seen=()
	for n in "${SC_NEEDS[@]}"; do seen[$n]=1; echo "$n"; done
	for w in ${SC_CMDLINE:-} ${KVARIANT_CMDLINE:-}; do
		n=${PARAM_NEEDS[${w%%=*}]:-}
		[[ -z $n || -n ${seen[$n]:-} ]] || { seen[$n]=1; echo "$n"; }
	done
}

# needs_unmet: why the kernel config does not meet the scenario's needs,
# on one line, or nothing. An option built as a module counts only when the
# guest loads that module (KERNEL_MODULES, kmodules.sh); with no config
# the guest is probed after boot instead (caps_unmet).
needs_unmet() {
	[[ -n ${KCONFIG:-} ]] || return 0
	local n v hint=''
	local -a lack=() series=()
	for n in $(run_needs); do
		v=$(sed -n "s/^$n=//p" "$KCONFIG" | head -1)
		case $v in
		y) ;;
		m)
			kmod_has "$n" && continue
			if [[ -z ${KMOD_FOR[$n]:-} ]]; then
				lack+=("$n=m (a module the rig does not load)")
			elif [[ -z ${KERNEL_MODULES:-} ]]; then
				lack+=("$n=m")
				hint=" (built as modules: set KERNEL_MODULES to the image's package root or lib/modules/${KRELEASE:-<release>})"
			else
				lack+=("$n=m (no ${KMOD_FOR[$n]}.ko under $KMOD_DIR)")
			fi
			;;
		*)
			lack+=("$n")
			series_adds "$n" && series+=("$n")
			;;
		esac
	done
	((${#lack[@]})) || return 0
	((${#series[@]} == 0)) ||
		hint+=" (the rig's kernel-series adds ${series[*]#CONFIG_}: SERIES=1 builds a tree with it)"
	echo "$(join_by ', ' "${lack[@]}")$hint"
}

# series_adds CONFIG_X: some patch of the rig's series (any kernel's)
# declares the option, so a tree without the series cannot have it.
series_adds() {
	grep -qsxE "\+(menu)?config ${1#CONFIG_}" "$RIG_ROOT"/kernel-series/*.patch "$RIG_ROOT"/kernel-series/*/*.patch
}

# run_boot: QEMU up, the QMP session and the agent ready. Returns only when
# the guest answers; otherwise the verdict is made and the runner exits.
run_boot() {
	if ! qemu_start; then
		if qemu_alive; then rig_error "QEMU did not create its sockets"; else qemu_died; fi
		exit 2
	fi
	console_open
	if ! qmp_open; then
		if qemu_alive; then rig_error "QMP: $QMP_ERROR"; else qemu_died; fi
		exit 2
	fi
	local st=0 now
	agent_wait_ready $((QEMU_T0 + 120000)) 30000 || st=$?
	if ((st != 0)); then
		if ! qemu_alive; then
			qemu_died
		elif ((st == 3)); then
			fail "guest silent: no console output within 30 s of QEMU's start"
		elif ((st == 4)); then
			fail "guest panicked while booting: $(grep -a -m1 -o 'Kernel panic - not syncing: .*' "$RUN_DIR/console.log" | tr -d '\r')"
		else
			fail "guest did not boot: no agent within 120 s; console ends with: $(tail -c 300 "$RUN_DIR/console.log" | tr -d '\r' | tail -1)"
		fi
		exit 1
	fi
	now_ms now
	BOOT_READY_MS=$((now - QEMU_T0))
	qemu_learn_lpj "$ACCEL_USED"
	ktap "# guest $GUEST_RELEASE ready in $BOOT_READY_MS ms"
	((GUEST_BLOCK_SIZE == BLOCK_BYTES)) ||
		{ rig_error "guest memory blocks are $GUEST_BLOCK_SIZE bytes; scenarios assume $BLOCK_BYTES"; exit 2; }
}

# kmemleak_scan NAME: kmemleak's unreferenced objects since its baseline
# (two scans apart, in the guest), kept as NAME.txt and reports-NAME/ in
# the run folder, their titles in KMEMLEAK_LEAKS. Returns the agent's
# status (3: the guest hangs).
kmemleak_scan() {
	local st=0 leak
	KMEMLEAK_LEAKS=()
	agent_call -t 180000 kmemleak-scan || st=$?
	((st == 0)) || return $st
	((${#AGENT_OUT[@]})) || return 0
	printf '%s\n' "${AGENT_OUT[@]}" >"$RUN_DIR/$1.txt"
	while IFS=$'\t' read -r _ leak; do
		KMEMLEAK_LEAKS+=("$leak")
	done < <("$TRIAGE" -r "$RUN_DIR/reports-$1" "$RUN_DIR/$1.txt" 2>/dev/null)
	return 0
}

# kmemleak_baseline: what the guest holds now is no leak (after boot, and
# after each scan that has been judged).
kmemleak_baseline() {
	agent_call -t 120000 kmemleak-baseline && [[ ${AGENT_OUT[0]:-} == "kmemleak baseline taken" ]]
}

# run_baseline: the live model and the guest as booted; kmemleak's baseline.
run_baseline() {
	model_select live
	model_reset offline
	caps_probe || { rig_error "cannot ask the guest what its kernel has (agent.log)"; exit 2; }
	caps_report
	local -a unmet
	mapfile -t unmet < <(caps_unmet)
	if ((${#unmet[@]})); then
		SKIP_REASON="kernel lacks $(join_by ', ' "${unmet[@]}")"
		REASONS+=("skipped: $SKIP_REASON")
		ktap "# SKIP $SKIP_REASON"
		exit 4
	fi
	baseline_take || { fail "cannot read the guest's memory state at boot"; exit 1; }
	HAVE_KMEMLEAK=0
	if kmemleak_baseline; then
		HAVE_KMEMLEAK=1
		ktap "# kmemleak: baseline taken after boot; the run's leaks are scanned at the end"
	fi
	# The boot's own reports are not step 1's: the finish's triage of the
	# whole log judges them.
	console_scan
	CON_SUSPECT=0
}

# run_scenario: the whole run of the loaded scenario, to its exit status.
run_scenario() {
	KERNEL_PROBLEM=0 RIG_ERR=0 PASSED=0 FAILED=0 SKIPPED=0 REASONS=() VERDICT=error
	KTAP_PLANNED=0 KTAP_DONE=0 CON_BOOT_OFF=0 RUN_BOOTS=1
	now_ms RUN_T0
	mkdir -p "$RIG_LOGS"
	local free_kb
	free_kb=$(df -Pk "$RIG_LOGS" | awk 'NR == 2 { print $4 }')
	((free_kb >= 65536)) || die "only $((free_kb / 1024)) MiB free for logs in $RIG_LOGS (a run needs 64 MiB)"
	new_run_dir
	trap on_exit EXIT
	trap 'INTERRUPTED=SIGINT; exit 130' INT
	trap 'INTERRUPTED=SIGTERM; exit 143' TERM
	trap 'INTERRUPTED=SIGHUP; exit 129' HUP
	say "run $RUN_ID: $SCENARIO, seed $SEED, ${#S_TEXT[@]} steps"

	ktap "KTAP version 1"
	local unmet
	unmet=$(needs_unmet)
	if [[ -n $unmet ]]; then
		SKIP_REASON="kernel lacks $unmet"
		ktap "1..0 # SKIP $SKIP_REASON"
		REASONS+=("skipped: $SKIP_REASON")
		SKIPPED=${#S_TEXT[@]}
		finish_run
		exit "$(verdict_code)"
	fi

	if [[ $ACCEL == auto ]]; then ACCEL_USED=$(accel_probe "$KIMAGE"); else ACCEL_USED=$ACCEL; fi
	if [[ $ACCEL_USED == kvm && ! -w /dev/kvm ]]; then
		die "ACCEL=kvm but /dev/kvm is not usable"
	fi
	RUN_DEADLINE=$((RUN_T0 + (${RUN_EXTRA_S:-0} + SC_TIMEOUT) * 1000))
	qemu_boot_params "$ACCEL_USED"
	qemu_cmdline "$ACCEL_USED" "$KIMAGE" "$INITRAMFS" "$RIG_BASE_CMDLINE $QEMU_BOOT_PARAMS rig.seed=$SEED${KVARIANT_CMDLINE:+ $KVARIANT_CMDLINE}${SC_CMDLINE:+ $SC_CMDLINE}"
	# the device kinds present from boot
	vmem_qemu_args
	ktap "# scenario $SCENARIO seed $SEED kernel ${KRELEASE:-$KIMAGE} accel $ACCEL_USED"
	ktap "# kernel source $KSOURCE"
	ktap "# logs ${RUN_DIR#"$RIG_ROOT"/}"
	"drive_${RUN_DRIVE}_plan"
	run_boot
	run_snapshot
	run_baseline
	coverage_run_start || rig_error "$COVERAGE_ERROR"
	"drive_${RUN_DRIVE}_run"
	finish_run
	"drive_${RUN_DRIVE}_done"
	exit "$(verdict_code)"
}
