#!/usr/bin/env bash
# Runs a command inside a QEMU machine under software emulation (TCG, -cpu max
# emulates AMD SVM) whose Debian kernel loads kvm_amd, so /dev/kvm exists inside
# even where the host has none. See README.md.
#
# Usage: run-nested.sh [--mem 2G] [--hugepages 300] [--timeout 600] [--smp 1]
#                      [--file PATH]... [--cwd DIR] [--keep] -- COMMAND [ARGS...]
#   --file PATH   a file or directory tree to carry in, at the SAME absolute path
#                 (so build-dir paths work unchanged); the shared libraries that
#                 ELF files need (ldd) and the loader come along. Repeatable.
#   COMMAND ARGS  run inside by /bin/sh (busybox), quoted as given; for shell
#                 syntax pass one string: -- sh -c 'a && b'. Starts in --cwd
#                 (default: the current directory, created inside if missing).
#   --hugepages   2 MiB pages reserved before COMMAND runs (mounted at /dev/hugepages)
#   --timeout     wall-clock seconds for QEMU, boot + command (then QEMU is
#                 killed, exit 124); a first, uncached kernel fetch comes on top
#   --keep        keep the initramfs and serial log (the directory is printed)
# Exit status: COMMAND's (from the "NESTED-EXIT <rc>" marker on the serial
# console), 124 on timeout, 125 if the machine stopped without the marker
# (e.g. "NESTED-ERROR no /dev/kvm", a kernel panic). The serial console is
# streamed to stdout as it arrives.
# Environment: NESTED_CACHE (default <repo>/.nested) holds the per-run
# directories; NESTED_KERNEL_CACHE (default ~/.cache/kvmtool-gpu/nested, or
# under $XDG_CACHE_HOME) the fetched kernel, shared by every checkout (a
# fresh clone does not download it again); NESTED_QEMU_ARGS / NESTED_APPEND add QEMU arguments /
# kernel command-line words (for experiments). The kernel always gets
# init_on_alloc=0 (else reserving huge pages zeroes them under TCG: ~1-4 s for
# 300) and mitigations=off (nested MMIO exits ~10-20% cheaper); a test machine.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${NESTED_CACHE:-$repo/.nested}
kernel_cache=${NESTED_KERNEL_CACHE:-${XDG_CACHE_HOME:-${HOME:-$repo}/.cache}/kvmtool-gpu/nested}
mkdir -p "$kernel_cache" 2>/dev/null || kernel_cache=$cache

say() { echo "run-nested: $*" >&2; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

mem=2G hugepages=300 timeout=600 smp=1 cwd=$PWD keep=0
files=()
while (($#)); do
  case $1 in
    --mem) mem=$2; shift 2 ;;
    --hugepages) hugepages=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --smp) smp=$2; shift 2 ;;
    --file) files+=("$2"); shift 2 ;;
    --cwd) cwd=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) say "unknown argument '$1' (the command goes after --)"; usage ;;
  esac
done
(($#)) || { say "no command given"; usage; }
[[ $timeout =~ ^[0-9]+$ ]] || { say "--timeout wants seconds"; exit 2; }
command -v qemu-system-x86_64 >/dev/null ||
  { say "qemu-system-x86_64 missing (bash kvmtool-gpu/scripts/install-deps.sh)"; exit 2; }

# The command, each argument single-quoted for /bin/sh inside.
cmd=
for a in "$@"; do cmd+="'${a//\'/\'\\\'\'}' "; done

start=$SECONDS
kdir=$("$here/fetch-kernel.sh" "$kernel_cache")
mkdir -p "$cache"
run=$(mktemp -d "$cache/run.XXXXXX")
# shellcheck disable=SC2317  # runs from the EXIT trap
cleanup() {
  if [[ -f $run/qemu.pid ]]; then kill "$(cat "$run/qemu.pid")" 2>/dev/null || true; fi
  if ((keep)); then say "kept $run"; else rm -rf "$run"; fi
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

"$here/make-initramfs.sh" -o "$run/initrd.gz" -k "$kdir" --hugepages "$hugepages" \
  --cwd "$cwd" --cmd "$cmd" -- "${files[@]}"

# vmlinux (PVH entry, made by fetch-kernel.sh) skips the kernel's self-decompression.
kernel=$kdir/vmlinux
[[ -f $kernel ]] || kernel=$kdir/vmlinuz

# Serial console on stdout; stdin closed so a terminal is left alone. The
# NESTED-EXIT marker is read back from the log.
qemu=(qemu-system-x86_64 -accel tcg -cpu max -smp "$smp" -m "$mem"
      -nodefaults -no-user-config -display none -serial stdio -no-reboot
      -pidfile "$run/qemu.pid"
      -kernel "$kernel" -initrd "$run/initrd.gz"
      -append "console=ttyS0 quiet panic=-1 init_on_alloc=0 mitigations=off ${NESTED_APPEND:-}")
# shellcheck disable=SC2206  # word splitting wanted for the experiment hook
qemu+=(${NESTED_QEMU_ARGS:-})
boot=$SECONDS
say "booting $(cat "$kdir/version") under TCG (-m $mem -smp $smp, $hugepages huge pages, timeout ${timeout}s)"
{ qrc=0; timeout --foreground -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 || qrc=$?; echo $qrc 2>/dev/null >"$run/qemu.rc"; } |
  sed -u 's/\r$//' | tee "$run/serial.log" &
wait $! || true
rc=$(cat "$run/qemu.rc" 2>/dev/null || echo 255)
rm -f "$run/qemu.pid"

if ((rc == 124 || rc == 137)); then
  say "error: timed out after ${timeout}s (QEMU killed)"
  exit 124
fi
marker=$(grep -a -E '^NESTED-EXIT [0-9]+$' "$run/serial.log" | tail -n 1 || true)
if [[ -z $marker ]]; then
  why=$(grep -a -E '^NESTED-ERROR' "$run/serial.log" | head -n 1 || true)
  say "error: no NESTED-EXIT marker (QEMU exit $rc${why:+; $why})"
  exit 125
fi
status=${marker#NESTED-EXIT }
say "command exited $status; boot+run $((SECONDS - boot)) s, total $((SECONDS - start)) s"
exit "$status"
