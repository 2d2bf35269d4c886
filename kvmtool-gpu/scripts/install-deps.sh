#!/usr/bin/env bash
# Installs the Debian packages kvmtool-gpu needs to build, test (including the
# nested-KVM runs under QEMU/TCG, tests/nested/) and plot. Idempotent: checks
# what is missing and apt-get installs only that; runs apt-get update only when
# something is missing. nvcc is not a Debian package: it is only reported.
# Usage: bash kvmtool-gpu/scripts/install-deps.sh
set -euo pipefail

packages=(g++ cmake ninja-build ccache libgtest-dev libboost-dev libhugetlbfs-dev libpfm4-dev nlohmann-json3-dev libucx-dev
          qemu-system-x86 busybox-static cpio python3 universal-ctags iproute2)
# Optional extras: installed when the archive has them (checked with apt-cache).
# CPython's own test package for the system python3 (Debian's
# libpython3.X-testsuite): tests/kvm/linux-python.sh runs some of its modules
# natively and as a guest (ctest kvm_linux_python, nested_linux_python).
optional=(python3-matplotlib)
if py_minor=$(/usr/bin/python3 -c 'import sys; print(sys.version_info[1])' 2>/dev/null); then
  optional+=("libpython3.${py_minor}-testsuite")
fi

installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == installed ]]
}
has_candidate() {
  [[ -n "$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}')" ]]
}

# Another apt or dpkg (unattended upgrades, a second set-up) may hold the
# locks: wait for them, up to 10 minutes, instead of failing at once. apt
# waits for dpkg's lock itself (DPkg::Lock::Timeout); the lists lock that
# `apt-get update` takes is retried here.
lock_wait_s=600
apt_get() {
  local t0=$SECONDS err
  while :; do
    if err=$(apt-get -o DPkg::Lock::Timeout=$lock_wait_s "$@" 2>&1 >/dev/null); then
      # (grep finds nothing when every line is debconf's: not a failure)
      grep -v '^debconf: delaying' <<<"$err" >&2 || true
      return 0
    fi
    if grep -qiE 'could not get lock|unable to lock|is held by process' <<<"$err" &&
       ((SECONDS - t0 < lock_wait_s)); then
      echo "wait: another apt/dpkg holds its lock; retrying in 5 s" >&2
      sleep 5
      continue
    fi
    echo "$err" >&2
    return 1
  done
}

missing=()
unknown=()   # optional packages the (possibly stale) apt lists do not know
for p in "${packages[@]}"; do
  if installed "$p"; then echo "ok: $p already installed"; else missing+=("$p"); fi
done
for p in "${optional[@]}"; do
  if installed "$p"; then echo "ok: $p already installed"
  elif has_candidate "$p"; then missing+=("$p")
  else unknown+=("$p"); fi
done

if ((${#missing[@]})); then
  if ((EUID != 0)); then
    echo "error: missing packages (${missing[*]}) and not root: run this script as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  echo "run: apt-get update"
  apt_get update -qq
  for p in "${unknown[@]}"; do
    if has_candidate "$p"; then missing+=("$p"); else echo "skip: $p has no candidate in apt (optional)"; fi
  done
  echo "run: apt-get install ${missing[*]}"
  apt_get install -y -qq --no-install-recommends "${missing[@]}"
  for p in "${missing[@]}"; do
    installed "$p" || { echo "error: $p still not installed" >&2; exit 1; }
    echo "installed: $p"
  done
else
  for p in "${unknown[@]}"; do echo "skip: $p has no candidate in apt (optional)"; done
  echo "ok: nothing to install"
fi

if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "nvcc: found at /usr/local/cuda/bin/nvcc"
elif command -v nvcc >/dev/null 2>&1; then
  echo "nvcc: found at $(command -v nvcc)"
else
  echo "nvcc: not found (not installable from Debian; CUDA guest kernels will not be built)"
fi
