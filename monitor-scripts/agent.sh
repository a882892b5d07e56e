# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The host end of the guest agent (guest/agent) on its port (a virtio
# console port, or the second UART: qemu.sh).
# agent_call sends "<id> <verb> <args>" and collects the lines between
# "B <id>" and "E <id> <status>". What the guest sends is data: it is compared and
# logged, never evaluated. Sourced by rig.

AGENT_ID=0
AGENT_TIMEOUT_MS=${AGENT_TIMEOUT_MS:-60000}
# What one request may return: its first and last AGENT_KEEP lines, with
# the number dropped between them (a flooding guest command cannot grow the
# runner or the logs without bound).
AGENT_KEEP=${AGENT_KEEP:-1000}

agent_log() {
	log_line agent.log "$1" "$2"
}

# agent_wait_ready DEADLINE_MS SILENT_MS [hello]: the agent's READY line;
# sets GUEST_RELEASE and GUEST_BLOCK_SIZE. 3 when the console is still
# empty SILENT_MS after the start (a kernel that died before saying
# anything), 4 when the kernel panicked. hello asks for READY at once (a
# guest restored from a snapshot said it before the snapshot).
agent_wait_ready() {
	local st slice silent=$((QEMU_T0 + $2)) now
	AGENT_POSTED='' AGENT_POSTED_ST=''
	chan_open agent "$RIG_SOCK/agent.sock"
	[[ ${3:-} == hello ]] && chan_write agent $'\n'"0 hello" 2>/dev/null
	while :; do
		now_ms now
		slice=$((now + 2000))
		((slice < $1)) || slice=$1
		chan_read agent "$slice"
		st=$?
		if ((st == 2 && slice < $1)); then
			qemu_alive || return 1
			# The agent says READY once; a line lost on the serial port
			# (seen: its first byte, or all of it) must not cost the run,
			# so ask again every slice.
			chan_write agent $'\n'"0 hello" 2>/dev/null
			now_ms now
			# the console since this boot began (a restarted guest's log
			# goes on after the one before)
			(($(stat -c %s "$RUN_DIR/console.log") <= ${CON_BOOT_OFF:-0} && now > silent)) && return 3
			# A panic this early may hang the reset instead of ending QEMU.
			tail -c +"$((${CON_BOOT_OFF:-0} + 1))" "$RUN_DIR/console.log" |
				grep -a -c 'Kernel panic - not syncing' >/dev/null && return 4
			continue
		fi
		((st == 0)) || return $st
		agent_log "<" "$CHAN_LINE"
		if [[ $CHAN_LINE =~ READY\ ([A-Za-z0-9._+-]+)\ block_size=([0-9]+)$ ]]; then
			GUEST_RELEASE=${BASH_REMATCH[1]} GUEST_BLOCK_SIZE=${BASH_REMATCH[2]}
			return 0
		fi
	done
}

# agent_post VERB ARGS...: a request sent without waiting for its reply
# (AGENT_POSTED: its id); the next agent_call reads that reply on its way,
# or agent_settle waits for it. A step's begin marker goes this way and
# rides ahead of the step's own request: one round trip fewer for every
# step the guest carries out. Anything sent to QEMU first settles it (the
# QMP_BEFORE hook), so the marker still comes before what the step does in
# the console. 2 when the channel is closed.
AGENT_POSTED='' AGENT_POSTED_ST=''
agent_post() {
	local id=$((++AGENT_ID))
	agent_log ">" "$id $*"
	chan_write agent $'\n'"$id $*" 2>/dev/null || return 2
	AGENT_POSTED=$id AGENT_POSTED_ST=''
}

# agent_settle: the posted request's reply, waited for; its status as
# agent_call's (0 the verb exited 0, 1 not, 2 channel closed, 3 timeout).
agent_settle() {
	local deadline st
	[[ -n $AGENT_POSTED ]] || return 0
	now_ms deadline
	deadline=$((deadline + AGENT_TIMEOUT_MS))
	while [[ -n $AGENT_POSTED ]]; do
		chan_read agent "$deadline"
		st=$?
		if ((st != 0)); then
			agent_log "!" "no reply to $AGENT_POSTED (status $st)"
			AGENT_POSTED='' AGENT_POSTED_ST=$((st == 1 ? 2 : 3))
			break
		fi
		agent_log "<" "$CHAN_LINE"
		agent_posted_reply "$CHAN_LINE"
	done
	return "$AGENT_POSTED_ST"
}

# agent_posted_reply LINE: 0 when LINE ended the posted request.
agent_posted_reply() {
	[[ -n $AGENT_POSTED && $1 =~ ^E\ $AGENT_POSTED\ ([0-9]+)$ ]] || return 1
	AGENT_STATUS=${BASH_REMATCH[1]} AGENT_POSTED=''
	AGENT_POSTED_ST=$((AGENT_STATUS == 0 ? 0 : 1))
}
QMP_BEFORE=agent_settle

# agent_call [-t MS] VERB ARGS...: 0 when the verb exited 0, 1 when it
# exited non-zero (AGENT_STATUS), 2 when the channel closed, 3 on timeout.
# The output lines are in AGENT_OUT.
agent_call() {
	agent_ask "$@" || return 2
	agent_answer
}

