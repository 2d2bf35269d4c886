#!/bin/sh
# Builds the multi-file guest (tests/guest_build) and checks what came out:
# a static x86-64 Linux executable (no interpreter, no dynamic section) that,
# started natively rather than by kvmtool-gpu, prints one line saying so
# and exits 224 (the runtime's bad-boot-info code). POSIX sh.
# Usage: check_guest_build.sh CMAKE BUILD_DIR ELF
cmake=$1 build=$2 elf=$3
fail() { echo "FAIL: $*"; exit 1; }
"$cmake" --build "$build" --target guest_multifile || fail "guest_multifile did not build"
[ -f "$elf" ] || fail "$elf missing after the build"
hdr=$(readelf -h "$elf") || fail "readelf -h $elf"
echo "$hdr" | grep -q 'Machine:.*X86-64' || fail "$elf is not x86-64"
echo "$hdr" | grep -Eq 'Type:.*(EXEC|DYN)' || fail "$elf is not an executable"
readelf -l "$elf" | grep -q INTERP && fail "$elf asks for a dynamic loader (not static)"
readelf -d "$elf" | grep -q NEEDED && fail "$elf needs shared libraries"
out=$("$elf" 2>&1)
rc=$?
echo "native run: exit $rc: $out"
[ "$rc" = 224 ] || fail "native run exited $rc, want 224"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "native run printed more than one line"
printf '%s\n' "$out" | grep -q 'not running under kvmtool-gpu' || fail "native run did not say why it stopped"
echo "PASS: $elf is a static Linux executable and refuses to run outside kvmtool-gpu"
