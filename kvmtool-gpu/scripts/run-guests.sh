#!/bin/sh
# Boots each guest program with the vGPU and fails if any does not pass its
# own checks. POSIX sh, so it also runs inside the nested machine's busybox.
# Usage: run-guests.sh VMM GUEST_DIR [PAGES...]   (pages default: 4K)
# Environment: GUESTS (default: every *.elf in GUEST_DIR), RUN_ARGS (extra
# arguments for `kvmtool-gpu run`).
vmm=$1 dir=$2
shift 2
pages=${*:-4K}
failed=0 passed=0
guests=${GUESTS:-$(for f in "$dir"/*.elf; do basename "$f" .elf; done)}
for name in $guests; do
  for p in $pages; do
    echo "run-guests: == $name on $p host pages"
    # shellcheck disable=SC2086 # RUN_ARGS is a word list on purpose
    if "$vmm" run --guest "$dir/$name.elf" --mem 256M --pages "$p" --timeout 240 $RUN_ARGS; then
      passed=$((passed + 1))
    else
      echo "run-guests: FAILED: $name on $p host pages"
      failed=$((failed + 1))
    fi
  done
done
echo "run-guests: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
