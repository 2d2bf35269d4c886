#!/bin/sh
# Boots each guest program with the vGPU and fails if any does not pass its
# own checks. POSIX sh, so it also runs inside the nested machine's busybox.
# Usage: run-guests.sh VMM GUEST_DIR [PAGES...]   (pages default: 4K)
# Environment: GUESTS (default: the self-checking programs below that are
# built), RUN_ARGS (extra arguments for `kvmtool-gpu run`). The benchmark
# guests (bandwidth, calls, pointer_chase) need their `bench` command's
# arguments and are run by it, not here.
vmm=$1 dir=$2
shift 2
pages=${*:-4K}
failed=0 passed=0
self_checking="boot_exit hello vecadd matmul attack params conformance multigpu"
guests=${GUESTS:-$(for g in $self_checking; do [ -f "$dir/$g.elf" ] && echo "$g"; done)}
# The guests check what a device-memory quota and full handle tables refuse
# (attack, conformance): a 4G quota, as several VMs get, and 4096 handles a
# table (filling 65536 takes long under emulation), unless RUN_ARGS names
# them (one VM alone may hold the whole GPU).
case " $RUN_ARGS " in *" --gpu-mem-quota "*) quota="" ;; *) quota="--gpu-mem-quota 4G" ;; esac
case " $RUN_ARGS " in *" --max-handles "*) ;; *) quota="$quota --max-handles 4096" ;; esac
for name in $guests; do
  for p in $pages; do
    echo "run-guests: == $name on $p host pages"
    # shellcheck disable=SC2086 # RUN_ARGS is a word list on purpose
    if "$vmm" run --guest "$dir/$name.elf" --mem 256M --pages "$p" --timeout 240 $quota $RUN_ARGS; then
      passed=$((passed + 1))
    else
      echo "run-guests: FAILED: $name on $p host pages"
      failed=$((failed + 1))
    fi
  done
done
# multigpu once more with four devices (four contexts on GPU 0, or four
# host devices), the study's set-up; above its roles shared one device.
case " $(echo $guests) " in *" multigpu "*)
  echo "run-guests: == multigpu with --gpus 0,0,0,0"
  # shellcheck disable=SC2086
  if "$vmm" run --guest "$dir/multigpu.elf" --mem 256M --timeout 240 --gpus 0,0,0,0 $RUN_ARGS; then
    passed=$((passed + 1))
  else
    echo "run-guests: FAILED: multigpu with --gpus 0,0,0,0"
    failed=$((failed + 1))
  fi
esac
# Three VMs at once sharing the GPU (each its own worker, context, quotas).
case " $(echo $guests) " in *" vecadd "*)
  echo "run-guests: == vecadd, three VMs at once"
  # shellcheck disable=SC2086
  if "$vmm" run --guest "$dir/vecadd.elf" --mem 256M --timeout 240 --vms 3 $RUN_ARGS; then
    passed=$((passed + 1))
  else
    echo "run-guests: FAILED: vecadd, three VMs at once"
    failed=$((failed + 1))
  fi
esac
echo "run-guests: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
