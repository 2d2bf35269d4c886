#!/usr/bin/env bash
# Fetches the Debian kernel that linux-image-amd64 currently depends on, without
# installing it (apt-get download + dpkg-deb -x), and keeps only what the nested
# KVM machine needs: vmlinuz (and the vmlinux inside it, see make_vmlinux) and the
# modules for kvm_amd, veth pairs and netem delays (the remote GPU test's two
# network namespaces) plus their dependencies, decompressed, with the order to
# insmod them in.
#
# Usage: fetch-kernel.sh [CACHE_DIR]     (default: <repo>/.nested, git-ignored)
#   env KERNEL_PKG=linux-image-X-amd64   pins a package instead of resolving it.
# On success prints ONE line on stdout: the kernel directory, which holds
#   vmlinuz, vmlinux (when PVH-bootable), modules/*.ko, modules.load (basenames
#   in insmod order), version, package.
# Cached: a second run with the same candidate does nothing. If the package
# cannot be resolved or downloaded (offline) and a kernel is cached, the cached
# one is used with a warning.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=$(mkdir -p "${1:-$repo/.nested}" && cd "${1:-$repo/.nested}" && pwd)
wanted=(irqbypass ccp kvm kvm-amd veth sch_netem)   # deps of each are added before it
# A kernel cached for another list of modules is unpacked again.
has_wanted() { [[ $(cat "$1/wanted" 2>/dev/null) == "${wanted[*]}" ]]; }

mkdir -p "$cache/kernel"
exec 9>"$cache/kernel/.lock"   # one fetch at a time (ctest -j)
flock 9

log() { echo "fetch-kernel: $*" >&2; }
die() { log "error: $*"; exit 1; }

use_cached() {   # $1: why resolving/downloading failed
  if [[ -f $cache/kernel/current/modules.load ]]; then
    has_wanted "$cache/kernel/current" || log "warning: the cached kernel lacks some of: ${wanted[*]}"
    log "warning: $1; using cached $(readlink "$cache/kernel/current")"
    echo "$cache/kernel/$(readlink "$cache/kernel/current")"
    exit 0
  fi
  die "$1 (and no kernel cached in $cache/kernel)"
}

# vmlinux: the uncompressed ELF inside the bzImage. QEMU boots it directly
# through its PVH entry note (CONFIG_PVH), which skips the kernel's own
# decompression: about 3 s of a ~7 s boot under TCG. Left absent when the
# kernel has no PVH note or the payload cannot be found; run-nested.sh then
# boots vmlinuz.
make_vmlinux() {   # $1: kernel directory holding vmlinuz
  local d=$1 off magic tool
  [[ -f $d/vmlinux || -f $d/vmlinux.none ]] && return 0
  command -v readelf >/dev/null || { log "no readelf: booting the bzImage"; return 0; }
  for magic in '\xfd7zXZ\x00:xz -dc --single-stream' '\x28\xb5\x2f\xfd:zstd -dc' '\x1f\x8b\x08:gzip -dc'; do
    tool=${magic#*:}
    off=$(LC_ALL=C grep -obUaP "${magic%%:*}" "$d/vmlinuz" | head -n 1 | cut -d: -f1) || true
    if [[ -z $off ]] || ! command -v "${tool%% *}" >/dev/null; then continue; fi
    tail -c +$((off + 1)) "$d/vmlinuz" | $tool >"$d/vmlinux.tmp" 2>/dev/null || true
    if [[ $(head -c 4 "$d/vmlinux.tmp") == $'\x7fELF' ]] &&
       readelf -n "$d/vmlinux.tmp" 2>/dev/null | grep -Eq '\(0x00000012\)|PHYS32_ENTRY'; then
      mv "$d/vmlinux.tmp" "$d/vmlinux"
      log "extracted vmlinux (PVH entry) from vmlinuz with ${tool%% *}"
      return 0
    fi
  done
  rm -f "$d/vmlinux.tmp"
  log "no PVH-bootable vmlinux in vmlinuz: booting the bzImage"
  : >"$d/vmlinux.none"
}

candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}'; }

resolve_pkg() {
  if [[ -n ${KERNEL_PKG:-} ]]; then echo "$KERNEL_PKG"; return; fi
  apt-cache depends linux-image-amd64 2>/dev/null |
    awk '$1 == "Depends:" && $2 ~ /^linux-image-/ {print $2; exit}'
}

