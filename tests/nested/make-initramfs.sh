#!/usr/bin/env bash
# Builds the initramfs for the nested-KVM QEMU machine (see README.md):
# static busybox (its applet links made at boot), the kvm_amd modules from fetch-kernel.sh,
# an /init, and a payload of files kept at their absolute host paths, plus every
# shared library (and the dynamic loader) that the payload's ELF files need.
#
# Usage: make-initramfs.sh -o OUT.cpio.gz -k KERNEL_DIR [--hugepages N]
#                          [--cmd 'SHELL COMMAND'] [--cwd DIR] [--compress gzip|none]
#                          [--] [PATH...]
#   KERNEL_DIR  the directory fetch-kernel.sh prints (vmlinuz, modules/, modules.load)
#   PATH        a file or directory tree; copied to the same absolute path inside
#               (symlinks given on the command line are followed; inside trees kept)
#   --cmd       baked into /nested/cmd, run by /bin/sh inside (default: a shell
#               report of /dev/kvm); the kernel command line may override it with
#               nested_cmd=<base64 of the command>
#   --hugepages 2 MiB pages to reserve at boot (default 0); kernel command line
#               nested_hugepages=N overrides
#   --cwd       directory the command starts in (created inside; default /)
# /init prints "NESTED-EXIT <rc>" after the command, or "NESTED-ERROR <why>",
# then powers the machine off.
set -euo pipefail

die() { echo "make-initramfs: error: $*" >&2; exit 1; }

out='' kdir='' hugepages=0 cmd='ls -l /dev/kvm' cwd=/ compress=gzip
paths=()
while (($#)); do
  case $1 in
    -o) out=$2; shift 2 ;;
    -k) kdir=$2; shift 2 ;;
    --hugepages) hugepages=$2; shift 2 ;;
    --cmd) cmd=$2; shift 2 ;;
    --cwd) cwd=$2; shift 2 ;;
    --compress) compress=$2; shift 2 ;;
    --) shift; paths+=("$@"); break ;;
    -*) die "unknown option $1" ;;
    *) paths+=("$1"); shift ;;
  esac
