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

# check_chan_torn: a line the spool shows in part, in the middle of one
# read, is still read whole. The kernel grows a file a page at a time, so
# a read racing rigchan's write can end inside it, and mapfile reads on
# past that moment (an hour's soak got a QMP reply as '{"return' and
# '": {}, "id": 73541}'). Here a writer puts each line in two writes.
check_chan_torn() {
	local out
	out=$(chan_torn "$TMP/torn" 60000)
	if [[ $out == "lines 60000 torn 0" ]]; then
		t_ok "line channels: a line seen in part inside one read is read whole"
	else
		t_fail "line channels: a line seen in part inside one read is read whole ($out)"
	fi
}

# chan_torn DIR LINES: "lines N torn M" from the reader's side.
chan_torn() {
	local dir=$1 lines=$2 i w n=0 bad=0 l
	# shellcheck disable=SC2034 # the runner's, read by chan.sh
	local RIG_SOCK=$dir RUN_DIR=$dir RIG_BUILD=$ROOT/build
	# shellcheck source=/dev/null
	. "$ROOT/monitor-scripts/lib.sh"
	# shellcheck source=/dev/null
	. "$ROOT/monitor-scripts/chan.sh"
	# shellcheck disable=SC2034 # chan.sh's queue of channel t
	declare -a CHAN_Q_t=()
	mkdir -p "$dir"
	: >"$dir/t.spool.0"
	exec {w}>>"$dir/t.spool.0"
	local s
	exec {s}<"$dir/t.spool.0"
	# shellcheck disable=SC2034 # chan.sh's, as chan_open sets them
	CHAN_S[t]=$s CHAN_SEG[t]=0 CHAN_PART[t]=''
	(
		for ((i = 0; i < lines; i++)); do
			printf '{"return' >&"$w"
			printf '": {}, "id": %d}\n' "$i" >&"$w"
		done
		echo end >&"$w"
	) &
	local writer=$! deadline t
	now_ms deadline
	deadline=$((deadline + 60000))
	while :; do
		if ! chan_fill t; then
			# the writer gone without its "end", or a minute passed
			now_ms t
			((t < deadline)) || { echo "no end within 60 s after $n lines"; kill "$writer" 2>/dev/null; return; }
			kill -0 "$writer" 2>/dev/null || chan_fill t || { echo "writer ended without its end line after $n lines"; return; }
			continue
		fi
		for l in "${CHAN_Q_t[@]}"; do
			[[ $l == end ]] && break 2
			n=$((n + 1))
			[[ $l == '{"return": {}, "id": '*'}' ]] || bad=$((bad + 1))
		done
		CHAN_Q_t=()
	done
	wait
	echo "lines $n torn $bad"
}
