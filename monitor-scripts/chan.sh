# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Line channels to QEMU's unix sockets (QMP, the guest agent): one socat per
# channel for the whole run, fifos in the private socket folder, reads with a
# deadline. A channel whose socat exits reads as closed. Sourced by rig.

declare -A CHAN_W CHAN_R CHAN_PID

chan_open() {
	local name=$1 sock=$2 w r
	mkfifo -m 600 "$RIG_SOCK/$name.in" "$RIG_SOCK/$name.out"
	# its own session and a parent-death signal, as QEMU (qemu.sh). QEMU
	# binds the socket before it listens: a connect in between is refused
	# (seen under load), so socat tries again for 2 s.
	setsid setpriv --pdeathsig TERM socat -t 0 "UNIX-CONNECT:$sock,retry=100,interval=0.02" STDIO \
		<"$RIG_SOCK/$name.in" >"$RIG_SOCK/$name.out" 2>>"$RUN_DIR/socat.log" &
	CHAN_PID[$name]=$!
	exec {w}>"$RIG_SOCK/$name.in"
	exec {r}<"$RIG_SOCK/$name.out"
	CHAN_W[$name]=$w CHAN_R[$name]=$r
}

chan_close() {
	local name=$1
	[[ -n ${CHAN_W[$name]:-} ]] || return 0
	local w=${CHAN_W[$name]} r=${CHAN_R[$name]}
	exec {w}>&- {r}<&-
	kill "${CHAN_PID[$name]}" 2>/dev/null
	wait "${CHAN_PID[$name]}" 2>/dev/null
	# a restarted guest opens the channel again
	rm -f "$RIG_SOCK/$name.in" "$RIG_SOCK/$name.out"
	unset "CHAN_W[$name]" "CHAN_R[$name]" "CHAN_PID[$name]"
}

chan_alive() {
	kill -0 "${CHAN_PID[$1]:-0}" 2>/dev/null
}

chan_write() {
	printf '%s\n' "$2" >&"${CHAN_W[$1]}"
}

# chan_read NAME DEADLINE_MS: one line into CHAN_LINE. 0 read, 1 closed,
# 2 deadline passed.
chan_read() {
	local t
	now_ms t
	t=$(($2 - t))
	((t > 0)) || return 2
	local frac=00$((t % 1000)) st=0
	IFS= read -r -t "$((t / 1000)).${frac: -3}" -u "${CHAN_R[$1]}" CHAN_LINE || st=$?
	if ((st == 0)); then
		CHAN_LINE=${CHAN_LINE%$'\r'}
		return 0
	fi
	# read's status: above 128 when the time ran out, else end of file
	((st > 128)) && return 2
	return 1
}
