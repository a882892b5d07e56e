# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The fast tier (make check): tests that need no kernel and no QEMU and run
# in seconds: shellcheck, the triage's golden logs, bad input refused before
# anything is built, the scenario parser against golden step lists, the
# header round trip that shrunk scenarios rely on, the documentation
# against the code, and your own kernel's image, modules and git tree. Sourced by tests/check and tests/run (after
# tests/lib/ktap.sh); needs ROOT, RIG, TS and TMP.

check_lint() {
	local why
	why=$(t_needs shellcheck)
	[[ -z $why ]] || { t_skip "shellcheck is clean" "$why"; return; }
	if make -s -C "$ROOT" lint >"$TMP/lint" 2>&1; then
		t_ok "shellcheck is clean"
	else
		sed 's/^/# /' "$TMP/lint" | head -30
		t_fail "shellcheck is clean"
	fi
}

check_triage_golden() {
	local line seen=0
	if ! "$RIG" tools >"$TMP/tools" 2>&1; then
		sed 's/^/# /' "$TMP/tools"
		t_fail "the triage builds"
		return
	fi
	while IFS= read -r line; do
		case $line in
		"ok "*) t_ok "triage golden: ${line#ok * }"; seen=$((seen + 1)) ;;
		"not ok "*) t_fail "triage golden: ${line#not ok * }"; seen=$((seen + 1)) ;;
		"#"*) echo "$line" ;;
		esac
	done < <("$ROOT/tests/triage/run.sh" "$ROOT/build/tools/triage" 2>&1)
	# a golden suite that ran nothing has failed
	((seen > 0)) || t_fail "triage golden tests ran"
}

# make triage LOG=file prints, for every golden log, the titles and counts
# a run folder keeps: reports.json and the "title:" of each reports/ file,
# made with the options the runner uses (monitor-scripts/run.sh).
check_triage_make() {
	local log bad="" n=0 jobs
	jobs=$(nproc)
	# one log a job, as many at once as the host has CPUs: each is a
	# make, a runner start and two triage runs (seconds in all, in turn)
	for log in "$ROOT"/tests/triage/*.log; do
		n=$((n + 1))
		triage_make_one "$log" "$TMP/mk$n" &
		while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
	done
	wait
	for ((; n > 0; n--)); do
		[[ -e $TMP/mk$n/ok ]] || bad+=" $(cat "$TMP/mk$n/log" 2>/dev/null || echo "#$n")"
	done
	n=$(find "$ROOT"/tests/triage -maxdepth 1 -name '*.log' | wc -l)
	if [[ -z $bad ]] && ((n > 0)); then
		t_ok "make triage prints the titles a run's reports/ holds ($n golden logs)"
	else
		t_fail "make triage prints the titles a run's reports/ holds (differ:$bad)"
	fi
}

# triage_make_one LOG DIR: DIR/ok when make triage's titles for LOG are
# those of reports.json and of the reports/ files.
triage_make_one() {
	local log=$1 d=$2
	rm -rf "$d"
	mkdir -p "$d/reports"
	echo "${log##*/}" >"$d/log"
	make -s -C "$ROOT" triage "LOG=$log" 2>/dev/null | sort >"$d/make" || true
	"$ROOT/build/tools/triage" -r "$d/reports" -j "$d/reports.json" "$log" \
		>/dev/null 2>&1 || true
	jq -r '.reports[] | "\(.count)\t\(.title)"' "$d/reports.json" | sort >"$d/json"
	sed -n 's/^title: //p' "$d/reports"/0*.txt 2>/dev/null | sort >"$d/files"
	cmp -s "$d/make" "$d/json" && cmp -s <(cut -f2- "$d/make") "$d/files" && : >"$d/ok"
	return 0
}

# bad_input DESC PATTERN CMD...: a one-line error naming the problem, exit
# 2, and no run folder (so nothing was booted). Through make, make adds its
# own "Error 2" line.
bad_input() {
	local desc=$1 pattern=$2 before after lines=1 st=0
	shift 2
	[[ $1 == make ]] && lines=2
	mkdir -p "$ROOT/logs"
	before=$(find "$ROOT/logs" -mindepth 1 -maxdepth 1 | wc -l)
	"$@" >"$TMP/out" 2>"$TMP/err" || st=$?
	if ((st == 2)) && [[ $(wc -l <"$TMP/err") == "$lines" ]] &&
		head -1 "$TMP/err" | grep -q -- "$pattern"; then
		after=$(find "$ROOT/logs" -mindepth 1 -maxdepth 1 | wc -l)
		if ((before == after)); then
			t_ok "bad input: $desc"
			return
		fi
		note "a run folder was created"
	fi
	note "status $st, stderr:"
	sed 's/^/#   /' "$TMP/err" | head -5
	t_fail "bad input: $desc"
}

