# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Line channels to QEMU's unix sockets (QMP, the guest agent): one rigchan
# (tools/rigchan.c) per channel for the whole run. Requests go through a
# fifo; what QEMU sends is spooled to a file, read a buffer at a time, with
# a wake-up byte on a second fifo to wait on with a deadline (bash reads a
# pipe a byte per system call). A channel whose rigchan exits reads as
# closed once its spool is read. Sourced by rig.

declare -A CHAN_W CHAN_R CHAN_S CHAN_SEG CHAN_PART CHAN_PID
# the lines read from each channel's spool and not yet taken
declare -a CHAN_Q_agent=() CHAN_Q_qmp=() CHAN_LINES=()
RIGCHAN=${RIGCHAN:-$RIG_BUILD/tools/rigchan}
# the line that ends a spool segment: its tag is this runner's own
CHAN_TAG=$$.$RANDOM
CHAN_NEXT=$'\001'"rigchan $CHAN_TAG next"

chan_open() {
	local name=$1 sock=$2 w r s
	mkfifo -m 600 "$RIG_SOCK/$name.in" "$RIG_SOCK/$name.out"
	: >"$RIG_SOCK/$name.spool.0"
	# its own session and a parent-death signal, as QEMU (qemu.sh). QEMU
	# binds the socket before it listens: a connect in between is refused
	# (seen under load), so rigchan tries again for 2 s.
	setsid setpriv --pdeathsig TERM "$RIGCHAN" "$sock" "$RIG_SOCK/$name.spool" "$CHAN_TAG" \
		<"$RIG_SOCK/$name.in" >"$RIG_SOCK/$name.out" 2>>"$RUN_DIR/chan.log" &
	CHAN_PID[$name]=$! CHAN_EXIT[$name]=''
	exec {w}>"$RIG_SOCK/$name.in"
	exec {r}<"$RIG_SOCK/$name.out"
	exec {s}<"$RIG_SOCK/$name.spool.0"
	CHAN_W[$name]=$w CHAN_R[$name]=$r CHAN_S[$name]=$s CHAN_SEG[$name]=0 CHAN_PART[$name]=''
	local -n q=CHAN_Q_$name
	q=()
}

chan_close() {
	local name=$1
	[[ -n ${CHAN_W[$name]:-} ]] || return 0
	local w=${CHAN_W[$name]} r=${CHAN_R[$name]} s=${CHAN_S[$name]}
	exec {w}>&- {r}<&- {s}<&-
	kill "${CHAN_PID[$name]}" 2>/dev/null
	wait "${CHAN_PID[$name]}" 2>/dev/null
	# a restarted guest opens the channel again
	rm -f "$RIG_SOCK/$name.in" "$RIG_SOCK/$name.out" "$RIG_SOCK/$name.spool".*
	unset "CHAN_W[$name]" "CHAN_R[$name]" "CHAN_S[$name]" "CHAN_SEG[$name]" "CHAN_PART[$name]" \
		"CHAN_PID[$name]"
}

chan_alive() {
	kill -0 "${CHAN_PID[$1]:-0}" 2>/dev/null
}

# chan_broken NAME: 0 when the channel's rigchan has ended other than by
# seeing the socket end (killed, or an error of its own): the rig's side
# broke. A QEMU that dies closes the socket before its exit shows, and
# rigchan then ends with status 0.
declare -A CHAN_EXIT
chan_broken() {
	local st=0
	chan_alive "$1" && return 1
	if [[ -z ${CHAN_EXIT[$1]:-} ]]; then
		wait "${CHAN_PID[$1]}" 2>/dev/null || st=$?
		CHAN_EXIT[$1]=$st
	fi
	((CHAN_EXIT[$1] != 0))
}

chan_write() {
	printf '%s\n' "$2" >&"${CHAN_W[$1]}"
}

# chan_next NAME: on to the channel's next spool segment; the one read is
# removed.
chan_next() {
	local name=$1 s=${CHAN_S[$1]} k=${CHAN_SEG[$1]}
	[[ -e $RIG_SOCK/$name.spool.$((k + 1)) ]] || return 1
	exec {s}<&-
	rm -f "$RIG_SOCK/$name.spool.$k"
	exec {s}<"$RIG_SOCK/$name.spool.$((k + 1))"
	CHAN_S[$name]=$s CHAN_SEG[$name]=$((k + 1))
}

# chan_fill NAME: every whole line the spool holds into the channel's
# queue (CHAN_Q_<NAME>), in one read; 1 when there was none. The lines keep
# no "\r\n"; a line still being written waits in CHAN_PART.
chan_fill() {
	local name=$1 last n i
	local -n q=CHAN_Q_$1
	local -a got
	n=${#q[@]}
	while :; do
		mapfile -u "${CHAN_S[$name]}" got
		((${#got[@]})) || break
		got[0]=${CHAN_PART[$name]}${got[0]}
		CHAN_PART[$name]=''
		# A line can end early inside the read too: mapfile reads on past
		# a moment the file ended in the middle of rigchan's write (the
		# kernel grows a file a page at a time), and hands the two parts
		# out as two lines. Seen in an hour's soak: '{"return' and
		# '": {}, "id": 73541}'.
		for ((i = 0; i < ${#got[@]} - 1; i++)); do
			[[ ${got[i]} == *$'\n' ]] && continue
			got[i + 1]=${got[i]}${got[i + 1]}
			unset 'got[i]'
		done
		got=("${got[@]}")
		last=${got[-1]}
		if [[ $last != *$'\n' ]]; then
			CHAN_PART[$name]=$last
			unset 'got[-1]'
			((${#got[@]})) || break
		fi
		got=("${got[@]%$'\n'}")
		q+=("${got[@]%$'\r'}")
		# a segment's last line: on to the next, for the rest
		[[ ${q[-1]} == "$CHAN_NEXT" ]] && chan_next "$name" && { unset 'q[-1]'; continue; }
		break
	done
	((${#q[@]} > n))
}

# chan_wait NAME DEADLINE_MS: lines queued by the deadline. 0 some are,
# 1 closed, 2 deadline passed.
chan_wait() {
	local name=$1 t st frac b
	local -n q=CHAN_Q_$1
	while ((${#q[@]} == 0)); do
		chan_fill "$name" && return 0
		now_ms t
		t=$(($2 - t))
		((t > 0)) || return 2
		frac=00$((t % 1000)) st=0
		read -r -N 1 -t "$((t / 1000)).${frac: -3}" -u "${CHAN_R[$name]}" b || st=$?
		# read's status: above 128 when the time ran out, else end of file
		((st > 128)) && return 2
		if ((st != 0)); then
			# rigchan ended; what it spooled before is still read
			chan_fill "$name" && return 0
			[[ -n ${CHAN_PART[$name]} ]] || return 1
			q=("${CHAN_PART[$name]%$'\r'}")
			CHAN_PART[$name]=''
		fi
	done
}

# chan_read NAME DEADLINE_MS: the next line into CHAN_LINE; as chan_wait.
chan_read() {
	local -n q=CHAN_Q_$1
	chan_wait "$1" "$2" || return
	CHAN_LINE=${q[0]}
	q=("${q[@]:1}")
}

# chan_take NAME DEADLINE_MS: every line queued (at least one) into
# CHAN_LINES; as chan_wait. chan_unread NAME LINE...: back to the queue's
# front.
chan_take() {
	local -n q=CHAN_Q_$1
	chan_wait "$1" "$2" || return
	CHAN_LINES=("${q[@]}")
	q=()
}

chan_unread() {
	local -n q=CHAN_Q_$1
	shift
	q=("$@" "${q[@]}")
}
