# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # a part of rig: what it sets, the other parts read
# Scenario files: parse the header (machine, cmdline, needs, timeout) and
# expand the body (verbs, repeat ... end) into a flat step list, checking
# every step against a model of the machine before QEMU starts, so bad input
# ends in one line naming file, line and problem. Sourced by rig.
# The vocabulary is documented in scenarios/README.md.

# The x86_64 memory block size for guests under 64 GiB; the runner checks the
# guest agrees at boot.
readonly BLOCK_BYTES=$((128 << 20))

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

# Parse errors name the place.
sc_die() {
	die "$SC_FILE:$SC_LINENO: $*"
}

sc_machine() {
	local kv key val mem=512M,512M
	M_CPUS='' M_SLOTS=4 M_MAXMEM='' M_CPU=qemu64
	for kv in "$@"; do
		[[ $kv == *=* ]] || sc_die "machine: '$kv' is not key=value"
		key=${kv%%=*} val=${kv#*=}
		case $key in
		cpus) is_uint "$val" && ((val > 0 && val <= 8)) || sc_die "machine: cpus=$val: use 1 to 8"; M_CPUS=$val ;;
		mem) mem=$val ;;
		slots) is_uint "$val" && ((val <= 256)) || sc_die "machine: slots=$val: use 0 to 256"; M_SLOTS=$val ;;
		maxmem) M_MAXMEM=$(size_bytes "$val") || sc_die "machine: maxmem=$val is not a size" ;;
		cpu) [[ $val =~ ^[A-Za-z0-9_.,+-]+$ ]] || sc_die "machine: cpu=$val"; M_CPU=$val ;;
		*) sc_die "machine: unknown key '$key' (cpus, mem, slots, maxmem, cpu)" ;;
		esac
	done
	M_NODE_MEM=()
	local IFS=, m b
	for m in $mem; do
		b=$(size_bytes "$m") || sc_die "machine: mem=$mem: '$m' is not a size"
		((b % (2 << 20) == 0)) || sc_die "machine: node memory $m is not a multiple of 2M"
		M_NODE_MEM+=("$b")
	done
	unset IFS
	((${#M_NODE_MEM[@]} >= 1 && ${#M_NODE_MEM[@]} <= 8)) || sc_die "machine: mem= gives 1 to 8 nodes"
	((M_NODE_MEM[0] >= 256 << 20)) || sc_die "machine: node 0 needs at least 256M to boot"
	[[ -n $M_CPUS ]] || M_CPUS=${#M_NODE_MEM[@]}
	local boot=0
	for b in "${M_NODE_MEM[@]}"; do boot=$((boot + b)); done
	M_BOOT=$boot
	[[ -n $M_MAXMEM ]] || M_MAXMEM=$((boot + (4 << 30)))
	((M_MAXMEM > boot)) || sc_die "machine: maxmem=$(human "$M_MAXMEM") leaves no room above the boot memory ($(human "$boot"))"
}

# The static model: what is plugged, in what state; SC_VSIZE is each
# virtio-mem device's requested size so far.
declare -A SC_SIZE=() SC_NODE=() SC_STATE=() SC_LOAD=() SC_VSIZE=()

# virtio-mem devices the machine boots with (QEMU 7.2 cannot hot-add or
# remove them; they grow and shrink through requested-size): M_VMEM lists
# the names in order; per name the node, max (the backend's size), block
# (QEMU's block-size, empty for QEMU's default) and the requested size at
# boot. M_VMEM_TOTAL is the sum of their max sizes, which maxmem covers.
declare -a M_VMEM=()
declare -A M_VMEM_NODE=() M_VMEM_MAX=() M_VMEM_BLOCK=() M_VMEM_REQ=()
M_VMEM_TOTAL=0

# QEMU's block-size default for a memory-backend-ram (the host's THP size).
readonly VMEM_QEMU_BLOCK=$((2 << 20))
# The guest plugs subblocks of max(block-size, pageblock): 2M pageblocks
# with HUGETLB_PAGE, 4M (MAX_ORDER-1) without. Sizes in whole 4M (and
# whole blocks) can be reached by either kernel.
readonly VMEM_GUEST_SB=$((4 << 20))

# vmem_size_check WHAT NAME BYTES: a requested size that both QEMU and the
# guest can reach.
vmem_size_check() {
	local what=$1 name=$2 size=$3 block=${M_VMEM_BLOCK[$2]:-$VMEM_QEMU_BLOCK} gran
	gran=$block
	((gran >= VMEM_GUEST_SB)) || gran=$VMEM_GUEST_SB
	((size <= M_VMEM_MAX[$name])) ||
		sc_die "$what: $(human "$size") is more than $name's max=$(human "${M_VMEM_MAX[$name]}")"
	((size % gran == 0)) ||
		sc_die "$what: $(human "$size") is not a multiple of $(human "$gran") (QEMU's block-size is $(human "$block"); the guest plugs whole subblocks of up to 4M)"
}

# sc_vmem NAME node=N max=SIZE [block=SIZE] [requested=SIZE]: a header line.
sc_vmem() {
	local name=${1:-} kv key val node='' max='' block='' req=0 total
	[[ $name =~ ^[a-z][a-z0-9_-]{0,15}$ ]] ||
		sc_die "virtio-mem: '$name' is not a device name ([a-z][a-z0-9_-], up to 16)"
	[[ -z ${M_VMEM_NODE[$name]:-} ]] || sc_die "virtio-mem $name: declared twice"
	shift
	for kv in "$@"; do
		[[ $kv == *=* ]] || sc_die "virtio-mem $name: '$kv' is not key=value"
		key=${kv%%=*} val=${kv#*=}
		case $key in
		node)
			is_uint "$val" && ((val < ${#M_NODE_MEM[@]})) ||
				sc_die "virtio-mem $name: node $val does not exist (the machine has ${#M_NODE_MEM[@]} nodes, 0 to $((${#M_NODE_MEM[@]} - 1)))"
			node=$val ;;
		max) max=$(size_bytes "$val") || sc_die "virtio-mem $name: max=$val is not a size" ;;
		block) block=$(size_bytes "$val") || sc_die "virtio-mem $name: block=$val is not a size" ;;
		requested) req=$(size_bytes "$val") || sc_die "virtio-mem $name: requested=$val is not a size" ;;
		*) sc_die "virtio-mem $name: unknown key '$key' (node, max, block, requested)" ;;
		esac
	done
	[[ -n $node ]] || sc_die "virtio-mem $name: node=N is required"
	[[ -n $max ]] || sc_die "virtio-mem $name: max=SIZE is required"
	((max > 0 && max % BLOCK_BYTES == 0)) ||
		sc_die "virtio-mem $name: max=$(human "$max") is not a multiple of the guest's memory block size (128M)"
	if [[ -n $block ]]; then
		# QEMU: a power of two (below its 2M default it warns) that
		# divides the backend's size.
		((block >= 1 << 20 && (block & (block - 1)) == 0)) ||
			sc_die "virtio-mem $name: block=$(human "$block") is not a power of two of at least 1M"
		((max % block == 0)) ||
			sc_die "virtio-mem $name: block=$(human "$block") does not divide max=$(human "$max")"
	fi
	# QEMU gives memory devices maxmem minus the boot memory; a virtio-mem
	# device takes its whole max from it, and no DIMM slot.
	total=$((M_BOOT + M_VMEM_TOTAL + max))
	((total <= M_MAXMEM)) ||
		sc_die "virtio-mem $name: boot memory and virtio-mem max sizes come to $(human "$total"), more than maxmem=$(human "$M_MAXMEM")"
	M_VMEM+=("$name")
	M_VMEM_NODE[$name]=$node M_VMEM_MAX[$name]=$max M_VMEM_BLOCK[$name]=$block
	M_VMEM_TOTAL=$((M_VMEM_TOTAL + max))
	vmem_size_check "virtio-mem $name: requested" "$name" "$req"
	M_VMEM_REQ[$name]=$req SC_VSIZE[$name]=$req
}

# Injectors the guest can arm (guest/lib/inject.sh).
readonly SC_INJECTORS="failslab fail_page_alloc fail_function fail_vmemmap notifier"

sc_step() {
	local verb=$1 name=${2:-} xf='' a
	shift
	# A trailing "expect-fail [ERRNO,...]": the operation must fail (with
	# one of the errnos, where given) and leave the model as it was.
	local -a words=()
	while (($#)); do
		if [[ $1 == may-fail ]]; then
			(($# == 1)) || sc_die "$verb: may-fail ends the step"
			[[ $verb == plug || $verb == online ]] || sc_die "$verb takes no may-fail"
			xf=may-fail
			break
		fi
		if [[ $1 == expect-fail ]]; then
			xf=expect-fail
			(($# <= 2)) || sc_die "$verb: expect-fail takes one list of errnos (EBUSY,EINTR)"
			[[ -z ${2:-} || $2 =~ ^E[A-Z0-9]+(,E[A-Z0-9]+)*$ ]] ||
				sc_die "$verb: '$2' is not an errno list like EBUSY,EINTR"
			xf+=${2:+ $2}
			break
		fi
		words+=("$1")
		shift
	done
	set -- "${words[@]}"
	case $verb in
	plug | online | offline | unplug | resize) ;;
	*) [[ -z $xf ]] || sc_die "$verb takes no expect-fail" ;;
	esac
	if [[ $xf == expect-fail* ]]; then
		case $verb in
		plug | unplug) [[ $xf == expect-fail ]] || sc_die "$verb: expect-fail takes no errno (the guest's ACPI handler has none to give)" ;;
		resize) [[ $xf == expect-fail ]] || sc_die "resize: expect-fail takes no errno (the device reports only sizes)" ;;
		esac
	fi
	case $verb in
	plug)
		(($# == 3)) || sc_die "usage: plug NAME SIZE node=N"
		[[ $name =~ ^[a-z][a-z0-9_-]{0,15}$ ]] || sc_die "plug: '$name' is not a device name ([a-z][a-z0-9_-], up to 16)"
		[[ -z ${SC_STATE[$name]:-} ]] || sc_die "plug $name: $name is plugged already"
		[[ -z ${M_VMEM_NODE[$name]:-} ]] || sc_die "plug $name: $name is a virtio-mem device (resize it)"
		local size node plugged=0 total=$((M_BOOT + M_VMEM_TOTAL)) d
		size=$(size_bytes "$2") || sc_die "plug $name: '$2' is not a size"
		((size > 0 && size % BLOCK_BYTES == 0)) ||
			sc_die "plug $name: size $2 is not a multiple of the guest's memory block size (128M)"
		[[ $3 =~ ^node=([0-9]+)$ ]] || sc_die "plug $name: '$3' should be node=N"
		node=${BASH_REMATCH[1]}
		((node < ${#M_NODE_MEM[@]})) ||
			sc_die "plug $name: node $node does not exist (the machine has ${#M_NODE_MEM[@]} nodes, 0 to $((${#M_NODE_MEM[@]} - 1)))"
		for d in "${!SC_STATE[@]}"; do
			plugged=$((plugged + 1)) total=$((total + SC_SIZE[$d]))
		done
		((plugged < M_SLOTS)) || sc_die "plug $name: all $M_SLOTS slots are in use"
		((total + size <= M_MAXMEM)) ||
			sc_die "plug $name: $(human $((total + size))) would exceed maxmem=$(human "$M_MAXMEM")${M_VMEM[0]:+ (virtio-mem max sizes included)}"
		SC_SIZE[$name]=$size SC_NODE[$name]=$node SC_STATE[$name]=offline
		[[ ${SC_AUTO:-offline} == offline ]] || SC_STATE[$name]=online
		[[ $xf == expect-fail ]] && SC_STATE[$name]=absent
		[[ $xf == may-fail ]] && SC_STATE[$name]=unknown
		SC_STEPS+=("plug $name $(human "$size") node=$node${xf:+ $xf}")
		;;
	online)
		(($# == 1 || $# == 2)) || sc_die "usage: online NAME [movable|kernel|auto]"
		[[ -n ${SC_STATE[$name]:-} ]] || sc_die "online $name: $name is not plugged"
		[[ ${SC_STATE[$name]} != absent ]] || sc_die "online $name: $name has no memory blocks (its plug was expected to fail)"
		[[ ${SC_STATE[$name]} != unknown ]] || sc_die "online $name: after may-fail, only unplug knows what to expect"
		[[ ${SC_STATE[$name]} == offline ]] || sc_die "online $name: $name is online already"
		case ${2:-auto} in movable | kernel | auto) ;; *) sc_die "online $name: zone '$2' (movable, kernel, auto)" ;; esac
		[[ -n $xf ]] || SC_STATE[$name]=online
		[[ $xf == may-fail ]] && SC_STATE[$name]=unknown
		SC_STEPS+=("online $name ${2:-auto}${xf:+ $xf}")
		;;
	offline)
		(($# == 1)) || sc_die "usage: offline NAME"
		[[ ${SC_STATE[$name]:-} == online ]] || sc_die "offline $name: $name is not online"
		[[ -n $xf ]] || SC_STATE[$name]=offline
		SC_STEPS+=("offline $name${xf:+ $xf}")
		;;
	unplug)
		(($# == 1)) || sc_die "usage: unplug NAME"
		[[ -n ${SC_STATE[$name]:-} ]] || sc_die "unplug $name: $name is not plugged"
		[[ -n $xf ]] || unset "SC_STATE[$name]" "SC_SIZE[$name]" "SC_NODE[$name]"
		SC_STEPS+=("unplug $name${xf:+ $xf}")
		;;
	resize)
		(($# == 2)) || sc_die "usage: resize NAME SIZE [expect-fail]"
		[[ -n ${M_VMEM_NODE[$name]:-} ]] ||
			sc_die "resize $name: no virtio-mem device $name (declare it in the header: virtio-mem NAME node=N max=SIZE)"
		local vsize
		vsize=$(size_bytes "$2") || sc_die "resize $name: '$2' is not a size"
		vmem_size_check "resize $name" "$name" "$vsize"
		[[ -n $xf ]] || SC_VSIZE[$name]=$vsize
		if ((vsize)); then vsize=$(human "$vsize"); fi
		SC_STEPS+=("resize $name $vsize${xf:+ $xf}")
		;;
	check)
		(($# == 0)) || sc_die "usage: check"
		SC_STEPS+=("check")
		;;
	load)
		[[ $# -ge 3 && $1 =~ ^[a-z][a-z0-9_-]{0,15}$ && $2 =~ ^node=([0-9]+)$ ]] ||
			sc_die "usage: load NAME node=N SIZE [seed=S] [pin=SIZE]"
		((BASH_REMATCH[1] < ${#M_NODE_MEM[@]})) || sc_die "load $1: node ${BASH_REMATCH[1]} does not exist"
		size_bytes "$3" >/dev/null || sc_die "load $1: '$3' is not a size"
		[[ -z ${SC_LOAD[$1]:-} ]] || sc_die "load $1: $1 is loaded already"
		for a in "${@:4}"; do
			[[ $a =~ ^seed=[0-9]+$ ]] || { [[ $a =~ ^pin=([0-9]+[KMG]?)$ ]] && size_bytes "${BASH_REMATCH[1]}" >/dev/null; } ||
				sc_die "load $1: '$a' is not seed=N or pin=SIZE"
		done
		SC_LOAD[$1]=1
		SC_STEPS+=("load $*")
		;;
	verify | release | unload)
		(($# == 1)) || sc_die "usage: $verb NAME"
		[[ -n ${SC_LOAD[$1]:-} ]] || sc_die "$verb $1: no load named $1"
		[[ $verb == unload ]] && unset "SC_LOAD[$1]"
		SC_STEPS+=("$verb $1")
		;;
	random)
		sc_random "$@"
		SC_RANDOM=1
		;;
	inject)
		(($# >= 1)) || sc_die "usage: inject NAME KEY=VALUE..."
		[[ " $SC_INJECTORS " == *" $name "* ]] || sc_die "inject: unknown injector '$name' ($SC_INJECTORS)"
		for a in "${@:2}"; do
			[[ $a =~ ^[A-Za-z_][A-Za-z0-9_-]*=-?[A-Za-z0-9_,+]*$ ]] || sc_die "inject $name: '$a' is not KEY=VALUE"
		done
		SC_STEPS+=("inject $*")
		;;
	clear)
		(($# <= 1)) || sc_die "usage: clear [NAME]"
		[[ -z $name || " $SC_INJECTORS " == *" $name "* ]] || sc_die "clear: unknown injector '$name'"
		SC_STEPS+=("clear ${name:-all}")
		;;
	sweep-nth)
		(($# == 4 || $# == 5)) || sc_die "usage: sweep-nth NAME SIZE node=N KINDS [MAX]"
		sc_step plug "$1" "$2" "$3"
		unset 'SC_STEPS[-1]'
		[[ $4 =~ ^[a-z+,]+$ ]] || sc_die "sweep-nth: '$4' is not a list of fail_vmemmap kinds"
		SC_STEPS+=("sweep-nth $*")
		;;
	auto-online)
		[[ $# == 1 && $1 =~ ^(offline|online|online_kernel|online_movable)$ ]] ||
			sc_die "usage: auto-online offline|online|online_kernel|online_movable"
		SC_AUTO=$1
		SC_STEPS+=("auto-online $1")
		;;
	kselftest)
		[[ $# -le 1 && ${1:-2} =~ ^[0-9]+$ ]] && ((${1:-2} <= 100)) || sc_die "usage: kselftest [PERCENT]"
		SC_STEPS+=("kselftest ${1:-2}")
		# it onlines every offline block; afterwards only unplug applies
		for a in "${!SC_STATE[@]}"; do
			[[ ${SC_STATE[$a]} == absent ]] || SC_STATE[$a]=unknown
		done
		;;
	expect | expect-boot)
		[[ $# == 3 && $1 =~ ^vmemmap\.[a-z_]+$ && $2 =~ ^(=|\>=|\<=)$ && $3 =~ ^[0-9]+$ ]] ||
			sc_die "usage: $verb vmemmap.COUNTER =|>=|<= N"
		SC_STEPS+=("$verb $*")
		;;
	guest-sh)
		(($# >= 1)) || sc_die "usage: guest-sh COMMAND..."
		SC_STEPS+=("guest-sh $*")
		;;
	floor)
		(($# == 2)) || sc_die "usage: floor NAME CYCLES"
		[[ ${SC_STATE[$name]:-} == offline ]] || sc_die "floor $name: $name must be plugged and offline"
		is_uint "$2" && (($2 > 0)) || sc_die "floor $name: '$2' is not a cycle count"
		SC_STEPS+=("floor $name $2")
		;;
	*)
		sc_die "unknown verb '$verb' (see scenarios/README.md)"
		;;
	esac
}

# scenario_load FILE: sets M_* (machine), SC_CMDLINE, SC_NEEDS, SC_TIMEOUT,
# SC_STEPS (expanded), SC_DESC.
scenario_load() {
	SC_FILE=$1 SC_LINENO=0 SC_CMDLINE='' SC_NEEDS=() SC_TIMEOUT=600 SC_STEPS=() SC_DESC=''
	SC_SIZE=() SC_NODE=() SC_STATE=() SC_LOAD=() SC_AUTO= SC_VSIZE=()
	M_VMEM=() M_VMEM_NODE=() M_VMEM_MAX=() M_VMEM_BLOCK=() M_VMEM_REQ=() M_VMEM_TOTAL=0
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
		line=${line%%#*}
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
			shift; sc_vmem "$@" ;;
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
	# A virtio-mem device needs its driver: a kernel without it is a skip.
	if ((${#M_VMEM[@]})); then
		for need in CONFIG_VIRTIO_PCI CONFIG_VIRTIO_MEM; do
			[[ " ${SC_NEEDS[*]} " == *" $need "* ]] || SC_NEEDS+=("$need")
		done
	fi
	# Plugged memory comes up as memhp_default_state says: the rig's
	# cmdline sets offline, the scenario's comes after it and the last one
	# wins (auto-online steps change it later).
	local w
	for w in $SC_CMDLINE; do
		[[ $w == memhp_default_state=* ]] && SC_AUTO=${w#*=}
	done
	sc_expand 0 "${#lines[@]}" 1
	set +f
	((${#SC_STEPS[@]} > 0)) || sc_die "no steps"
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
				is_uint "${2:-}" && ((${2} > 0)) || sc_die "repeat takes a count"
				depth=1 j=$((i + 1))
				while ((j < end)); do
					case ${lines[j]} in
					repeat*) depth=$((depth + 1)) ;;
					end) depth=$((depth - 1)); ((depth == 0)) && break ;;
					esac
					j=$((j + 1))
				done
				((j < end)) || sc_die "repeat without end"
				sc_expand $((i + 1)) "$j" "$2"
				i=$((j + 1))
				continue
				;;
			end) sc_die "end without repeat" ;;
			esac
			sc_step "$@"
			i=$((i + 1))
		done
	done
}