done
[[ -n $out ]] || die "-o OUT is required"
[[ -f ${kdir:-}/vmlinuz && -f $kdir/modules.load ]] || die "-k KERNEL_DIR (from fetch-kernel.sh) is required"
[[ $hugepages =~ ^[0-9]+$ ]] || die "--hugepages wants a number, got '$hugepages'"
[[ $cwd == /* ]] || die "--cwd wants an absolute path"
case $compress in gzip|none) ;; *) die "--compress gzip|none" ;; esac
busybox=$(command -v busybox) || die "busybox missing (apt-get install busybox-static)"
ldd "$busybox" >/dev/null 2>&1 && die "$busybox is dynamically linked; install busybox-static"
command -v cpio >/dev/null || die "cpio missing (apt-get install cpio)"

outdir=$(mkdir -p "$(dirname "$out")" && cd "$(dirname "$out")" && pwd)
stage=$(mktemp -d "$outdir/.initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# --- busybox and its applets -------------------------------------------------
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,root,etc,nested/modules}
cp "$busybox" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"   # the other applet links: /init runs busybox --install -s

# --- kvm modules ------------------------------------------------------------------
cp "$kdir"/modules/*.ko "$stage/nested/modules/"
cp "$kdir/modules.load" "$stage/nested/modules.load"

# --- payload at absolute paths, then the libraries its ELF files need ---------------
declare -A libs=()
scan_elf() {   # $1: file; adds what ldd lists to libs[]
  local f=$1 line lib
  [[ $(head -c 4 "$f" 2>/dev/null) == $'\x7fELF' ]] || return 0
  while IFS= read -r line; do
    if [[ $line == *'=> not found'* ]]; then die "$f needs ${line%% =>*} which ldd cannot find"; fi
    if [[ $line =~ =\>\ (/[^ ]+) ]]; then lib=${BASH_REMATCH[1]}
    elif [[ $line =~ ^[[:space:]]*(/[^ ]+)\ \( ]]; then lib=${BASH_REMATCH[1]}
    else continue; fi
    libs[$lib]=1
  done < <(ldd "$f" 2>/dev/null || true)
}
for p in "${paths[@]}"; do
  [[ -e $p ]] || die "no such file or directory: $p"
  abs=$(cd "$(dirname "$p")" && pwd)/$(basename "$p")
  mkdir -p "$stage$(dirname "$abs")"
  cp -RH --preserve=mode,timestamps "$p" "$stage$abs"
  if [[ -d $p ]]; then
    while IFS= read -r -d '' f; do scan_elf "$f"; done < <(find -L "$p" -type f \( -perm /111 -o -name '*.so*' \) -print0)
  else
    scan_elf "$p"
  fi
done
for lib in "${!libs[@]}"; do
  mkdir -p "$stage$(dirname "$lib")"
  cp -L "$lib" "$stage$lib"
done
# Debug sections are most of a debug build's bytes (the VMM: ~78 of 85 MB)
# and nothing inside reads them; the kernel unpacks every byte under TCG.
if command -v strip >/dev/null; then
  while IFS= read -r -d '' f; do
    [[ $(head -c 4 "$f" 2>/dev/null) == $'\x7fELF' ]] && strip --strip-debug "$f" 2>/dev/null || true
  done < <(find "$stage" -type f -size +1M -print0)
fi

# --- configuration and /init ------------------------------------------------------
printf "HUGEPAGES=%s\nCWD='%s'\n" "$hugepages" "${cwd//\'/\'\\\'\'}" >"$stage/nested/config"
printf '%s\n' "$cmd" >"$stage/nested/cmd"
cat >"$stage/init" <<'INIT'
#!/bin/sh
# /init of the nested-KVM machine (written by tests/nested/make-initramfs.sh).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
/bin/busybox --install -s   # applet links (a link per applet; payload files win)
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/hugepages /dev/shm /dev/pts
mount -t hugetlbfs hugetlbfs /dev/hugepages
mount -t tmpfs tmpfs /dev/shm
mount -t devpts devpts /dev/pts

off() { sync; poweroff -f; sleep 2; reboot -f; }

. /nested/config
for arg in $(cat /proc/cmdline); do
  case $arg in
    nested_hugepages=*) HUGEPAGES=${arg#*=} ;;
    nested_cmd=*) echo "${arg#*=}" | base64 -d >/nested/cmd ;;
  esac
done

for m in $(cat /nested/modules.load); do
  insmod /nested/modules/$m || echo "NESTED-WARN insmod $m failed"
done
if [ ! -c /dev/kvm ]; then
  echo "NESTED-ERROR no /dev/kvm"
  dmesg | grep -i -E 'kvm|svm|ccp|irqbypass'
  off
fi

t_kvm=$(cut -d' ' -f1 /proc/uptime)
if [ "$HUGEPAGES" -gt 0 ]; then
  echo "$HUGEPAGES" >/proc/sys/vm/nr_hugepages
fi
echo "NESTED-INFO kernel $(uname -r); /dev/kvm ready at $t_kvm s;" \
     "hugepages $(cat /proc/sys/vm/nr_hugepages)/$HUGEPAGES of 2 MiB at $(cut -d' ' -f1 /proc/uptime) s;" \
     "$(grep MemTotal /proc/meminfo | tr -s ' ')"

mkdir -p "$CWD" && cd "$CWD"
/bin/sh /nested/cmd
rc=$?
echo
echo "NESTED-EXIT $rc"
off
INIT
chmod 755 "$stage/init"

# --- archive ------------------------------------------------------------------------
tmp="$out.tmp"
if [[ $compress == gzip ]]; then
  (cd "$stage" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$tmp"
else
  (cd "$stage" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet) >"$tmp"
fi
mv "$tmp" "$out"
echo "make-initramfs: $out ($(du -h "$out" | cut -f1), ${#paths[@]} path(s), ${#libs[@]} librar(ies))" >&2
