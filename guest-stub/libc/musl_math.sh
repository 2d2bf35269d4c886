#!/usr/bin/env bash
# Builds the guest's math library from musl's libc.a (Debian's musl-dev):
# the objects defining each requested function and everything they pull in
# from libc.a, kept only if they need nothing the guest lacks. A member may
# need only other taken members, the guest runtime's memcpy/memset/memmove
# and the guest C library's __stack_chk_fail; the only thread-local access
# it may make is the stack-protector canary at %fs:0x28 (Debian builds musl
# with -fstack-protector-strong; the VMM points FS at the boot info page, so
# the canary is the boot's random seed). errno and other TLS are refused.
# Functions that fail this are left out and named.
# Usage: musl_math.sh LIBC_A OUT_ARCHIVE FUNCTION...
set -euo pipefail
libc=$1 out=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
ar x "$libc"
# symbol -> member (first definition wins, as the linker's archive search).
nm -A --defined-only "$libc" 2>/dev/null |
  awk '$2 ~ /^[TDRBVW]$/ { split($1, a, ":"); if (!($3 in d)) { d[$3] = a[2]; print $3, a[2] } }' >defs.txt
allowed=" memcpy memset memmove _GLOBAL_OFFSET_TABLE_ __stack_chk_fail "
declare -A taken=()
kept=() dropped=()
for fn in "$@"; do
  declare -A closure=()
  queue=("$fn") bad=""
  while ((${#queue[@]})) && [ -z "$bad" ]; do
    sym=${queue[0]} queue=("${queue[@]:1}")
    case "$allowed" in *" $sym "*) continue ;; esac
    member=$(awk -v s="$sym" '$1 == s { print $2; exit }' defs.txt)
    if [ -z "$member" ]; then bad="needs $sym, which libc.a lacks"; break; fi
    [ -n "${closure[$member]:-}" ] && continue
    closure[$member]=1
    case "$member" in __errno_location.lo | syscall*.lo)
      bad="needs $sym ($member: TLS or system calls)"; break ;;
    esac
    if objdump -d "$member" | grep '%fs' | grep -vq '%fs:0x28,'; then bad="$member uses TLS (%fs)"; break; fi
    for u in $(nm -u "$member" | awk '{ print $2 }'); do queue+=("$u"); done
  done
  if [ -n "$bad" ]; then
    dropped+=("$fn ($bad)")
  else
    kept+=("$fn")
    for m in "${!closure[@]}"; do taken[$m]=1; done
  fi
  unset closure
done
rm -f "$out"
ar rcs "$out" $(printf '%s\n' "${!taken[@]}" | sort)
echo "musl math: ${#kept[@]} functions, ${#taken[@]} objects from $libc"
((${#dropped[@]})) && printf 'musl math: left out %s\n' "${dropped[@]}"
exit 0