check_bad_input() {
	bad_input "unknown scenario" "unknown scenario 'no-such'" "$RIG" run no-such
	bad_input "DIMM size not a multiple of the block size" "not a multiple of the guest's memory block size" "$RIG" run "$TS/bad-size"
	bad_input "node the machine does not have" "node 2 does not exist" "$RIG" run "$TS/bad-node"
	bad_input "more DIMMs than slots" "all 2 slots are in use" "$RIG" run "$TS/bad-slots"
	bad_input "maxmem exceeded" "would exceed maxmem=2G" "$RIG" run "$TS/bad-maxmem"
	bad_input "unknown verb" "unknown verb 'explode'" "$RIG" run "$TS/bad-verb"
	bad_input "repeat without end" "repeat without end" "$RIG" run "$TS/bad-repeat"
	bad_input "unknown variable" "unknown variable COLOUR" "$RIG" run smoke COLOUR=blue
	bad_input "bad ACCEL" "ACCEL=warp" "$RIG" run smoke ACCEL=warp
	bad_input "missing KERNEL_IMAGE" "no such file" "$RIG" run smoke KERNEL_IMAGE=/nonexistent/bzImage
	bad_input "missing patch" "EXTRA_PATCHES: /nonexistent.patch" "$RIG" run smoke EXTRA_PATCHES=/nonexistent.patch
	bad_input "unknown VARIANT" "VARIANT=flatmem" "$RIG" run smoke VARIANT=flatmem
	bad_input "make passes the error through" "unknown scenario 'nope'" make -s -C "$ROOT" run SCENARIO=nope
	bad_input "a misspelt make variable is named, with a suggestion" "unknown variable SEEED (did you mean SEED?)" \
		make -s -C "$ROOT" run SEEED=5
	bad_input "a patch that writes outside the tree" "outside the kernel tree" "$RIG" run smoke \
		EXTRA_PATCHES="$ROOT/tests/patches/bad-outside-tree.patch"
	bad_input "a size that would wrap" "maxmem=16777217T is not a size" "$RIG" run "$ROOT/tests/parse/bad-wrap.scenario"
	bad_input "SEED beyond 10^15" "SEED=99999999999999999 is not a number" "$RIG" run smoke SEED=99999999999999999
	bad_input "RESTORE other than snapshot or boot" "RESTORE=disk: use snapshot or boot" "$RIG" run smoke RESTORE=disk
	bad_input "COVERAGE_BOOT other than 0 or 1" "COVERAGE_BOOT=yes: use 1" "$RIG" run smoke COVERAGE_BOOT=yes
	# values from make's command line are data: no shell reads them
	rm -f "$TMP/injected"
	bad_input "make: a ; in SCENARIO is part of the name" "unknown scenario 'nosuch;touch" \
		make -s -C "$ROOT" run "SCENARIO=nosuch;touch $TMP/injected"
	bad_input "make: a quote in VARIANT is part of the value" "VARIANT=a'b is not a known" \
		make -s -C "$ROOT" run "VARIANT=a'b"
	bad_input "make: a ; in LOG is part of the file name" "no such file" \
		make -s -C "$ROOT" triage "LOG=x;touch $TMP/injected"
	# make itself must not read them either: a $(...) is kept as typed,
	# neither run by make nor dropped (the trailing x keeps a regression
	# from falling back to smoke and booting)
	bad_input "make: a \$(shell ...) in SCENARIO is part of the name" "unknown scenario '\$(shell touch" \
		make -s -C "$ROOT" run "SCENARIO=\$(shell touch $TMP/injected)x"
	bad_input "make: a \$(...) in SCENARIO is not dropped" "unknown scenario '\$(nothing)x'" \
		make -s -C "$ROOT" run "SCENARIO=\$(nothing)x"
	bad_input "make: a \$(shell ...) in a misspelt variable is not run" "unknown variable SEEED" \
		make -s -C "$ROOT" run "SEEED=\$(shell touch $TMP/injected)"
	bad_input "make: RIG on the command line does not replace the runner" "unknown variable RIG" \
		make -s -C "$ROOT" run "RIG=touch $TMP/injected;"
	if [[ -e $TMP/injected ]]; then
		t_fail "make: no value given to make ran as a shell command"
	else
		t_ok "make: no value given to make ran as a shell command"
	fi
	# the rig's own lines on stderr (errors, the verdict's reasons, which
	# quote guest output) show escapes as '?', as the KTAP does
	bad_input "an escape sequence in an error line is shown as '?'" "unknown scenario '[^']*?\[31mred?\[0m'" \
		"$RIG" run "$TMP/"$'\e[31mred\e[0m'
	# a million-fold repeat is refused before it expands, in well under a second
	local t0 t1
	t0=${EPOCHREALTIME/./}
	bad_input "repeat 1000000000 refused before expanding" "repeat takes a count" "$RIG" run "$ROOT/tests/parse/bad-repeat-huge.scenario"
	t1=${EPOCHREALTIME/./}
	note "refused in $(((t1 - t0) / 1000)) ms"
	# numbers outside scenarios: decimal, bounded, one line (each with a
	# second bad value that a regression stops at, so it never boots)
	bad_input "matrix: SHARD=09/08 is read as decimal" "SHARD=09/08: use i/N" \
		"$ROOT/monitor-scripts/matrix" SHARD=09/08
	bad_input "sweep: SWEEP_SHARD past its count" "SWEEP_SHARD=3/2: use i/N" \
		"$RIG" run smoke SWEEP_SHARD=3/2
	bad_input "merge: no folders named" "merge: name the matrix folders" "$ROOT/monitor-scripts/merge"
	bad_input "merge: a folder that is not a matrix's" "not a matrix folder" "$ROOT/monitor-scripts/merge" "$ROOT/tests"
	bad_input "make sendable: an unknown KERNEL" "KERNEL must be 6.1 or 6.12" make -s -C "$ROOT" sendable KERNEL=5.10
	# the rig's own history is a git history, not the kernel's
	bad_input "sendable: a KERNEL_GIT without the kernel's history" "is not a kernel git history" \
		"$ROOT/monitor-scripts/sendable" KERNEL_GIT="$ROOT"
	: >"$TMP/empty.matrix"
	bad_input "matrix: a PAR past its bound" "PAR=99999999999999999999" \
		"$ROOT/monitor-scripts/matrix" PAR=99999999999999999999 MATRIX="$TMP/empty.matrix"
	bad_input "soak: a CHECKPOINT past its bound" "CHECKPOINT=99999999999999999999" \
		"$RIG" soak smoke DURATION=1s CHECKPOINT=99999999999999999999 SEED=x
	# decimal everywhere: 010 is ten, 08 is eight
	if [[ $("$RIG" steps random SEED=010 2>&1) == "$("$RIG" steps random SEED=10 2>&1)" ]] &&
		"$RIG" steps smoke SEED=08 >/dev/null 2>&1; then
		t_ok "SEED=010 is 10 and SEED=08 is 8 (decimal, not octal)"
	else
		t_fail "SEED=010 is 10 and SEED=08 is 8 (decimal, not octal)"
	fi
}

