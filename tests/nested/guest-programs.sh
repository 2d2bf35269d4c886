#!/bin/sh
# Runs each built guest program under kvmtool-gpu (host pages 4K and 2M) and
# fails if any does not pass its own checks. Usage: guest-programs.sh VMM GUEST_DIR
# (POSIX sh: it also runs inside the nested machine's busybox.)
vmm=$1 dir=$2
failed=0 passed=0
for img in "$dir"/*.elf; do
  name=$(basename "$img" .elf)
  for pages in 4K 2M; do
    if "$vmm" run --guest "$img" --mem 256M --pages "$pages" --timeout 240 --vgpu auto; then
      passed=$((passed + 1))
    else
      echo "guest-programs: FAILED: $name on $pages pages"
      failed=$((failed + 1))
    fi
  done
done
echo "guest-programs: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
