# SPDX-License-Identifier: GPL-2.0
# hotplug-rig: every entry point. The work is done by monitor-scripts/rig;
# this file only passes variables through. `make help` lists everything.

RIG := monitor-scripts/rig
SCENARIO ?= smoke
# Variables handed to the runner when set (it checks each one); the list
# is the runner's own (rig vars).
RIG_VARS := $(shell $(RIG) vars)
rig_args = $(strip $(foreach v,$(RIG_VARS),$(if $(strip $($(v))),'$(v)=$(strip $($(v)))')))
export RIG_MAKE_COMMAND = make $(MAKECMDGOALS) $(rig_args)

.PHONY: help run sweep soak matrix test check check-all bench kernel initramfs triage deps lint clean distclean

help:
	@echo 'hotplug-rig: memory-hotplug stress and fault injection in a QEMU guest'
	@echo
	@echo 'targets:'
	@echo '  run        run one scenario (SCENARIO=smoke) and print KTAP; logs in logs/<run-id>/'
	@echo '  sweep      fail each allocation of a 128M DIMM hot-add once (scenarios/sweep-plug)'
	@echo '  soak       repeat a scenario (random by default) in one boot: make soak DURATION=30m'
	@echo '  matrix     every line of a matrix file as parallel runs, one KTAP/JUnit/verdict table'
	@echo '  check      the rig'"'"'s fast tests: no kernel, no QEMU (lint, parser, triage, docs)'
	@echo '  test       check, then the tests on the real kernel and QEMU (ends "N passed, N failed")'
	@echo '  check-all  what needs other kernels: FIXES=1, test-only breakages, every variant (~30 min)'
	@echo '  bench      measure boot, hotplug cycle and build figures ("name: value unit")'
	@echo '  kernel     build the guest kernel (cached by a hash of its inputs), print its path'
	@echo '  initramfs  build the guest image from guest/'
	@echo '  triage     classify kernel reports in a console log: make triage LOG=file'
	@echo '  deps       install missing packages (as root) or print the apt-get line'
	@echo '  lint       shellcheck every script'
	@echo '  help       this list'
	@echo '  clean      remove logs; distclean also removes build/ (kernel tree and cache)'
	@echo
	@echo 'variables:'
	@echo '  SCENARIO=name         a file in scenarios/ (default smoke) or a path'
	@echo '  SEED=n                seed for random choices (default: a new one, recorded)'
	@echo '  ACCEL=auto|kvm|tcg    accelerator; auto probes KVM once and falls back to TCG'
	@echo '  KERNEL_SRC=dir        build your kernel tree (no series unless SERIES=1)'
	@echo '  KERNEL_IMAGE=bzImage  use a built kernel as it is'
	@echo '  EXTRA_PATCHES="a b"   patches applied after the series'
	@echo '  FIXES=1               also apply kernel-series/fixes/'
	@echo '  VARIANT=name          kernel variant (config fragments); default vmemmap'
	@echo '  SERIES=0|1            apply kernel-series/ (default 1; 0 with KERNEL_SRC)'
	@echo '  CHECKS=0              skip the per-step checks (for timing)'
	@echo '  JOBS=n                kernel build jobs (default: nproc)'
	@echo '  V=1                   show kernel build commands'
	@echo '  LOG=file              console log for make triage'
	@echo '  DURATION=30m          soak length (s, m, h); CHECKPOINT=n rounds between samples (5)'
	@echo '  SHRINK=0              do not shrink a failed random run'
	@echo '  BENCH_BUILD=0         make bench without the two kernel builds'
	@echo '  MATRIX=file           make matrix: its entries (default tests/matrix/default)'
	@echo '  SHARD=i/N PAR=n       make matrix: the i-th of N slices; n runs at once (nproc)'
	@echo
	@echo 'exit status of monitor-scripts/rig: 0 pass, 1 kernel problem, 2 rig error, 4 skip'
	@echo '(make turns any failure into 2: read logs/latest/summary.json for the verdict)'

run:
	$(RIG) run $(strip $(SCENARIO) $(rig_args))

sweep:
	$(RIG) run $(strip sweep-plug $(rig_args))

soak:
	@test -n "$(DURATION)" || { echo 'make soak: set DURATION= (e.g. DURATION=30m)' >&2; exit 2; }
	$(RIG) soak $(if $(filter command line environment,$(origin SCENARIO)),$(SCENARIO),random) DURATION=$(DURATION) $(if $(CHECKPOINT),CHECKPOINT=$(CHECKPOINT)) $(rig_args)

matrix:
	monitor-scripts/matrix $(if $(MATRIX),MATRIX=$(MATRIX)) $(if $(SHARD),SHARD=$(SHARD)) $(if $(PAR),PAR=$(PAR)) $(rig_args)

kernel:
	$(RIG) kernel $(strip $(rig_args))

initramfs:
	$(RIG) initramfs

deps:
	$(RIG) deps

triage:
	@test -n "$(LOG)" || { echo 'make triage: set LOG=console.log' >&2; exit 2; }
	$(RIG) triage $(LOG)

check:
	tests/check

test:
	tests/run

check-all:
	tests/check-all

bench:
	tests/bench $(rig_args)

lint:
	shellcheck -x -P monitor-scripts monitor-scripts/rig monitor-scripts/matrix tests/run tests/check tests/bench tests/check-all $(wildcard tests/*.sh tests/*/*.sh tests/*/*/*.sh tools/*.sh) .ci/run
	shellcheck -s dash -e SC3060 guest/init guest/agent guest/lib/*.sh

clean:
	rm -rf logs/[0-9]* logs/latest

distclean: clean
	rm -rf build
