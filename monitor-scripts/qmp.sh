# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The QMP session: one connection per run, the capabilities handshake, one
# qmp_exec under one function per command, events queued while a reply is
# awaited and waited for with a timeout. Every message goes to qmp.log with a
# timestamp. Sourced by rig.

QMP_ID=0
# QMP_BEFORE: a command run before anything is sent to QEMU (the agent's
# posted step marker settles there: agent.sh)
QMP_BEFORE=''
QMP_TIMEOUT_MS=${QMP_TIMEOUT_MS:-20000}
declare -a QMP_EVENTS=()

qmp_log() {
	log_line qmp.log "$1" "$2"
}

# qmp_next DEADLINE: the next message into QMP_LINE; events are also queued.
# The queue keeps the newest QMP_EVENTS_MAX: an event nobody waits for
# stays (a DIMM's last ACPI_DEVICE_OST names no device, so qmp_forget
# never drops it), and a soak's queue grew by one a cycle: after 1500
# cycles each event wait went through 1500, and the soak ran at half its
# speed.
QMP_EVENTS_MAX=64
qmp_next() {
	chan_read qmp "$1"
	local st=$?
	((st == 0)) || return $st
	QMP_LINE=$CHAN_LINE
	qmp_log "<" "$QMP_LINE"
	if [[ $QMP_LINE == *'"event": '* ]]; then
		QMP_EVENTS+=("$QMP_LINE")
		((${#QMP_EVENTS[@]} <= QMP_EVENTS_MAX)) || QMP_EVENTS=("${QMP_EVENTS[@]: -QMP_EVENTS_MAX}")
	fi
	return 0
}

qmp_open() {
	chan_open qmp "$RIG_SOCK/qmp.sock"
	# Events may come first, and QEMU 7.2 can even skip the greeting when
	# the connection races its start (seen: RESUME as the first line, no
	# greeting): queue events, and negotiate anyway after 2 s of no greeting.
	local st greet
	now_ms greet
	greet=$((greet + 2000))
	while :; do
		qmp_next "$greet"
		st=$?
		((st == 1)) && { QMP_ERROR="QMP connection closed before the greeting"; return 2; }
		((st == 2)) && break
		[[ $QMP_LINE == *'"QMP"'* ]] && break
		[[ $QMP_LINE == *'"event": '* ]] && continue
		QMP_ERROR="not a QMP greeting: $QMP_LINE"
		return 2
	done
	((st == 2)) && qmp_log "!" "no greeting within 2 s; negotiating anyway"
	qmp_exec qmp_capabilities && return 0
	# already negotiated is as good as negotiated
	[[ $QMP_ERROR == *"negotiation is already complete"* ]] && return 0
	return 2
}

# qmp_exec CMD [ARGS_JSON]: 0 with the reply in QMP_RETURN; 1 when QEMU
# answered with an error (QMP_ERROR); 2 when no reply came (closed, timeout)
# or it had neither error nor return.
qmp_exec() {
	local cmd=$1 args=${2:-} id=$((++QMP_ID)) msg st deadline
	now_ms deadline
	deadline=$((deadline + QMP_TIMEOUT_MS))
	msg="{\"execute\": \"$cmd\"${args:+, \"arguments\": $args}, \"id\": $id}"
	QMP_RETURN='' QMP_ERROR=''
	[[ -z $QMP_BEFORE ]] || "$QMP_BEFORE" || true
	qmp_log ">" "$msg"
	chan_write qmp "$msg" 2>/dev/null || { QMP_ERROR="QMP connection lost sending $cmd"; return 2; }
	while :; do
		qmp_next "$deadline"
		st=$?
		case $st in
		1) QMP_ERROR="QMP connection closed waiting for the reply to $cmd"; return 2 ;;
		2) QMP_ERROR="no reply to $cmd within $((QMP_TIMEOUT_MS / 1000)) s"; return 2 ;;
		esac
		[[ $QMP_LINE == *'"event": '* ]] && continue
		[[ $QMP_LINE =~ \"id\":\ *${id}[,}] ]] || continue
		if [[ $QMP_LINE == '{"return"'* ]]; then
			QMP_RETURN=$QMP_LINE
			return 0
		fi
		if [[ $QMP_LINE == '{"error"'* ]]; then
			QMP_ERROR="$cmd: $(jq -r '.error.desc' <<<"$QMP_LINE")"
			return 1
		fi
		QMP_ERROR="$cmd: reply has neither return nor error: $QMP_LINE"
		return 2
	done
}

# qmp_failed: a failed qmp_exec as a step result: the rig's side (2).
qmp_failed() {
	diag "$QMP_ERROR"
	return 2
}

# qmp_forget TEXT: drop queued events that mention TEXT (before a new
# action on a device, so an old event cannot answer for a new one).
qmp_forget() {
	local -a keep=()
	local e
	for e in "${QMP_EVENTS[@]}"; do
		[[ $e == *"$1"* ]] || keep+=("$e")
	done
	QMP_EVENTS=("${keep[@]}")
}

# qmp_wait_event TIMEOUT_MS PATTERN...: each pattern is EVENT or EVENT:TEXT;
# the first queued or arriving event that matches one is removed from the
# queue into QMP_EVENT, its pattern index into QMP_MATCH. 2 on timeout or a
# closed connection (QMP_ERROR names what did not come).
qmp_wait_event() {
	local deadline i p pat ev text st
	now_ms deadline
	deadline=$((deadline + $1))
	shift
	while :; do
		for i in "${!QMP_EVENTS[@]}"; do
			p=-1
			for pat in "$@"; do
				p=$((p + 1))
				ev=${pat%%:*} text=
				[[ $pat == *:* ]] && text=${pat#*:}
				[[ ${QMP_EVENTS[i]} == *"\"event\": \"$ev\""* ]] || continue
				[[ -z $text || ${QMP_EVENTS[i]} == *"$text"* ]] || continue
				QMP_EVENT=${QMP_EVENTS[i]} QMP_MATCH=$p
				unset "QMP_EVENTS[i]"
				QMP_EVENTS=("${QMP_EVENTS[@]}")
				return 0
			done
		done
		qmp_next "$deadline"
		st=$?
		((st == 0)) && continue
		((st == 1)) && QMP_ERROR="QMP connection closed waiting for $*"
		((st == 2)) && QMP_ERROR="timed out waiting for $*"
		return 2
	done
}

# One function per QMP command.
qmp_object_add_ram() { # ID BYTES
	qmp_exec object-add "{\"qom-type\": \"memory-backend-ram\", \"id\": \"$1\", \"size\": $2}"
}

qmp_object_del() { # ID
	qmp_exec object-del "{\"id\": \"$1\"}"
}

qmp_device_add_dimm() { # ID MEMDEV NODE
	qmp_exec device_add "{\"driver\": \"pc-dimm\", \"id\": \"$1\", \"memdev\": \"$2\", \"node\": $3}"
}

qmp_device_del() { # ID
	qmp_exec device_del "{\"id\": \"$1\"}"
}

# qmp_memory_devices: QMP_MEMDEVS gets one "id addr size node" per DIMM,
# QMP_VMEMS one "id memaddr size node max-size requested-size block-size"
# per virtio-mem device. Parsed in bash: this runs after every step, and a
# jq costs a fork. ("size" never matches inside "max-size": the quote.)
qmp_memory_devices() {
	QMP_MEMDEVS=() QMP_VMEMS=()
	qmp_exec query-memory-devices || return
	local rest=${QMP_RETURN#*\"return\": \[} dev type id addr size node max req block
	while [[ $rest == *'{"type": '* ]]; do
		rest=${rest#*\{\"type\": }
		dev=${rest%%\{\"type\": *}
		type=${dev#\"} type=${type%%\"*}
		id=- addr=- size=- node=- max=- req=- block=-
		[[ $dev =~ \"id\":\ \"([^\"]*)\" ]] && id=${BASH_REMATCH[1]}
		[[ $dev =~ \"size\":\ ([0-9]+) ]] && size=${BASH_REMATCH[1]}
		[[ $dev =~ \"node\":\ ([0-9]+) ]] && node=${BASH_REMATCH[1]}
		if [[ $type == virtio-mem ]]; then
			[[ $dev =~ \"memaddr\":\ ([0-9]+) ]] && addr=${BASH_REMATCH[1]}
			[[ $dev =~ \"max-size\":\ ([0-9]+) ]] && max=${BASH_REMATCH[1]}
			[[ $dev =~ \"requested-size\":\ ([0-9]+) ]] && req=${BASH_REMATCH[1]}
			[[ $dev =~ \"block-size\":\ ([0-9]+) ]] && block=${BASH_REMATCH[1]}
			QMP_VMEMS+=("$id $addr $size $node $max $req $block")
			continue
		fi
		[[ $dev =~ \"addr\":\ ([0-9]+) ]] && addr=${BASH_REMATCH[1]}
		QMP_MEMDEVS+=("$id $addr $size $node")
	done
}

# qmp_qom_set PATH PROPERTY JSON_VALUE
qmp_qom_set() {
	qmp_exec qom-set "{\"path\": \"$1\", \"property\": \"$2\", \"value\": $3}"
}

# qmp_qom_get PATH PROPERTY: the value's JSON in QOM_VALUE.
qmp_qom_get() {
	qmp_exec qom-get "{\"path\": \"$1\", \"property\": \"$2\"}" || return
	QOM_VALUE=${QMP_RETURN#*\"return\": }
	QOM_VALUE=${QOM_VALUE%%, \"id\": *}
	QOM_VALUE=${QOM_VALUE%\}}
}

qmp_send_key() { # KEY...
	local keys='' k
	for k in "$@"; do keys+="${keys:+, }{\"type\": \"qcode\", \"data\": \"$k\"}"; done
	qmp_exec send-key "{\"keys\": [$keys]}"
}