# Patches (EXTRA_PATCHES): every path a patch names, whatever its prefixes
# and in git's rename lines too, stays inside the tree, checked before
# anything is built; and a patch with other prefixes than a/ and b/ applies
# (kbuild.sh's apply_patches on a tree of one file).
check_patches() {
	local p pt=$TMP/patches
	for p in bad-outside-prefix bad-rename-outside bad-absolute; do
		# FIXES=7 is checked right after the patches: a regression stops
		# there instead of building
		bad_input "a patch that writes outside the tree: $p" "outside the kernel tree" \
			"$RIG" run smoke EXTRA_PATCHES="$ROOT/tests/patches/$p.patch" FIXES=7
	done
	mkdir -p "$pt/pristine/mm" "$pt/tree/mm"
	printf 'a\nb\nc\n' | tee "$pt/pristine/mm/x.c" >"$pt/tree/mm/x.c"
	printf -- '--- orig/mm/x.c\n+++ new/mm/x.c\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n' >"$pt/p.patch"
	# shellcheck disable=SC2016 # the script is for the inner bash
	if RIG_ROOT=$ROOT RIG_BUILD=$pt/build bash -c '. "$RIG_ROOT/monitor-scripts/lib.sh" &&
		. "$RIG_ROOT/monitor-scripts/kbuild.sh" && apply_patches "$@"' apply \
		"$pt/tree" "$pt/pristine" "$pt/state" "$pt/p.patch" >"$pt/out" 2>&1 &&
		[[ $(cat "$pt/tree/mm/x.c") == $'a\nB\nc' ]]; then
		t_ok "a patch with orig/ and new/ prefixes applies"
	else
		sed 's/^/# /' "$pt/out" | head -5
		t_fail "a patch with orig/ and new/ prefixes applies"
	fi
}

