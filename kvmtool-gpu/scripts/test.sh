#!/usr/bin/env bash
# The whole test suite (README's test command; .ci/run calls exactly this).
# Installs what is missing, builds, then runs every ctest suite: unit tests;
# kvm and gpu tests, which skip with a reason where /dev/kvm or a GPU is
# missing; and the nested suites, which run the kvm tests inside a QEMU
# machine whose kernel has KVM, so machines without /dev/kvm still exercise
# the real KVM path. Then the unit suites again under ASan+UBSan, and a
# bounded (~45 s) libFuzzer run of the vGPU device model. First, after
# the build, a one-second check that no function is left uncalled.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${KVMGPU_BUILD_DIR:-$repo/build}
bash "$repo/kvmtool-gpu/scripts/build.sh"
python3 "$repo/kvmtool-gpu/scripts/dead-functions.py"
cd "$build"
[ -e /dev/kvm ] && echo "test.sh: /dev/kvm present: kvm tests run on this host's KVM" \
                || echo "test.sh: no /dev/kvm here: kvm tests skip on the host and run in the nested suites"
ctest --output-on-failure -j2 --timeout 1500 "$@"
bash "$repo/kvmtool-gpu/scripts/test-sanitized.sh"
bash "$repo/tests/fuzz/run-ci-fuzz.sh"
