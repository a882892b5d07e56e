# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# make sendable as a maintainer receives it: the series and the fixes it
# writes for KERNEL, applied with git am onto a git copy of the packaged
# tree as released, and checkpatch --strict without an error or a warning
# (without KERNEL_GIT, but for the 'Unknown commit id' ones a tree with no
# history gives), the patches' notes kept. Sourced by tests/check-all; needs ROOT, TMP, t_ok, t_fail.

# sendable_expect KERNEL: the series, then the fixes on their own, each
# written by make sendable and applied by git am to a fresh pristine tree.
sendable_expect() {
	local kernel=$1 top=linux-source-$1 fixes out st desc what msg dir want got
	local tree=$TMP/am-$kernel/$top
	local -a git_arg=() patches sources
	[[ -n ${KERNEL_GIT:-} ]] && git_arg=(KERNEL_GIT="$KERNEL_GIT")
	rm -rf "$TMP/am-$kernel"
	mkdir -p "$TMP/am-$kernel"
	if ! tar -xf "/usr/src/$top.tar.xz" -C "$TMP/am-$kernel" ||
		! git -C "$tree" init -q ||
		! git -C "$tree" add -A -f ||
		! git -C "$tree" -c user.name=rig -c user.email=rig@localhost commit -q -m "$top as packaged"; then
		t_fail "KERNEL=$kernel: a git copy of /usr/src/$top.tar.xz for git am"
		return
	fi
	git -C "$tree" tag pristine
	for fixes in 0 1; do
		what=$( ((fixes)) && echo "the fixes (FIXES=1)" || echo "the series")
		out=$TMP/sendable-$kernel-$fixes st=0
		dir=$ROOT/kernel-series
		[[ $kernel == 6.1 ]] || dir+=/$kernel
		((fixes)) && dir+=/fixes
		mapfile -t sources < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e "s|^|$dir/|" "$dir/series")
		"$ROOT/monitor-scripts/sendable" KERNEL="$kernel" FIXES=$fixes OUT="$out" "${git_arg[@]}" \
			>"$TMP/sendable.out" 2>&1 || st=$?
		desc="KERNEL=$kernel make sendable: $what written"
		if ((st)); then
			tail -3 "$TMP/sendable.out" | sed 's/^/# /'
			t_fail "$desc"
			continue
		fi
		t_ok "$desc"

		# every warning but the ids that no history here can confirm
		msg=$(grep -E ': (ERROR|WARNING|CHECK):' "$out/checkpatch.txt" |
			if [[ -n ${KERNEL_GIT:-} ]]; then cat; else grep -v 'WARNING: Unknown commit id'; fi)
		if [[ -z ${KERNEL_GIT:-} ]] && grep -q 'Unknown commit id' "$out/checkpatch.txt" &&
			! grep -q 'no kernel git history' "$TMP/sendable.out"; then
			msg+="${msg:+$'\n'}sendable does not say why the commit ids are unknown"
		fi
		desc="KERNEL=$kernel: checkpatch --strict passes $what$([[ -n ${KERNEL_GIT:-} ]] &&
			echo ", commit ids checked in KERNEL_GIT" || echo " (no history: unknown ids aside, and said why)")"
		if [[ -z $msg ]]; then
			t_ok "$desc"
		else
			printf '%s\n' "$msg" | head -6 | sed 's/^/# /'
			t_fail "$desc"
		fi

		mapfile -t patches < <(find "$out" -name '[0-9][0-9][0-9][0-9]-*.patch' ! -name '0000-*' | sort)
		# the notes below a patch's "---" reach the list (git am drops them)
		want=$(sed -n '/^---$/,/^diff --git /p' "${sources[@]}" | grep -c '^Notes:$')
		got=$(cat "${patches[@]}" | grep -c '^Notes:$')
		desc="KERNEL=$kernel make sendable: $what, every patch's notes for the reviewers kept ($want)"
		if ((want == got)); then t_ok "$desc"; else echo "# $got of $want notes written"; t_fail "$desc"; fi

		desc="KERNEL=$kernel: git am applies $what (${#patches[@]} patches) to $top as packaged"
		git -C "$tree" am --abort >/dev/null 2>&1
		git -C "$tree" reset -q --hard pristine
		if git -C "$tree" -c user.name=rig -c user.email=rig@localhost am -q "${patches[@]}" \
			>"$TMP/am.out" 2>&1 &&
			(($(git -C "$tree" rev-list --count pristine..HEAD) == ${#patches[@]})); then
			t_ok "$desc"
		else
			grep -E '^(error|Patch failed)' "$TMP/am.out" | head -4 | sed 's/^/# /'
			t_fail "$desc"
		fi
	done
	rm -rf "$TMP/am-$kernel"
}