# A comma in a path (a scenario named one,cycle, a TMPDIR with one) reaches
# QEMU's option parser: the path= QEMU reads from each -chardev of the
# command line (qemu.sh's qemu_cmdline) is the path the rig meant.
check_qemu_commas() {
	local dir=$TMP/run,one,,cycle sock=$TMP/rig,sock out bad='' opt
	# shellcheck disable=SC2016 # the script is for the inner bash
	out=$(RIG_ROOT=$ROOT RUN_DIR=$dir RIG_SOCK=$sock bash -c '. "$RIG_ROOT/monitor-scripts/lib.sh" &&
		. "$RIG_ROOT/monitor-scripts/qemu.sh" &&
		M_NODE_MEM=($((512 << 20)) $((512 << 20))) M_CPUS=2 M_SLOTS=2 M_MAXMEM=$((2 << 30)) M_CPU=qemu64 &&
		qemu_cmdline tcg bzImage initrd console=ttyS0 && printf "%s\n" "${QEMU_CMD[@]}"' 2>&1)
	while IFS= read -r opt; do
		# as QEMU splits it: at single commas, ",," being one comma
		opt=${opt//,,/$'\1'}
		opt=,$opt,
		opt=${opt#*,path=}
		opt=${opt%%,*}
		opt=${opt//$'\1'/,}
		[[ $opt == "$dir/console.log" || $opt == "$sock/agent.sock" || $opt == "$sock/qmp.sock" ]] ||
			bad+=" $opt"
	done < <(grep -- 'path=' <<<"$out")
	if [[ -z $bad && $(grep -c -- 'path=' <<<"$out") == 3 ]]; then
		t_ok "QEMU reads the paths the rig gave, commas and all"
	else
		note "QEMU would read:${bad:- (no paths) $out}"
		t_fail "QEMU reads the paths the rig gave, commas and all"
	fi
}

# A scenario file against the step list (or the one error line) it parses
# to, with SEED=9: tests/parse/NAME.scenario and NAME.expected.
check_parse_goldens() {
	local f want n=0
	for f in "$ROOT"/tests/parse/*.scenario; do
		want=${f%.scenario}.expected
		n=$((n + 1))
		(cd "$ROOT" && "$RIG" steps "tests/parse/${f##*/}" SEED=9 2>&1) | sed "s#$ROOT/##g" >"$TMP/steps"
		if cmp -s "$TMP/steps" "$want"; then
			t_ok "parse golden: ${f##*/}"
		else
			diff "$want" "$TMP/steps" | head -8 | sed 's/^/# /'
			t_fail "parse golden: ${f##*/}"
		fi
	done
	((n > 0)) || t_fail "parse goldens ran"
}

# Every library scenario, written back as a shrunk scenario is (its header
# printed by the parser, then its steps), parses to the same machine and
# steps: a shrunk run replays on the machine that failed.
check_roundtrip() {
	local f bad=''
	for f in "$ROOT"/scenarios/*; do
		[[ $f == */README.md ]] && continue
		"$RIG" steps "$f" SEED=9 >"$TMP/a" 2>&1 || { bad+=" ${f##*/}(parse)"; continue; }
		cp "$TMP/a" "$TMP/rt.scenario"
		"$RIG" steps "$TMP/rt.scenario" SEED=9 >"$TMP/b" 2>&1
		cmp -s "$TMP/a" "$TMP/b" || { bad+=" ${f##*/}"; diff "$TMP/a" "$TMP/b" | head -4 | sed 's/^/# /'; }
	done
	if [[ -z $bad ]]; then
		t_ok "header round trip: every library scenario's machine survives being written back"
	else
		t_fail "header round trip: every library scenario's machine survives being written back:$bad"
	fi
}

# The documentation against the code: scenarios/README.md's step table has
# a row for every verb of the table (rig verbs) and no other; its library
# table names every scenario; make help names every target and variable.
check_docs() {
	local doc=$ROOT/scenarios/README.md v missing='' extra='' f
	local -A known=()
	while IFS=$'\t' read -r v _; do
		known[$v]=1
		grep -qE "^\| \`$v( |\`)|, \`$v( |\`)" "$doc" || missing+=" $v"
	done < <("$RIG" verbs)
	# the first word of each backquoted step in the step table's first column
	while read -r v; do
		[[ -z $v || -n ${known[$v]:-} || $v == repeat || $v == end ]] || extra+=" $v"
	done < <(sed -n '/^## Steps/,/^## /p' "$doc" | grep '^| `' | cut -d'|' -f2 |
		grep -o '`[a-z-]*' | tr -d '`' | sort -u)
	if [[ -z $missing$extra ]]; then
		t_ok "scenarios/README.md documents every verb of the table, and no other"
	else
		t_fail "scenarios/README.md documents every verb of the table, and no other (undocumented:${missing:- none}; unknown:${extra:- none})"
	fi
	missing=''
	for f in "$ROOT"/scenarios/*; do
		f=${f##*/}
		[[ $f == README.md ]] && continue
		grep -qE "\`$f\`" <(sed -n '/^## The library/,$p' "$doc") || missing+=" $f"
	done
	if [[ -z $missing ]]; then
		t_ok "scenarios/README.md's library table names every scenario"
	else
		t_fail "scenarios/README.md's library table names every scenario (missing:$missing)"
	fi
	local st=0
	make -s -C "$ROOT" help >"$TMP/help" 2>&1 || st=$?
	missing=''
	((st == 0)) || missing+=" (make help exits $st: $(tail -2 "$TMP/help" | tr '\n' ' '))"
	for v in $(sed -n 's/^\.PHONY: //p' "$ROOT/Makefile" | tr " " "\n"); do
		grep -qw -- "$v" "$TMP/help" || missing+=" $v"
	done
	for v in $("$RIG" vars) $("$RIG" vars make); do
		grep -q -- "$v=" "$TMP/help" || missing+=" $v"
	done
	if [[ -z $missing ]]; then
		t_ok "make help names every target and run variable"
	else
		t_fail "make help names every target and run variable (missing:$missing)"
	fi
}

