# SPDX-License-Identifier: GPL-2.0
# hotplug-rig: every entry point. The work is done by monitor-scripts/rig;
# this file only passes variables through. `make help` lists everything.

# Values reach the runner through the environment, never through a shell
# command line: a value is data, however it is quoted. The runner checks
# each one, and names a variable given on make's command line that it does
# not know (RIG_CMDLINE_VARS).
override RIG_CMDLINE_VARS := $(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),$(v)))
export RIG_CMDLINE_VARS
# Nor does make read them: a command-line value is taken as typed, so a
# $(shell ...) in it is neither run nor expanded to nothing on its way to
# the environment.
$(foreach v,$(RIG_CMDLINE_VARS),$(eval override $(v) := $$(value $(v))))
# The Makefile's own names cannot be replaced from the command line (RIG
# is the recipe itself); the runner refuses them there as unknown.
override RIG := monitor-scripts/rig
override RIG_VARS := $(shell $(RIG) vars)
override MAKE_VARS := $(shell $(RIG) vars make)
export $(RIG_VARS) $(MAKE_VARS)
override RIG_MAKE_COMMAND := make $(MAKECMDGOALS)
export RIG_MAKE_COMMAND

.PHONY: help run sweep merge coverage soak matrix test check check-all bench kernel initramfs triage deps lint clean distclean sendable

help:
	@echo 'hotplug-rig: memory-hotplug stress and fault injection in a QEMU guest'
	@echo
	@echo 'targets:'
	@echo '  run        run one scenario (SCENARIO=smoke) and print KTAP; logs in logs/<run-id>/'
	@echo '  sweep      fail each allocation of every hotplug operation once (tests/matrix/sweep;'
	@echo '             SCENARIO=sweep-online: one operation), one table of cases and findings'
	@echo '  coverage   gcov of the hotplug code over SCENARIOS (VARIANT=coverage); HTML, JSON, unreached'
	@echo '  soak       repeat a scenario (random by default) in one boot: make soak DURATION=30m'
	@echo '  matrix     every line of a matrix file as parallel runs, one KTAP/JUnit/verdict table'
	@echo '  merge      fold shards (make matrix/sweep SHARD=i/N on other hosts) into one report: DIRS="..."'
	@echo '  check      the rig'"'"'s fast tests: no kernel, no QEMU (lint, parser, triage, docs)'
	@echo '  test       check, then the tests on the real kernel and QEMU (ends "N passed, N failed")'
	@echo '  check-all  what needs other kernels: FIXES=1, test-only breakages, every variant (~30 min)'
	@echo '  bench      measure boot, hotplug cycle and build figures ("name: value unit")'
	@echo '  kernel     build the guest kernel (cached by a hash of its inputs), print its path'
	@echo '  initramfs  build the guest image from guest/'
	@echo '  triage     classify kernel reports in a console log: make triage LOG=file'
	@echo '  deps       install missing packages, KERNEL= picks the kernel source (as root), or print the apt-get line'
	@echo '  lint       shellcheck every script'
	@echo '  help       this list'
	@echo '  clean      remove run logs (not matrix or bench folders); distclean: also build/'
	@echo '  sendable   write the series (FIXES=1: the fixes) for the list, [KERNEL=6.12] [TREE=dir] [OUT=dir] [KERNEL_GIT=dir]'
	@echo
	@echo 'variables:'
	@echo '  SCENARIO=name         a file in scenarios/ (default smoke) or a path'
	@echo '  SEED=n                seed for random choices (default: a new one, recorded)'
	@echo '  ACCEL=auto|kvm|tcg    accelerator; auto probes KVM once and falls back to TCG'
	@echo '  KERNEL=6.1|6.12       Debian linux-source package to build (default 6.1)'
	@echo '  KERNEL_SRC=dir        build your kernel tree (no series unless SERIES=1)'
	@echo '  KERNEL_IMAGE=bzImage  use a built kernel as it is (its config: config-<release> beside it)'
	@echo '  KERNEL_MODULES=dir    the image'"'"'s modules (package root or lib/modules/<release>)'
	@echo '  EXTRA_PATCHES="a b"   patches applied after the series'
	@echo '  FIXES=1               also apply kernel-series/fixes/'
	@echo '  VARIANT=name          kernel variant (config fragments); default vmemmap'
	@echo '  SERIES=0|1            apply kernel-series/ (default 1; 0 with KERNEL_SRC)'
	@echo '  CHECKS=0              skip the per-step checks (for timing)'
	@echo '  RESTORE=boot          a sweep restarts its guest by booting, not from the ready snapshot'
	@echo '  COVERAGE_BOOT=0       VARIANT=coverage counts from the ready guest on, not from boot'
	@echo '  JOBS=n                kernel build jobs (default: nproc)'
	@echo '  V=1                   show kernel build commands'
	@echo '  LOG=file              console log for make triage'
	@echo '  DURATION=30m          soak length (s, m, h); CHECKPOINT=n rounds between samples (5)'
	@echo '  SHRINK=0              do not shrink a failed random run'
	@echo '  SWEEP_CASE=OP:N       only case N of the sweeps of OP (plug, unplug, online-movable, ...): one case replayed'
	@echo '  RUN_LOG_MB=n          stop a run (not a soak) whose logs pass n MiB (default 512)'
	@echo '  BENCH_BUILD=0         make bench without the two kernel builds'
	@echo '  MATRIX=file           make matrix: its entries (default tests/matrix/default)'
	@echo '  DIRS="a b"            make merge: the matrix folders of the shards'
	@echo '  SWEEP_SHARD=i/N       a sweep runs every N-th case from the i-th (make sweep SHARD=i/N sets it)'
	@echo '  SHARD=i/N PAR=n       make matrix: the i-th of N slices; n runs at once (nproc; make coverage: 1)'
	@echo '  SCENARIOS="a b"       make coverage: the runs to merge (default: the scenario library)'
	@echo '  SWEEP=1|FIRST-LAST    make coverage: add make sweep'"'"'s scenarios (all cases, or those of each sweep)'
	@echo '  TREE=dir OUT=dir      make sendable: the kernel tree for get_maintainer.pl; where to write'
	@echo '  KERNEL_GIT=dir        make sendable, check-all: a kernel git history (bare or a clone) for checkpatch'"'"'s commit-id checks'
	@echo
	@echo 'exit status of monitor-scripts/rig: 0 pass, 1 kernel problem, 2 rig error, 4 skip'
	@echo '(make turns any failure into 2: read logs/latest/summary.json for the verdict)'

run:
	$(RIG) make-run

sweep:
	$(RIG) make-sweep

coverage:
	$(RIG) make-coverage

soak:
	$(RIG) make-soak

matrix:
	$(RIG) make-matrix

merge:
	$(RIG) make-merge

kernel:
	$(RIG) make-kernel

initramfs:
	$(RIG) initramfs

deps:
	$(RIG) make-deps

triage:
	$(RIG) make-triage

check:
	tests/check

test:
	tests/run

check-all:
	tests/check-all

bench:
	$(RIG) make-bench

lint:
	shellcheck -x -P monitor-scripts monitor-scripts/rig monitor-scripts/matrix monitor-scripts/merge monitor-scripts/sweep-report monitor-scripts/sendable tests/run tests/check tests/bench tests/check-all tests/bisect-series $(wildcard tests/*.sh tests/*/*.sh tests/*/*/*.sh tools/*.sh) .ci/run
	shellcheck -s dash -e SC3060 guest/init guest/agent guest/lib/*.sh

clean:
	rm -rf logs/[0-9]* logs/latest

distclean: clean
	rm -rf build

sendable:
	$(RIG) make-sendable
