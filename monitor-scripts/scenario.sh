# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Scenario files: the header (machine, device kinds' lines, cmdline, needs,
# timeout) into the machine record, and the body (verbs, repeat ... end)
# expanded into the step list through the verb table (verbs.sh), every step
# checked against the static model before QEMU starts, so bad input ends in
# one line naming file, line and problem. The vocabulary is documented in
# scenarios/README.md. Sourced by rig.

# Steps one scenario may expand to (repeat and random included).
readonly SC_MAX_STEPS=100000

scenario_path() {
	local name=$1
	if [[ $name == */* ]]; then
		[[ -f $name ]] && { realpath "$name"; return; }
	elif [[ -f $RIG_ROOT/scenarios/$name ]]; then
		echo "$RIG_ROOT/scenarios/$name"
		return
	fi
	die "unknown scenario '$name' (see: ls $RIG_ROOT/scenarios)"
}

# sc_machine KEY=VALUE...: the machine line.
sc_machine() {
	local kv key val mem=512M,512M
	M_CPUS='' M_SLOTS=4 M_MAXMEM='' M_CPU=qemu64
	for kv in "$@"; do
		[[ $kv == *=* ]] || sc_die "machine: '$kv' is not key=value"
		key=${kv%%=*} val=${kv#*=}
		case $key in
		cpus) dec M_CPUS "$val" 8 && ((M_CPUS > 0)) || sc_die "machine: cpus=$val: use 1 to 8" ;;
		mem) mem=$val ;;
		slots) dec M_SLOTS "$val" 256 || sc_die "machine: slots=$val: use 0 to 256" ;;
		maxmem) to_bytes "$val" || sc_die "machine: maxmem=$val is not a size"; M_MAXMEM=$BYTES ;;
		cpu) [[ $val =~ ^[A-Za-z0-9_.,+-]+$ ]] || sc_die "machine: cpu=$val"; M_CPU=$val ;;
		*) sc_die "machine: unknown key '$key' (cpus, mem, slots, maxmem, cpu)" ;;
		esac
	done
	M_NODE_MEM=()
	local IFS=, m
	for m in $mem; do
		to_bytes "$m" || sc_die "machine: mem=$mem: '$m' is not a size"
		((BYTES % (2 << 20) == 0)) || sc_die "machine: node memory $m is not a multiple of 2M"
		M_NODE_MEM+=("$BYTES")
	done
	unset IFS
	((${#M_NODE_MEM[@]} >= 1 && ${#M_NODE_MEM[@]} <= 8)) || sc_die "machine: mem= gives 1 to 8 nodes"
	((M_NODE_MEM[0] >= 256 << 20)) || sc_die "machine: node 0 needs at least 256M to boot"
	[[ -n $M_CPUS ]] || M_CPUS=${#M_NODE_MEM[@]}
	M_BOOT=0
	for m in "${M_NODE_MEM[@]}"; do M_BOOT=$((M_BOOT + m)); done
	[[ -n $M_MAXMEM ]] || M_MAXMEM=$((M_BOOT + (4 << 30)))
	((M_MAXMEM > M_BOOT)) || sc_die "machine: maxmem=$(human "$M_MAXMEM") leaves no room above the boot memory ($(human "$M_BOOT"))"
}

# scenario_header_print: the header back, as scenario_load reads it (for
# shrunk scenarios: the same machine, devices, kernel arguments and needs).
scenario_header_print() {
	local m mem='' sep=''
	for m in "${M_NODE_MEM[@]}"; do mem+=$sep$(vmem_human "$m") sep=,; done
	echo "machine cpus=$M_CPUS mem=$mem slots=$M_SLOTS maxmem=$(human "$M_MAXMEM") cpu=$M_CPU"
	vmem_header_print
	[[ -z $SC_CMDLINE ]] || echo "cmdline $SC_CMDLINE"
	((${#SC_NEEDS[@]} == 0)) || echo "needs ${SC_NEEDS[*]}"
	echo "timeout $SC_TIMEOUT"
}

# sc_strip_comment: cut LINE at the '#' that starts a comment, as a shell
# would: at the start of a word, outside quotes and not after a backslash
# (guest-sh text may hold "50#", a quoted '#', "a\" #b" or a\ #b).
sc_strip_comment() {
	local i c q='' prev=' '
	for ((i = 0; i < ${#line}; i++)); do
		c=${line:i:1}
		if [[ $c == \\ && $q != \' ]]; then
			# the next character is quoted: it neither ends a quote
			# nor starts a comment
			i=$((i + 1)) prev=x
			continue
		fi
		if [[ -n $q ]]; then
			[[ $c == "$q" ]] && q=''
		elif [[ $c == \' || $c == '"' ]]; then
			q=$c
		elif [[ $c == '#' && $prev == [[:space:]] ]]; then
			line=${line:0:i}
			return
		fi
		prev=$c
	done
}

# scenario_load FILE: sets the machine record (M_*), SC_CMDLINE, SC_NEEDS,
# SC_TIMEOUT, SC_DESC and the step list (verbs.sh: S_*), predicted on the
# static model; the live model is left as it was.
scenario_load() {
	SC_FILE=$1 SC_LINENO=0 SC_CMDLINE='' SC_NEEDS=() SC_TIMEOUT=600 SC_DESC='' SC_RANDOM=0
	steps_reset
	vmem_reset_machine
	local prev_model=${MODEL:-live}
	# Lines are split into words, never glob-expanded on the host: guest-sh
	# text is for the guest's shell.
	set -f
	local -a lines=() linenos=()
	local line have_machine=0 in_body=0
	while IFS= read -r line || [[ -n $line ]]; do
		SC_LINENO=$((SC_LINENO + 1))
		if [[ -z $SC_DESC && $line =~ ^#\ ([a-z0-9-]+):\ (.*) ]]; then
			SC_DESC=${BASH_REMATCH[2]}
		fi
		[[ $line == *#* ]] && sc_strip_comment
		line=${line#"${line%%[![:space:]]*}"}
		line=${line%"${line##*[![:space:]]}"}
		[[ -z $line ]] && continue
		# shellcheck disable=SC2086 # split into words
		set -- $line
		case $1 in
		machine | virtio-mem | cmdline | needs | timeout)
			((in_body == 0)) || sc_die "'$1' belongs in the header, before the first step"
			;;
		esac
		case $1 in
		machine)
			((have_machine == 0)) || sc_die "one machine line"
			shift; sc_machine "$@"; have_machine=1 ;;
		virtio-mem)
			((have_machine)) || sc_die "virtio-mem needs the machine line before it"
			shift; vmem_header "$@" ;;
		cmdline) shift; SC_CMDLINE+=${SC_CMDLINE:+ }$* ;;
		needs) shift; SC_NEEDS+=("$@") ;;
		timeout)
			SC_TIMEOUT=$(duration_s "${2:-}") || sc_die "timeout: '${2:-}' is not a duration (s, m, h)" ;;
		*)
			((have_machine)) || sc_die "the header needs a machine line before the first step"
			in_body=1
			lines+=("$line") linenos+=("$SC_LINENO")
			;;
		esac
	done <"$SC_FILE"
	((have_machine)) || sc_die "no machine line"
	local need
	for need in "${SC_NEEDS[@]}"; do
		[[ $need =~ ^CONFIG_[A-Z0-9_]+$ ]] || SC_LINENO=0 sc_die "needs: '$need' is not a CONFIG_ option"
	done
	# A device kind needs its driver: a kernel without it is a skip.
	for need in $(vmem_needs); do
		[[ " ${SC_NEEDS[*]} " == *" $need "* ]] || SC_NEEDS+=("$need")
	done
	# Plugged memory comes up as memhp_default_state says: the rig's
	# cmdline sets offline, the scenario's comes after it and the last one
	# wins (auto-online steps change it later).
	local w auto=offline
	for w in $SC_CMDLINE; do
		[[ $w == memhp_default_state=* ]] && auto=${w#*=}
	done
	model_select static
	model_reset "$auto"
	sc_count_steps
	sc_expand 0 "${#lines[@]}" 1
	model_select "$prev_model"
	set +f
	((${#S_TEXT[@]} > 0)) || sc_die "no steps"
}

# sc_count_steps: the steps the body would expand to, counted before any is
# expanded (nested repeat counts multiply, random N is N steps), so a
# scenario past SC_MAX_STEPS is refused in milliseconds, not after
# expanding 100000 steps. Bad counts and unmatched ends are sc_expand's to
# name.
sc_count_steps() {
	local i n total=0 mult=1
	local -a w outer=()
	for ((i = 0; i < ${#lines[@]}; i++)); do
		read -ra w <<<"${lines[i]}"
		case ${w[0]} in
		repeat)
			dec n "${w[1]:-}" "$SC_MAX_STEPS" || n=1
			outer+=("$mult")
			mult=$((mult * n))
			((mult <= SC_MAX_STEPS)) || mult=$((SC_MAX_STEPS + 1))
			continue
			;;
		end)
			((${#outer[@]})) || continue
			mult=${outer[-1]}
			unset 'outer[-1]'
			continue
			;;
		random) dec n "${w[1]:-}" "$SC_MAX_STEPS" || n=1 ;;
		*) n=1 ;;
		esac
		total=$((total + mult * n))
		((total <= SC_MAX_STEPS || mult == 1)) ||
			SC_LINENO=${linenos[i]} sc_die "repeated by the repeat blocks around it, this line takes the scenario past $SC_MAX_STEPS steps"
	done
}

# sc_expand FIRST END TIMES: the lines [FIRST, END) TIMES over; a repeat
# block runs to its matching end.
sc_expand() {
	local first=$1 end=$2 times=$3 t i j depth
	for ((t = 0; t < times; t++)); do
		i=$first
		while ((i < end)); do
			SC_LINENO=${linenos[i]}
			# shellcheck disable=SC2086
			set -- ${lines[i]}
			case $1 in
			repeat)
				local count
				dec count "${2:-}" "$SC_MAX_STEPS" && ((count > 0)) || sc_die "repeat takes a count (1 to $SC_MAX_STEPS)"
				depth=1 j=$((i + 1))
				while ((j < end)); do
					case ${lines[j]} in
					repeat*) depth=$((depth + 1)) ;;
					end) depth=$((depth - 1)); ((depth == 0)) && break ;;
					esac
					j=$((j + 1))
				done
				((j < end)) || sc_die "repeat without end"
				# bounded before expanding: each line of the body is a step at least
				((${#S_TEXT[@]} + count * (j - i - 1) <= SC_MAX_STEPS)) ||
					sc_die "repeat $count of $((j - i - 1)) lines: the scenario would expand to more than $SC_MAX_STEPS steps"
				sc_expand $((i + 1)) "$j" "$count"
				i=$((j + 1))
				continue
				;;
			end) sc_die "end without repeat" ;;
			esac
			sc_step "$@"
			((${#S_TEXT[@]} <= SC_MAX_STEPS)) ||
				sc_die "the scenario expands to more than $SC_MAX_STEPS steps"
			i=$((i + 1))
		done
	done
}