# shellcheck source=tests/coverage.sh
. "$ROOT/tests/coverage.sh"
# shellcheck source=tests/own-kernel.sh
. "$ROOT/tests/own-kernel.sh"
# shellcheck source=tests/chan.sh
. "$ROOT/tests/chan.sh"
# shellcheck source=monitor-scripts/observe.sh
. "$ROOT/monitor-scripts/observe.sh"
# shellcheck source=tests/observe.sh
. "$ROOT/tests/observe.sh"

# make deps installs (or names) the source package of the KERNEL asked for:
# with a dpkg-query that has every package but linux-source-6.12 and an
# apt-get that only prints, KERNEL=6.12 asks for that one and 6.1 for none.
check_deps() {
	local shim=$TMP/deps-shim out
	mkdir -p "$shim"
	# shellcheck disable=SC2016 # $3 is the shim's own argument
	printf '#!/bin/sh\n[ "$3" = linux-source-6.12 ] && exit 1\necho installed\n' >"$shim/dpkg-query"
	printf '#!/bin/sh\necho "apt-get $*"\n' >"$shim/apt-get"
	chmod +x "$shim/dpkg-query" "$shim/apt-get"
	# as root the rig installs (the shim prints), otherwise it names the line
	out=$(PATH=$shim:$PATH make -s -C "$ROOT" deps KERNEL=6.12 2>&1) || true
	if grep -q -- '--no-install-recommends linux-source-6.12$' <<<"$out" &&
		[[ -z $(PATH=$shim:$PATH make -s -C "$ROOT" deps KERNEL=6.1 2>&1) ]]; then
		t_ok "make deps KERNEL=6.12 asks for linux-source-6.12"
	else
		printf '# %s\n' "${out:0:400}"
		t_fail "make deps KERNEL=6.12 asks for linux-source-6.12"
	fi
}

check_tier() {
	check_lint
	check_triage_golden
	check_triage_make
	check_bad_input
	check_patches
	check_deps
	check_qemu_commas
	check_parse_goldens
	check_roundtrip
	check_docs
	check_coverage
	check_own_kernel
	check_chan
	check_chan_torn
	check_observe
}
