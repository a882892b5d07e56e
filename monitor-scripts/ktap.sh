# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Results: KTAP on stdout and in result.ktap (line by line, so the last line
# before a crash is kept), the step list, and summary.json. Sourced by rig.

# ktap LINE: to stdout and result.ktap, printable (guest output can hold
# any byte); a closed stdout (make run | head) does not stop the run,
# result.ktap still gets every line.
ktap() {
	local l
	printable l "$*"
	printf '%s\n' "$l" 2>/dev/null || true
	printf '%s\n' "$l" >>"$RUN_DIR/result.ktap" 2>/dev/null || LOG_WRITE_FAILED=1
}

ktap_diag() {
	local l
	for l in "$@"; do ktap "# $l"; done
}


# record_step N VERB ARGS RESULT MS: one entry of summary.json's steps (no
# timings there, so two runs of one seed compare equal) and its timing.
record_step() {
	local v a r
	json_str v "$2"
	json_str a "$3"
	json_str r "$4"
	printf '{"verb": %s, "args": %s, "result": %s}\n' "$v" "$a" "$r" >>"$RUN_DIR/.steps.jsonl" 2>/dev/null ||
		LOG_WRITE_FAILED=1
	printf '%s\n' "$5" >>"$RUN_DIR/.step_ms" 2>/dev/null || LOG_WRITE_FAILED=1
}

# phases_json: the run's step phases (run.sh's phase_end) as one object.
phases_json() {
	local k sep='' out='{'
	for k in "${!PHASE_MS[@]}"; do
		out+="$sep\"$k\": ${PHASE_MS[$k]}"
		sep=', '
	done
	echo "$out}"
}

# write_summary: summary.json from what the run recorded.
write_summary() {
	local reports='[]' now
	now_ms now
	[[ -s $RUN_DIR/reports.json ]] && reports=$(jq -c '.reports' "$RUN_DIR/reports.json" 2>/dev/null || echo '[]')
	local cfg_hash=unknown
	[[ -n ${KCONFIG:-} && -f ${KCONFIG:-} ]] && cfg_hash=$(sha256sum <"$KCONFIG" | cut -c1-16)
	jq -n \
		--arg scenario "$SCENARIO" --arg file "${SC_FILE:-}" --arg seed "${SEED:-}" \
		--arg run_id "$RUN_ID" --arg verdict "$VERDICT" \
		--arg release "${GUEST_RELEASE:-${KRELEASE:-unknown}}" --arg config_hash "$cfg_hash" \
		--arg inputs "${KHASH:-}" --arg image "${KIMAGE:-}" --arg source "${KSOURCE:-}" --arg accel "${ACCEL_USED:-}" \
		--arg qemu "$(qemu-system-x86_64 --version 2>/dev/null | head -1)" \
		--arg command "$RIG_COMMAND" \
		--arg variant "${VARIANT:-}" --arg variant_cmdline "${KVARIANT_CMDLINE:-}" \
		--arg fixes "${FIXES:-0}" --arg extra "${EXTRA_PATCHES:-}" \
		--argjson reasons "$(printf '%s\n' "${REASONS[@]}" | jq -R . | jq -sc 'map(select(length > 0))')" \
		--argjson steps "$(jq -nRc '[inputs | fromjson?]' "$RUN_DIR/.steps.jsonl" 2>/dev/null || echo '[]')" \
		--argjson step_ms "$(jq -nRc '[inputs | tonumber?]' "$RUN_DIR/.step_ms" 2>/dev/null || echo '[]')" \
		--argjson boot_ready_ms "${BOOT_READY_MS:-null}" --argjson boots "${RUN_BOOTS:-1}" \
		--argjson floor_ns "${FLOOR_NS:-null}" \
		--argjson phase_ms "$(phases_json)" \
		--argjson total_ms "$((now - RUN_T0))" \
		--argjson reports "$reports" \
		--argjson soak "${SOAK_JSON:-null}" \
		--argjson caps "$(caps_json)" \
		--arg git_describe "${KGIT_DESCRIBE:-}" --arg git_head "${KGIT_HEAD:-}" \
		--arg kconfig "${KCONFIG:-}" --arg modules "${KMOD_DIR:-}" \
		--arg modules_loaded "${KMOD_LOAD[*]:-}" \
		'{scenario: $scenario, scenario_file: $file, seed: $seed, run_id: $run_id,
		  verdict: $verdict, reasons: $reasons,
		  kernel: {release: $release, config_hash: $config_hash, inputs: $inputs, image: $image,
		           source: $source, config: $kconfig,
		           git: (if $git_head == "" then null else {describe: $git_describe, head: $git_head} end),
		           modules: (if $modules == "" then null else {dir: $modules,
		                     loaded: ($modules_loaded | split(" ") | map(select(length > 0)))} end),
		           variant: $variant, variant_cmdline: $variant_cmdline, fixes: $fixes,
		           extra_patches: $extra},
		  accel: $accel, qemu: $qemu, command: $command,
		  capabilities: $caps,
		  steps: $steps, reports: $reports, soak: $soak,
		  boots: $boots,
		  timings: {boot_ready_ms: $boot_ready_ms, total_ms: $total_ms, step_ms: $step_ms,
		           floor_ns: $floor_ns, phase_ms: $phase_ms}}' \
		>"$RUN_DIR/summary.json.tmp" 2>"$RUN_DIR/summary.err" &&
		mv "$RUN_DIR/summary.json.tmp" "$RUN_DIR/summary.json" && rm -f "$RUN_DIR/summary.err" &&
		return 0
	# A summary must exist whatever broke: the verdict and the reasons,
	# and what went wrong with the rest.
	say "summary.json lacks its details: $(head -1 "$RUN_DIR/summary.err")"
	jq -n --arg scenario "$SCENARIO" --arg seed "${SEED:-}" --arg run_id "$RUN_ID" \
		--arg verdict "$VERDICT" --arg command "$RIG_COMMAND" \
		--arg error "$(head -c 4096 "$RUN_DIR/summary.err")" \
		--argjson reasons "$(printf '%s\n' "${REASONS[@]}" | jq -R . | jq -sc 'map(select(length > 0))')" \
		'{scenario: $scenario, seed: $seed, run_id: $run_id, verdict: $verdict,
		  reasons: $reasons, command: $command, steps: [], summary_error: $error}' \
		>"$RUN_DIR/summary.json.tmp" && mv "$RUN_DIR/summary.json.tmp" "$RUN_DIR/summary.json"
}

