# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Kernel coverage of the hotplug code (VARIANT=coverage, gcov): the run
# zeroes the guest's counters after boot and brings its .gcda files back
# through the agent (base64, stored as bytes); lcov turns them into a
# report; `make coverage` merges several runs. Needs lcov. Sourced by rig.

# The files whose objects the coverage variant profiles (coverage.patch).
readonly COVERAGE_FILES="mm/memory_hotplug.c mm/sparse.c mm/sparse-vmemmap.c
mm/page_isolation.c arch/x86/mm/init_64.c drivers/base/memory.c
drivers/acpi/acpi_memhotplug.c drivers/virtio/virtio_mem.c mm/fail_vmemmap.c
mm/fail_hotplug.c mm/vmemmap_debug.c"
# arch/x86/mm/init_64.c is mostly boot code: these are its functions that a
# hot-add or hot-remove runs (direct map, vmemmap, page-table teardown).
readonly COVERAGE_X86_FUNCS="phys_pte_init phys_pmd_init phys_pud_init
phys_p4d_init __kernel_physical_mapping_init kernel_physical_mapping_init
vmemmap_flush_unused_pmd vmemmap_pmd_is_unused __vmemmap_use_sub_pmd
vmemmap_use_sub_pmd vmemmap_use_new_sub_pmd update_end_of_memory_vars
add_pages arch_add_memory free_pagetable free_hugepage_table free_pte_table
free_pmd_table free_pud_table remove_pte_table remove_pmd_table
remove_pud_table remove_p4d_table remove_pagetable vmemmap_free
kernel_physical_mapping_remove arch_remove_memory vmemmap_populate_hugepages
vmemmap_populate"
readonly GCOV_GUEST_DIR=/sys/kernel/debug/gcov
LCOV_RC=(--rc lcov_branch_coverage=1)

coverage_kernel() {
	[[ -n ${KCONFIG:-} ]] && grep -qx 'CONFIG_GCOV_KERNEL=y' "$KCONFIG"
}

# coverage_save_sources TREE IMGDIR: with a gcov kernel, the profiled files
# as this build compiled them, in IMGDIR/src. The tree is shared and patched
# in place by whichever build runs next (FIXES=1, another variant), and the
# report's source text (error blocks, HTML) must be the image's own, not
# whatever the tree holds by the time a run collects.
coverage_save_sources() {
	local tree=$1 img=$2 f
	grep -qx 'CONFIG_GCOV_KERNEL=y' "$img/config" || return 0
	rm -rf "$img/src"
	for f in $COVERAGE_FILES; do
		[[ -f $tree/$f ]] || continue
		mkdir -p "$img/src/${f%/*}"
		cp "$tree/$f" "$img/src/$f"
	done
}