# agent_ask [-t MS] VERB ARGS...: agent_call's request, sent (2 when the
# channel is closed); agent_answer waits for its reply. In between the
# host may do other work (QMP) while the guest answers.
AGENT_ASKED=''
agent_ask() {
	local timeout=$AGENT_TIMEOUT_MS now
	if [[ $1 == -t ]]; then timeout=$2; shift 2; fi
	AGENT_ASKED=$((++AGENT_ID)) AGENT_ASK_TIMEOUT=$timeout
	now_ms now
	AGENT_ASK_DEADLINE=$((now + timeout))
	agent_log ">" "$AGENT_ASKED $*"
	# The newline first ends whatever the guest's port still holds of a
	# line cut in two (seen: the tail of a "0 hello" sent while the port
	# was still in canonical mode, glued to the next request as "lo1").
	chan_write agent $'\n'"$AGENT_ASKED $*" 2>/dev/null || { AGENT_ASKED=''; return 2; }
}

# agent_answer: the reply to agent_ask's request, as agent_call's. It is
# taken a batch of lines at a time: a line at a time cost the host about
# 40 us a line in bash.
agent_answer() {
	local id=$AGENT_ASKED deadline=$AGENT_ASK_DEADLINE timeout=$AGENT_ASK_TIMEOUT st
	local mine=0 n=0 i k end joined
	local -a tail=() got
	AGENT_OUT=() AGENT_STATUS='' AGENT_ASKED=''
	[[ -n $id ]] || return 2
	while :; do
		chan_take agent "$deadline"
		st=$?
		# a posted request still unanswered is lost with this one
		((st != 0)) && [[ -n $AGENT_POSTED ]] && AGENT_POSTED='' AGENT_POSTED_ST=$((st == 1 ? 2 : 3))
		((st == 1)) && { agent_output "$n" tail; agent_log "!" "channel closed"; return 2; }
		((st == 2)) && { agent_output "$n" tail; agent_log "!" "no reply to $id within $((timeout / 1000)) s"; return 3; }
		got=("${CHAN_LINES[@]}")
		i=0
		# Lines of an earlier request that timed out are skipped; the
		# posted request's reply is taken on the way.
		while ((!mine && i < ${#got[@]})); do
			agent_log "<" "${got[i]}"
			[[ ${got[i]} == "B $id" ]] && mine=1
			((mine)) || agent_posted_reply "${got[i]}" || true
			i=$((i + 1))
		done
		((mine && i < ${#got[@]})) || continue
		# The "E" is the agent's last line before the next request: at the
		# batch's end, or (not seen) within it.
		k=-1
		if [[ ${got[-1]} =~ ^E\ $id\ ([0-9]+)$ ]]; then
			k=$((${#got[@]} - 1))
		else
			printf -v joined '\n%s' "${got[@]:i}"
			if [[ $joined == *$'\n'"E $id "* ]]; then
				for ((k = i; k < ${#got[@]}; k++)); do
					[[ ${got[k]} =~ ^E\ $id\ ([0-9]+)$ ]] && break
				done
				((k < ${#got[@]})) || k=-1
			fi
		fi
		((k >= 0)) && AGENT_STATUS=${BASH_REMATCH[1]}
		end=$((k >= 0 ? k : ${#got[@]}))
		((end > i)) && agent_body "${got[@]:i:end-i}"
		((k >= 0)) || continue
		agent_output "$n" tail
		agent_log "<" "${got[k]}"
		((k + 1 < ${#got[@]})) && chan_unread agent "${got[@]:k+1}"
		((AGENT_STATUS == 0)) && return 0
		return 1
	done
}

# agent_body LINE...: a reply's output lines, for agent_call (its n and
# tail): the first AGENT_KEEP into AGENT_OUT and the log, the rest into
# the ring of the last AGENT_KEEP.
agent_body() {
	local line
	if ((n + $# <= AGENT_KEEP)); then
		AGENT_OUT+=("$@")
		n=$((n + $#))
		log_line agent.log "<" "$@"
		return 0
	fi
	for line; do
		n=$((n + 1))
		if ((n <= AGENT_KEEP)); then
			agent_log "<" "$line"
			AGENT_OUT+=("$line")
		else
			tail[n % AGENT_KEEP]=$line
		fi
	done
}

# agent_output N TAIL: after the reply's first AGENT_KEEP lines (in
# AGENT_OUT already), the number dropped and the last AGENT_KEEP, in order.
agent_output() {
	local n=$1 i first
	local -n ring=$2
	((n > AGENT_KEEP)) || return 0
	first=$((n - AGENT_KEEP + 1))
	((first > AGENT_KEEP + 1)) || first=$((AGENT_KEEP + 1))
	if ((first > AGENT_KEEP + 1)); then
		AGENT_OUT+=("[rig: $((first - AGENT_KEEP - 1)) lines of output dropped]")
		agent_log "!" "$((first - AGENT_KEEP - 1)) lines of output dropped"
	fi
	for ((i = first; i <= n; i++)); do
		AGENT_OUT+=("${ring[i % AGENT_KEEP]}")
		agent_log "<" "${ring[i % AGENT_KEEP]}"
	done
}

# agent_failed STATUS WHAT: a failed agent_call as a step result: the guest
# misbehaved (1) unless the rig's side broke (2); a timeout is a hang.
agent_failed() {
	local st=$1 what=$2
	case $st in
	1) diag "$what failed in the guest (status $AGENT_STATUS): ${AGENT_OUT[*]}"; return 1 ;;
	2)
		# rigchan killed while QEMU runs: the rig's side broke, not the guest
		if qemu_alive && chan_broken agent; then
			diag "$what: the rig's rigchan for the agent channel died"
			return 2
		fi
		diag "$what: agent channel closed"
		return 1
		;;
	3) GUEST_HUNG=1; diag "INFO: guest hang in $what: no agent reply"; return 1 ;;
	esac
}