# write_junit: result.junit.xml beside result.ktap, for CI systems that read
# JUnit: one testcase per step, failures with the run's reasons.
write_junit() {
	jq -r --arg name "$SCENARIO" --arg seed "${SEED:-}" --arg verdict "$VERDICT" \
		--argjson ms "$(jq -nRc '[inputs | tonumber?]' "$RUN_DIR/.step_ms" 2>/dev/null || echo '[]')" '
	def esc: tostring | @html;
	. as $s
	| ($s.steps | length) as $n
	| ([$s.steps[] | select(.result == "fail" or .result == "error")] | length) as $f
	| ([$s.steps[] | select(.result == "not run" or .result == "skip")] | length) as $k
	| "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
	  "<testsuites><testsuite name=\"hotplug-rig.\($name | esc)\" tests=\"\($n)\" failures=\"\($f)\" skipped=\"\($k)\">",
	  "<properties><property name=\"seed\" value=\"\($seed | esc)\"/><property name=\"verdict\" value=\"\($verdict | esc)\"/></properties>",
	  ($s.steps | to_entries[] |
	    "<testcase classname=\"\($name | esc)\" name=\"\(.key + 1) \(.value.verb | esc) \(.value.args | esc)\" time=\"\((($ms[.key] // 0) / 1000))\">"
	    + (if .value.result == "fail" or .value.result == "error" then
	         "<failure message=\"\(.value.result)\">\($s.reasons | join("\n") | esc)</failure>"
	       elif .value.result == "not run" or .value.result == "skip" then "<skipped/>" else "" end)
	    + "</testcase>"),
	  "</testsuite></testsuites>"' "$RUN_DIR/summary.json" >"$RUN_DIR/result.junit.xml" 2>/dev/null
}
