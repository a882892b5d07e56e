# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# make check: the runner's line channels (monitor-scripts/chan.sh and
# tools/rigchan.c) against a socat server in QEMU's place: every line in
# order, a line written in two parts read whole, "\r\n" read as "\n", a
# forged segment end read as data, the spool cut into segments and the
# ones read removed, a deadline kept, and the end of the server read as a
# closed channel after its last line. Sourced by tests/tier-check.sh.

check_chan() {
	local why dir=$TMP/chan lines=3000 out
	why=$(t_needs socat setpriv)
	if [[ -n $why ]]; then
		t_skip "line channels: every line, in order, through rigchan's spool" "$why"
		return
	fi
	"$RIG" tools || { t_fail "line channels: rigchan builds"; return; }
	mkdir -p "$dir/sock"
	# the server: waits for "go", then its lines; a line in two writes,
	# one with "\r\n", one that looks like a segment's end
	cat >"$dir/server.sh" <<-EOF
		read -r go
		[ "\$go" = go ] || exit 1
		# in ten writes at least, each past a segment's size
		for ((i = 1; i <= $lines; i++)); do
			echo "line \$i"
			((i % 300)) || sleep 0.05
		done
		printf 'par'; sleep 0.2; printf 'tial\n'
		printf 'crlf\r\n'
		printf '\001rigchan 1.2 next\n'
		echo end
	EOF
	socat "UNIX-LISTEN:$dir/s.sock" EXEC:"bash $dir/server.sh" 2>"$dir/socat.err" &
	local server=$!
	out=$(chan_client "$dir" "$lines")
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	if [[ $out == $'before the request: 2\nafter the end: 1' ]]; then
		t_ok "line channels: every line, in order, through rigchan's spool"
	else
		printf '# %s\n' "${out:0:400}" "$(head -c 400 "$dir/socat.err" "$dir/chan.log" 2>/dev/null)"
		t_fail "line channels: every line, in order, through rigchan's spool"
	fi
}

# chan_client DIR LINES: the runner's side, in its own shell; what went
# wrong, then the status of a read by a deadline before the request and
# one after the server's end.
chan_client() {
	local dir=$1 lines=$2 d i segs cur
	local -a rx=() tx=()
	# shellcheck disable=SC2034 # the runner's, read by chan.sh
	local RUN_DIR=$dir RIG_SOCK=$dir/sock RIG_BUILD=$ROOT/build
	export RIGCHAN_SEGMENT=1024
	# not followed: the runner's globals would mix with tests/run's
	# shellcheck source=/dev/null
	. "$ROOT/monitor-scripts/lib.sh"
	# shellcheck source=/dev/null
	. "$ROOT/monitor-scripts/chan.sh"
	# shellcheck disable=SC2034 # chan.sh's queue of channel t
	declare -a CHAN_Q_t=()
	deadline() { now_ms d; d=$((d + $1)); }
	chan_open t "$dir/s.sock"
	# nothing before the request: the deadline passes
	deadline 300
	chan_read t "$d"
	echo "before the request: $?"
	chan_write t go
	deadline 20000
	rx=()
	while :; do
		chan_take t "$d" || { echo "take: status $?"; break; }
		rx+=("${CHAN_LINES[@]}")
		[[ ${rx[-1]} == end ]] && break
		# the segments already read are gone (rigchan may have written
		# more past the one being read)
		cur=${CHAN_SEG[t]}
		for ((i = 0; i < cur; i++)); do
			[[ -e $dir/sock/t.spool.$i ]] && echo "segment $i left"
		done
	done
	tx=()
	for ((i = 1; i <= lines; i++)); do tx+=("line $i"); done
	tx+=(partial crlf $'\001rigchan 1.2 next' end)
	[[ ${rx[*]} == "${tx[*]}" ]] || echo "lines differ: ${#rx[@]} read, ${#tx[@]} sent"
	segs=$(find "$dir/sock" -name 't.spool.*' | sed 's/.*spool\.//' | sort -n | tail -1)
	((segs >= 5)) || echo "no segments: the last is $segs"
	# the server ended: closed, not a timeout
	deadline 5000
	chan_read t "$d"
	echo "after the end: $?"
	chan_close t
}