# coverage_src: the source text of the running image (its saved copy), or
# the tree for an image built before copies were saved.
coverage_src() {
	local img=${KIMAGE%/*}
	if [[ -d $img/src ]]; then echo "$img/src"; else realpath "$KTREE"; fi
}

# coverage_run_start: called once the guest answers. Each run boots its
# own kernel, whose counters start at zero, so the boot is part of what the
# run measures (the boot-time injection scenarios reach nothing else); with
# COVERAGE_BOOT=0 the counters are zeroed here, so that only the scenario's
# steps count. After a restart they are always zeroed: a snapshot's
# counters were already fetched with the boot they came from. 1 with
# COVERAGE_ERROR when the rig could not.
coverage_run_start() {
	((${COVERAGE_RESTARTED:-0})) || COVERAGE_ARMED=0
	coverage_kernel || return 0
	if ((${COVERAGE_RESTARTED:-0} || ! ${COVERAGE_BOOT:-1})) && ! agent_call gcov-reset; then
		COVERAGE_ERROR="coverage: cannot reset the guest's gcov counters: ${AGENT_OUT[*]}"
		return 1
	fi
	COVERAGE_ARMED=1
	((${COVERAGE_RESTARTED:-0})) && return 0
	if ((${COVERAGE_BOOT:-1})); then
		ktap "# coverage: gcov counting from boot; collected into coverage/ at the end"
	else
		ktap "# coverage: gcov counters reset once the guest answered; collected into coverage/ at the end"
	fi
}

coverage_error() {
	[[ -n ${COVERAGE_ERROR:-} ]] || COVERAGE_ERROR=$1
}

# coverage_fetch DEST: the guest's .gcda files into DEST (under the build
# path the kernel records), the .gcno files from the host build beside
# them; COVERAGE_N the count. 1 with COVERAGE_ERROR (the first problem)
# when something was not collected.
coverage_fetch() {
	local dest=$1 path rel build
	local -a files
	COVERAGE_N=0
	# the kernel records the build folder's real path (make runs in it):
	# through a symlinked build/ it differs from RIG_BUILD's spelling
	build=$(realpath "$RIG_BUILD")
	mkdir -p "$dest"
	if ! agent_call gcov-list; then
		coverage_error "coverage: cannot list the guest's gcov files: ${AGENT_OUT[*]}"
		return 1
	fi
	files=("${AGENT_OUT[@]}")
	for path in "${files[@]}"; do
		# a path the kernel made from our own build folder, nothing else
		if [[ ! $path =~ ^$GCOV_GUEST_DIR(/[A-Za-z0-9_.+-]+)+\.gcda$ || $path == */../* ||
			${path#"$GCOV_GUEST_DIR"} != "$build"/* ]]; then
			coverage_error "coverage: the guest lists an unexpected gcov file, not collected: ${path:0:200}"
			continue
		fi
		rel=${path#"$GCOV_GUEST_DIR"}
		if ! AGENT_KEEP=1000000 agent_call -t 120000 gcov-read "$path"; then
			coverage_error "coverage: cannot read $path from the guest"
			continue
		fi
		mkdir -p "$dest${rel%/*}"
		if ! printf '%s\n' "${AGENT_OUT[@]}" | base64 -d >"$dest$rel" 2>/dev/null; then
			coverage_error "coverage: $path came back garbled (not base64)"
			continue
		fi
		# the notes of the very objects the guest runs: a later build
		# may overwrite them in the build folder
		[[ -f ${rel%.gcda}.gcno ]] && cp "${rel%.gcda}.gcno" "$dest${rel%.gcda}.gcno"
		COVERAGE_N=$((COVERAGE_N + 1))
	done
	[[ -z $COVERAGE_ERROR ]]
}

# coverage_run_restart: a run about to restart its guest (run_restart)
# keeps what the old boot counted: fetched into coverage/boot-N/gcda while
# the guest still answers, else counted as lost (a hung guest cannot send
# its counters). Then COVERAGE_RESTARTED tells coverage_run_start to zero
# the new boot's counters. Never fails the run: a problem is kept for the
# final collect to report.
coverage_run_restart() {
	((${COVERAGE_ARMED:-0})) || return 0
	COVERAGE_RESTARTED=1
	local dir=$RUN_DIR/coverage
	if qemu_alive && ((${GUEST_HUNG:-0} == 0)) && [[ -n ${CHAN_W[agent]:-} ]]; then
		local err=${COVERAGE_ERROR:-}
		COVERAGE_ERROR=''
		if coverage_fetch "$dir/boot-$RUN_BOOTS/gcda"; then
			COVERAGE_SAVED=$((${COVERAGE_SAVED:-0} + 1))
			COVERAGE_ERROR=$err
			return 0
		fi
		COVERAGE_KEPT_ERROR=${err:-$COVERAGE_ERROR}
		COVERAGE_ERROR=$err
	fi
	rm -rf "$dir/boot-$RUN_BOOTS"
	COVERAGE_LOST=$((${COVERAGE_LOST:-0} + 1))
}

# coverage_run_collect: the last boot's counters into RUN_DIR/coverage/gcda,
# then the report over every boot of the run (restarts included). Called
# while the guest still answers; 1 with COVERAGE_ERROR when something was
# not collected.
coverage_run_collect() {
	COVERAGE_ERROR=${COVERAGE_KEPT_ERROR:-}
	((${COVERAGE_ARMED:-0})) || return 0
	local dir=$RUN_DIR/coverage
	coverage_fetch "$dir/gcda"
	realpath "$KTREE" >"$dir/tree"
	coverage_src >"$dir/src"
	[[ $(cat "$dir/src") != "$(cat "$dir/tree")" ]] ||
		ktap "# coverage: source text read from the shared tree (the image predates its saved copy: rebuild it if other patches were applied since)"
	ktap "# coverage: $COVERAGE_N gcov data files collected"
	if ((${COVERAGE_SAVED:-0} + ${COVERAGE_LOST:-0})); then
		ktap "# coverage: $((${COVERAGE_SAVED:-0} + 1)) boots merged, ${COVERAGE_LOST:-0} lost (the guest was hung at its restart)"
	fi
	if ! coverage_report "$dir" >"$dir/summary.txt" 2>"$dir/lcov.log"; then
		coverage_error "coverage: lcov could not make the report (see coverage/lcov.log)"
		return 1
	fi
	local line
	while IFS= read -r line; do ktap "# $line"; done <"$dir/summary.txt"
	ktap "# coverage: report ${dir#"$RIG_ROOT"/}/index.html"
	[[ -z $COVERAGE_ERROR ]]
}

# coverage_info GCDA_DIR TREE OUT SRC: the tracefile of the listed files,
# its source paths moved from TREE (where the build read them) to SRC
# (where their text is kept).
coverage_info() {
	local gcda=$1 tree=$2 out=$3 src=$4 f
	local -a pats=()
	for f in $COVERAGE_FILES; do pats+=("$tree/$f"); done
	geninfo -q "${LCOV_RC[@]}" --no-external -b "$tree" -o "$out.all" "$gcda" &&
		lcov -q "${LCOV_RC[@]}" -e "$out.all" "${pats[@]}" -o "$out" &&
		rm -f "$out.all" || return 1
	# literal prefixes (a path may hold regex or sed characters)
	[[ $src == "$tree" ]] || awk -v t="SF:$tree/" -v s="SF:$src/" \
		'index($0, t) == 1 { $0 = s substr($0, length(t) + 1) } { print }' "$out" >"$out.src" &&
		mv "$out.src" "$out"
}

# coverage_report DIR: DIR/gcda (and DIR/tree) into DIR/coverage.info,
# DIR/index.html and the summary on stdout.
coverage_report() {
	local dir=$1 tree src
	tree=$(cat "$dir/tree")
	src=$(cat "$dir/src" 2>/dev/null || echo "$tree")
	coverage_info "$dir/gcda" "$tree" "$dir/coverage.info" "$src" || return 1
	# the boots before restarts, each its own tracefile, added in
	local b
	for b in "$dir"/boot-*/gcda; do
		[[ -d $b ]] || continue
		coverage_info "$b" "$tree" "${b%/gcda}/coverage.info" "$src" &&
			lcov -q "${LCOV_RC[@]}" -a "$dir/coverage.info" -a "${b%/gcda}/coverage.info" \
				-o "$dir/coverage.info.sum" && mv "$dir/coverage.info.sum" "$dir/coverage.info" || return 1
	done
	coverage_html "$dir/coverage.info" "$src" "$dir" || return 1
	coverage_error_blocks "$dir/coverage.info" "$src" >"$dir/error-blocks.tsv"
	coverage_summary "$dir/coverage.info" "$src" "$dir/error-blocks.tsv"
}

coverage_html() {
	genhtml -q "${LCOV_RC[@]}" --prefix "$2" -t "hotplug-rig" -o "$3" "$1" >/dev/null
}

# coverage_summary INFO TREE BLOCKS: one line per listed file (the form
# tools read), the error blocks, init_64.c's hotplug functions.
coverage_summary() {
	local info=$1 tree=$2 blocks=$3
	# shellcheck disable=SC2086 # the lists are words
	awk -v root="$tree/" -v files="$(echo $COVERAGE_FILES)" \
		-v x86="$(echo $COVERAGE_X86_FUNCS)" '
	function pct(h, t) { return t ? sprintf("%.1f%%", 100 * h / t) : "0.0%" }
	/^SF:/ { f = substr($0, 4); if (index(f, root) == 1) f = substr(f, length(root) + 1); next }
	/^LF:/ { lf[f] = substr($0, 4); next } /^LH:/ { lh[f] = substr($0, 4); next }
	/^FNF:/ { fnf[f] = substr($0, 5); next } /^FNH:/ { fnh[f] = substr($0, 5); next }
	/^BRF:/ { brf[f] = substr($0, 5); next } /^BRH:/ { brh[f] = substr($0, 5); next }
	/^FN:/ { s = substr($0, 4); i = index(s, ",")
		if (f == "arch/x86/mm/init_64.c") { n++; fl[n] = s; fs[n] = substr(s, 1, i - 1) + 0; fnm[n] = substr(s, i + 1) }
		next }
	/^FNDA:/ { s = substr($0, 6); i = index(s, ","); if (f == "arch/x86/mm/init_64.c") fcall[substr(s, i + 1)] = substr(s, 1, i - 1) + 0; next }
	/^DA:/ { if (f == "arch/x86/mm/init_64.c") { split(substr($0, 4), a, ","); da[a[1] + 0] = a[2] + 0 } next }
	END {
		nf = split(files, fv, " ")
		for (i = 1; i <= nf; i++) {
			g = fv[i]
			if (!(g in lf)) continue
			printf "coverage: %s lines %s (%d/%d) functions %s branches %s\n", g,
				pct(lh[g], lf[g]), lh[g], lf[g], pct(fnh[g], fnf[g]), pct(brh[g], brf[g])
		}
		# a function spans from its first line to the next function
		for (i = 1; i <= n; i++) { e = 1e9; for (j = 1; j <= n; j++) if (fs[j] > fs[i] && fs[j] < e) e = fs[j]; fe[i] = e }
		nx = split(x86, xv, " "); tl = th = tf = tfh = 0
		for (k = 1; k <= nx; k++) for (i = 1; i <= n; i++) if (fnm[i] == xv[k]) {
			t = h = 0
			for (l in da) if (l + 0 >= fs[i] && l + 0 < fe[i]) { t++; if (da[l] > 0) h++ }
			printf "coverage: arch/x86/mm/init_64.c:%s lines %s (%d/%d) calls %d\n", xv[k], pct(h, t), h, t, fcall[xv[k]]
			tl += t; th += h; tf++; if (fcall[xv[k]] > 0) tfh++
		}
		if (tf) printf "coverage: arch/x86/mm/init_64.c hotplug functions lines %s (%d/%d) functions %s (%d/%d)\n", pct(th, tl), th, tl, pct(tfh, tf), tfh, tf
	}' "$info"
	awk -F'\t' '{ t++; if ($4 > 0) r++ } END { printf "coverage: error-blocks reached %d/%d\n", r, t }' "$blocks"
}

# coverage_error_blocks INFO TREE: every error block of the listed files as
# "file<TAB>line<TAB>function<TAB>count". An error block is the body of an
# `if` whose last statement fails out: `return` of -E..., -N, ERR_PTR() or
# a variable named ret/rc/err/error, `return NULL` after a test of a
# pointer alone (`if (!p)`: a failed allocation), or a `goto` to a label naming
# err/fail, or any goto after the body set a negative errno. It is
# counted when gcov has a line inside the body (its count: the largest line
# count there) or, failing that, branches on the lines of the condition (a
# body on the line of its `if`, or one whose line gcc merged away): then it
# was reached when every branch of those lines was taken, a lower bound.
# Blocks with neither (compiled out) are not counted.
coverage_error_blocks() {
	local info=$1 tree=$2 f
	for f in $COVERAGE_FILES; do
		[[ -f $tree/$f ]] || continue
		grep -qxF "SF:$tree/$f" "$info" || continue
		awk -v want="$tree/$f" -v name="$f" "$COVERAGE_BLOCKS_AWK" "$info" "$tree/$f"
	done
}

# shellcheck disable=SC2016 # awk program, not shell
COVERAGE_BLOCKS_AWK='
FNR == NR {
	if ($0 ~ /^SF:/) { cur = (substr($0, 4) == want); next }
	if (!cur) next
	if ($0 ~ /^DA:/) { split(substr($0, 4), a, ","); l = a[1] + 0; isda[l] = 1; if (a[2] + 0 > da[l]) da[l] = a[2] + 0 }
	else if ($0 ~ /^BRDA:/) { split(substr($0, 6), a, ","); l = a[1] + 0; nbr[l]++; if (a[4] != "-" && a[4] + 0 > 0) ntk[l]++ }
	else if ($0 ~ /^FN:/) { s = substr($0, 4); i = index(s, ","); nfn++; fnl[nfn] = substr(s, 1, i - 1) + 0; fnn[nfn] = substr(s, i + 1) }
	next
}
{ src[FNR] = $0; nl = FNR }
# strip: comments, string and char literals, preprocessor lines
function clean(   l, s, o, c, i, incom, pp) {
	incom = 0; pp = 0
	for (l = 1; l <= nl; l++) {
		s = src[l]; o = ""
		if (!incom && (pp || s ~ /^[ \t]*#/)) { pp = (s ~ /\\$/); cl[l] = ""; continue }
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (incom) { if (c == "*" && substr(s, i + 1, 1) == "/") { incom = 0; i++ } o = o " "; continue }
			if (c == "/" && substr(s, i + 1, 1) == "*") { incom = 1; i++; o = o "  "; continue }
			if (c == "/" && substr(s, i + 1, 1) == "/") break
			if (c == "\"" || c == "\047") {
				q = c; o = o " "
				for (i++; i <= length(s); i++) { c = substr(s, i, 1); if (c == "\\") { i++; o = o "  "; continue } o = o " "; if (c == q) break }
				continue
			}
			o = o c
		}
		cl[l] = o
	}
}
# scan from (L, C) for the char that closes OP with CP (or for ";"
# when OP is ""); sets EL, EC; collects the text in BODY
function scan(l, c, op, cp,   d, s, ch) {
	d = 0; body = ""
	for (; l <= nl; l++) {
		s = cl[l]
		for (; c <= length(s); c++) {
			ch = substr(s, c, 1); body = body ch
			if (op == "") {
				if (ch == "(" || ch == "{") d++
				else if (ch == ")" || ch == "}") d--
				else if (ch == ";" && d == 0) { EL = l; EC = c; return 1 }
			} else if (ch == op) d++
			else if (ch == cp) { d--; if (d == 0) { EL = l; EC = c; return 1 } }
		}
		body = body " "; c = 1
	}
	return 0
}
function fails(b, cond,   last, n, parts) {
	# the last statement of the body
	sub(/[ \t}]*$/, "", b); sub(/;[ \t]*$/, "", b)
	n = split(b, parts, /[;{}]/); last = parts[n]
	gsub(/^[ \t]+|[ \t]+$/, "", last)
	if (last ~ /^return[ \t(]*(-[ \t]*E[A-Z0-9]+|-[0-9]+|ERR_PTR|(ret|rc|err|error)[ \t)]*$)/) return 1
	# NULL is a failure after a failed allocation, not after a lookup
	gsub(/^\([ \t]*|[ \t]*\)$/, "", cond)
	if (last ~ /^return[ \t(]*NULL/ && cond ~ /^!?[ \t]*(unlikely\(!?)?[A-Za-z_][A-Za-z0-9_.>-]*\)?$/) return 1
	if (last ~ /^goto[ \t]+[A-Za-z0-9_]*(err|fail)/) return 1
	if (last ~ /^goto[ \t]/ && b ~ /=[ \t]*-[ \t]*E[A-Z0-9]+/) return 1
	return 0
}
function fname(l,   i, best, bl) {
	best = "?"; bl = 0
	for (i = 1; i <= nfn; i++) if (fnl[i] <= l && fnl[i] > bl) { bl = fnl[i]; best = fnn[i] }
	return best
}
END {
	clean()
	for (l = 1; l <= nl; l++) {
		s = cl[l]; off = 0
		while (match(substr(s, off + 1), /(^|[^A-Za-z0-9_])if[ \t]*\(/)) {
			c = off + RSTART + RLENGTH - 1   # the "("
			off = c
			if (!scan(l, c, "(", ")")) break
			cond = body
			cl_ = EL; cc = EC
			# the first char of the body
			bl = cl_; bc = cc + 1
			while (bl <= nl) {
				rest = substr(cl[bl], bc)
				if (match(rest, /[^ \t]/)) { bc = bc + RSTART - 1; break }
				bl++; bc = 1
			}
			if (bl > nl) break
			braced = (substr(cl[bl], bc, 1) == "{")
			if (braced) scan(bl, bc, "{", "}"); else scan(bl, bc, "", "")
			if (!fails(body, cond)) continue
			from = bl; to = EL
			if (braced && substr(cl[bl], bc + 1) !~ /[^ \t]/) from = bl + 1
			cnt = -1
			if (from > cl_)
				for (k = from; k <= to; k++) if (k in isda) { if (cnt < 0) cnt = 0; if (da[k] > cnt) cnt = da[k] }
			if (cnt < 0) {
				# no line of its own: the branches of the condition
				nb = nt = 0; top = 0
				for (k = l; k <= cl_; k++) { nb += nbr[k]; nt += ntk[k]; if (da[k] > top) top = da[k] }
				if (nb == 0) continue
				cnt = (nt == nb) ? top : 0
			}
			printf "%s\t%d\t%s\t%d\n", name, from, fname(from), cnt
		}
	}
}
'

# --- make coverage: several runs merged ------------------------------------------
# The standard library: the scenarios make test runs on the default kernel.
readonly COVERAGE_LIBRARY="smoke multi-node zones-and-policies virtio-mem
migrate-verify pinned notifier-errors
kselftest pmd-fallback populate-fails fail-nth fail-function
pgtable-alloc-fails altmap boot-fallback leak-check
online-policy sysfs-errors cpuless-node virtio-mem-bbm plug-unaligned
virtio-mem-bbm-rollback hugetlb-dissolve-fails block-spans-nodes"

# coverage_make: SCENARIOS (default the library) and, with SWEEP=1 or
# SWEEP=FIRST-LAST, make sweep's scenarios (tests/matrix/sweep: all their
# cases, or those of each sweep), each run on the coverage variant; their
# tracefiles merged into logs/coverage-<time>/.
coverage_make() {
	local -a scs args=()
	local sc sweep=${SWEEP:-0} out i=0 par=${PAR:-1}
	read -ra scs <<<"${SCENARIOS:-$(echo $COVERAGE_LIBRARY)}"
	((${#scs[@]})) || die "make coverage: SCENARIOS is empty"
	for sc in "${scs[@]}"; do scenario_path "$sc" >/dev/null; done
	[[ $sweep =~ ^(0|1|[1-9][0-9]*-[1-9][0-9]*)$ ]] ||
		die "SWEEP=$sweep: use 0, 1 (every sweep, all cases) or FIRST-LAST (those cases of each)"
	[[ $par =~ ^[1-9][0-9]{0,2}$ ]] || die "PAR=$par: a number of runs at once (1 to 999)"
	[[ -z ${VARIANT:-} || $VARIANT == coverage ]] ||
		die "make coverage runs VARIANT=coverage (VARIANT=$VARIANT given)"
	local v
	for v in "${MAKE_ARGV[@]}"; do [[ $v == VARIANT=* ]] || args+=("$v"); done
	parse_vars "${args[@]}" VARIANT=coverage
	ensure_packages
	out=$RIG_LOGS/coverage-$(date +%Y%m%d-%H%M%S)
	mkdir -p "$out/runs" || die "cannot make $out"
	if [[ $sweep != 0 ]]; then
		local sw name
		while read -r name _; do
			[[ -n $name && $name != \#* ]] || continue
			sw=$RIG_ROOT/scenarios/$name
			if [[ $sweep != 1 ]]; then
				sw=$out/$name-$sweep
				# the range goes after a sweep's own words (plug has four)
				awk -v r="$sweep" '$1 == "sweep" {
					n = split("plug 5 unplug 3 online 4 offline 3 resize 4", a, " ")
					for (i = 1; i < n; i += 2) if ($2 == a[i] && NF == a[i + 1]) $0 = $0 " " r
				} { print }' "$RIG_ROOT/scenarios/$name" >"$sw"
				grep -q "^sweep .* $sweep\$" "$sw" || die "cannot give $name the case range $sweep"
			fi
			scs+=("$sw")
		done <"$RIG_ROOT/tests/matrix/sweep"
	fi
	# the kernel once, before the runs (its build is the long part)
	kernel_build
	# PAR runs at once, the longest (the sweeps, listed last) first
	local n=${#scs[@]} k
	# the runs learn how many guests share the host (qemu_rcu_params)
	export RIG_GUESTS=$((par < n ? par : n))
	: >"$out/runs.tsv"
	for ((k = n - 1; k >= 0; k--)); do
		sc=${scs[k]}
		i=$((i + 1))
		while (($(jobs -rp | wc -l) >= par)); do wait -n || true; done
		coverage_make_one "$out" "$sc" "$i/$n" "${args[@]}" &
	done
	wait
	for sc in "${scs[@]}"; do cat "$out/runs/${sc##*/}.row" >>"$out/runs.tsv"; done
	rm -f "$out"/runs/*.row
	coverage_union "$out" "$(coverage_src)"
}

# coverage_make_one OUT SCENARIO I/N [VAR=value...]: one run of make
# coverage; its tracefile into OUT/runs/NAME.info, its runs.tsv row into
# OUT/runs/NAME.row.
coverage_make_one() {
	local out=$1 sc=$2 pos=$3 st=0 dir rid name=${2##*/}
	shift 3
	say "coverage: [$pos] $name"
	"$MS/rig" run "$sc" "$@" VARIANT=coverage >"$out/runs/$name.ktap" 2>"$out/runs/$name.err" || st=$?
	dir=$(sed -n 's/^# logs //p' "$out/runs/$name.ktap" | head -1)
	rid=${dir##*/}
	if [[ -n $rid && -s $RIG_LOGS/$rid/coverage/coverage.info ]]; then
		cp "$RIG_LOGS/$rid/coverage/coverage.info" "$out/runs/$name.info"
		say "coverage: [$pos] $name: exit $st, $(grep -m1 '^coverage: error-blocks' "$RIG_LOGS/$rid/coverage/summary.txt")"
	else
		warn "coverage: $name left no coverage (exit $st; see $out/runs/$name.err)"
	fi
	printf '%s\t%s\t%s\n' "$name" "$st" "${rid:--}" >"$out/runs/$name.row"
}

# coverage_union OUT TREE: OUT/runs/*.info merged into OUT/coverage.info,
# OUT/coverage/index.html, OUT/coverage.json; summary and the unreached
# error blocks on stdout.
coverage_union() {
	local out=$1 tree=$2 f name
	local -a infos=() names=() add=()
	for f in "$out"/runs/*.info; do
		[[ -e $f ]] || continue
		infos+=("$f") names+=("$(basename "$f" .info)") add+=(-a "$f")
	done
	((${#infos[@]})) || die "coverage: no run left coverage data ($out/runs)"
	lcov -q "${LCOV_RC[@]}" "${add[@]}" -o "$out/coverage.info" 2>>"$out/lcov.log" ||
		die "coverage: lcov could not merge the runs (see $out/lcov.log)"
	coverage_html "$out/coverage.info" "$tree" "$out/coverage" 2>>"$out/lcov.log" ||
		die "coverage: genhtml failed (see $out/lcov.log)"
	coverage_error_blocks "$out/coverage.info" "$tree" >"$out/error-blocks.tsv"
	# one column per scenario: the count it reached each block with
	local i
	for i in "${!infos[@]}"; do
		coverage_error_blocks "${infos[i]}" "$tree" >"$out/.blocks-$i"
		coverage_summary "${infos[i]}" "$tree" "$out/.blocks-$i" >"$out/runs/${names[i]}.summary"
	done
	coverage_summary "$out/coverage.info" "$tree" "$out/error-blocks.tsv" | tee "$out/summary.txt"
	coverage_table "$out" "${names[@]}" | tee "$out/per-scenario.txt"
	coverage_unreached "$out" "${names[@]}" | tee "$out/unreached.txt"
	coverage_json "$out" "${names[@]}" >"$out/coverage.json"
	rm -f "$out"/.blocks-*
	say "coverage: report ${out#"$RIG_ROOT"/}/coverage/index.html (coverage.json, unreached.txt beside it)"
}

# coverage_table OUT NAME...: line coverage per file, one column per run.
coverage_table() {
	local out=$1 n
	shift
	{
		printf 'file\tall'
		printf '\t%s' "$@"
		echo
		for f in $COVERAGE_FILES; do
			n=$(coverage_file_pct "$out/summary.txt" "$f")
			[[ -n $n ]] || continue
			printf '%s\t%s' "$f" "$n"
			for name; do printf '\t%s' "$(coverage_file_pct "$out/runs/$name.summary" "$f")"; done
			echo
		done
		printf 'error-blocks\t%s' "$(sed -n 's/^coverage: error-blocks reached //p' "$out/summary.txt")"
		for name; do printf '\t%s' "$(sed -n 's/^coverage: error-blocks reached //p' "$out/runs/$name.summary")"; done
		echo
	} | sed 's/^/per-scenario: /'
}

coverage_file_pct() {
	awk -v f="$2" '$1 == "coverage:" && $2 == f && $3 == "lines" { print $4 }' "$1"
}

# coverage_unreached OUT NAME...: the error blocks no run reached, per
# function; and per reached block, which runs reached it (error-blocks.tsv).
coverage_unreached() {
	local out=$1 i
	shift
	local -a cols=()
	for i in $(seq 0 $(($# - 1))); do cols+=("$out/.blocks-$i"); done
	# error-blocks.tsv: file line function union-count then one count per run
	awk -F'\t' -v n=$# 'FILENAME != last { last = FILENAME; k++ }
		k == 1 { key[FNR] = $1 "\t" $2; row[$1 "\t" $2] = $0; order[FNR] = $1 "\t" $2; rows = FNR; next }
		{ c[k - 1, $1 "\t" $2] = $4 }
		END { for (r = 1; r <= rows; r++) { s = row[order[r]]; for (j = 1; j <= n; j++) s = s "\t" ((j, order[r]) in c ? c[j, order[r]] : 0); print s } }' \
		"$out/error-blocks.tsv" "${cols[@]}" >"$out/error-blocks.runs.tsv"
	{
		printf 'file\tline\tfunction\tall'
		printf '\t%s' "$@"
		echo
		cat "$out/error-blocks.runs.tsv"
	} >"$out/error-blocks.tsv"
	rm -f "$out/error-blocks.runs.tsv"
	awk -F'\t' 'NR > 1 && $4 == 0 { k = $1 " " $3; if (!(k in s)) { o[++n] = k; s[k] = "" } s[k] = s[k] " " $2 }
		END { for (i = 1; i <= n; i++) print "unreached: " o[i] " line" (index(substr(s[o[i]], 2), " ") ? "s" : "") s[o[i]] }' "$out/error-blocks.tsv"
}

# coverage_json OUT NAME...: what a CI reads.
coverage_json() {
	local out=$1
	shift
	local -a args=()
	local i=0 name
	for name; do args+=(--rawfile "s_$i" "$out/runs/$name.summary"); i=$((i + 1)); done
	jq -n --arg names "$*" --rawfile all "$out/summary.txt" --rawfile runs "$out/runs.tsv" \
		--rawfile blocks "$out/error-blocks.tsv" "${args[@]}" '
	def parse: [split("\n")[] | select(startswith("coverage: ") and (test(" lines [0-9.]+% \\(") )) |
		capture("^coverage: (?<file>\\S+) lines (?<lines_pct>[0-9.]+)% \\((?<lines_hit>[0-9]+)/(?<lines_total>[0-9]+)\\)( functions (?<functions_pct>[0-9.]+)%( \\((?<fh>[0-9]+)/(?<ft>[0-9]+)\\))?)?( branches (?<branches_pct>[0-9.]+)%)?( calls (?<calls>[0-9]+))?")
		| with_entries(select(.value != null)) | with_entries(if .key == "file" then . else .value |= tonumber end)];
	def eb: (split("\n")[] | select(startswith("coverage: error-blocks reached ")) | ltrimstr("coverage: error-blocks reached ") | split("/") | {reached: (.[0] | tonumber), total: (.[1] | tonumber)});
	($blocks | split("\n") | map(select(length > 0) | split("\t"))) as $b |
	{
		files: ($all | parse),
		error_blocks: (($all | eb) + {
			unreached: [$b[1:][] | select(.[3] == "0") | {file: .[0], line: (.[1] | tonumber), function: .[2]}],
			reached_by: [$b[1:][] | select(.[3] != "0") | {file: .[0], line: (.[1] | tonumber), function: .[2],
				runs: [range(4; length) as $i | select(.[$i] != "0") | $b[0][$i]]}]
		}),
		runs: [$runs | split("\n")[] | select(length > 0) | split("\t") | {scenario: .[0], exit: (.[1] | tonumber), run: .[2]}],
		per_run: ($names | split(" ") | to_entries | map({key: .value,
			value: ($ARGS.named["s_\(.key)"] | {files: parse, error_blocks: eb})}) | from_entries)
	}'
}