# Fast path: apt-cache takes seconds here, and its answer can only change when
# the apt lists (or KERNEL_PKG) do, so a resolution newer than the lists is reused.
stamp=$cache/kernel/resolved
if [[ -f $stamp && -f $cache/kernel/current/modules.load ]] && has_wanted "$cache/kernel/current" &&
   [[ $(cat "$stamp") == "${KERNEL_PKG:-} $(readlink "$cache/kernel/current")" &&
   -z $(find /var/lib/apt/lists /etc/apt -newer "$stamp" -print -quit 2>/dev/null) ]]; then
  make_vmlinux "$cache/kernel/current"
  echo "$cache/kernel/$(readlink "$cache/kernel/current")"
  exit 0
fi

pkg=$(resolve_pkg)
if [[ -z $pkg || -z $(candidate "$pkg") ]] && ((EUID == 0)) && [[ -z ${KERNEL_PKG:-} ]]; then
  log "apt-get update (linux-image-amd64 not resolvable from the current lists)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || true
  pkg=$(resolve_pkg)
fi
[[ -n $pkg ]] || use_cached "cannot resolve the dependency of linux-image-amd64 with apt-cache"
ver=$(candidate "$pkg")
[[ -n $ver ]] || use_cached "apt-cache has no candidate for $pkg"

name="${pkg}_${ver}"
dest="$cache/kernel/$name"
if [[ -f $dest/modules.load ]] && has_wanted "$dest"; then
  make_vmlinux "$dest"
  ln -sfn "$name" "$cache/kernel/current"
  echo "${KERNEL_PKG:-} $name" >"$stamp"
  echo "$dest"
  exit 0
fi

command -v busybox >/dev/null || die "busybox missing (apt-get install busybox-static)"
work=$(mktemp -d "$cache/tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
log "downloading $pkg $ver"
# apt-get download runs as _apt when it can; let it write into the work dir.
chmod 777 "$work"
(cd "$work" && apt-get download -q "$pkg=$ver" >&2 2> >(grep -v 'unsandboxed as root' >&2)) ||
  use_cached "apt-get download $pkg=$ver failed"
deb=$(ls "$work"/*.deb)
log "unpacking $(basename "$deb")"
dpkg-deb -x "$deb" "$work/root"
rm -f "$deb"

kver=$(ls "$work/root/lib/modules")
[[ $(wc -w <<<"$kver") == 1 ]] || die "expected one kernel version in $pkg, found: $kver"
mdir="$work/root/lib/modules/$kver"
vmlinuz=$(ls "$work/root/boot/vmlinuz-"*)

# The .deb carries no modules.dep (depmod runs at install time): make one.
if [[ ! -f $mdir/modules.dep ]]; then
  busybox depmod -b "$work/root" "$kver" || die "busybox depmod failed"
fi

# module name (dashes, as modules.dep spells file names) -> path relative to $mdir
declare -A path deps
while IFS= read -r line; do
  file=${line%%:*}
  m=$(basename "$file"); m=${m%%.ko*}
  path[$m]=$file
  deps[$m]=${line#*:}
done <"$mdir/modules.dep"

order=()
declare -A seen
add() {   # depth-first: dependencies first
  local m=$1 d
  [[ -n ${seen[$m]:-} ]] && return
  seen[$m]=1
  if [[ -z ${path[$m]:-} ]]; then
    if grep -Eq "/${m//-/[-_]}\.ko" "$mdir/modules.builtin" 2>/dev/null; then
      log "$m is built into $kver, not needed as a module"; return
    fi
    die "module $m not found in $pkg"
  fi
  for d in ${deps[$m]}; do d=$(basename "$d"); add "${d%%.ko*}"; done
  order+=("$m")
}
for m in "${wanted[@]}"; do add "$m"; done

stage="$work/out"
mkdir -p "$stage/modules"
cp "$vmlinuz" "$stage/vmlinuz"
for m in "${order[@]}"; do
  src="$mdir/${path[$m]}"
  case $src in
    *.ko)     cp "$src" "$stage/modules/$m.ko" ;;
    *.ko.xz)  xz -dc "$src" >"$stage/modules/$m.ko" ;;
    *.ko.zst) zstd -qdc "$src" >"$stage/modules/$m.ko" ;;
    *.ko.gz)  gzip -dc "$src" >"$stage/modules/$m.ko" ;;
    *) die "unknown module format: $src" ;;
  esac
  echo "$m.ko" >>"$stage/modules.load"
done
echo "$kver" >"$stage/version"
echo "$pkg $ver" >"$stage/package"
echo "${wanted[*]}" >"$stage/wanted"
make_vmlinux "$stage"

mkdir -p "$cache/kernel"
rm -rf "$dest"
mv "$stage" "$dest"
ln -sfn "$name" "$cache/kernel/current"
echo "${KERNEL_PKG:-} $name" >"$stamp"
log "kernel $kver ready: $(tr '\n' ' ' <"$dest/modules.load")"
echo "$dest"
