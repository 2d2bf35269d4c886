#!/bin/sh
# A Linux-ABI guest's working directory through the CLI (run by
# linux-guests.sh, and alone): cwd_check starts where --cwd says, or by
# default in the shell's current directory where the guest sees it at the
# same path (a share at its own path, --root /), else in "/"; it opens
# files by relative paths, chdir()s, fchdir()s and getcwd()s inside the
# guest; the start-up line names the cwd; a --cwd that names no directory
# in the guest's mounts is refused before the VM starts, with one line.
# Usage: linux-cwd.sh KVMTOOL_GPU GUEST_DIR
set -u
vmm=$1
dir=$2
. "$(dirname "$0")/check-lib.sh"
share=$work/share
mkdir -p "$share/sub"
printf 'cwd input\n' > "$share/input.txt"
printf 'inner\n' > "$share/sub/inner.txt"
cwd_run() { # shell directory, expected start, rw|ro, CLI arguments...: cwd_check run from that directory
    from=$1 expect=$2 mode=$3; shift 3
    rm -f "$share/renamed.txt"
    (cd "$from" && exec timeout 120 "$vmm" run --guest "$dir/cwd_check" --mem 128M --vgpu none "$@" -- "$expect" "$mode") \
        > "$work/out" 2>&1
    rc=$?
    cat "$work/out"
}
passed() { [ "$rc" -eq 0 ] && has "guest: cwd_check passed" && has "; cwd $1;"; }

# The share at "/" (no root): the shell's directory is not in the guest: "/".
cwd_run "$share" / rw --share "$share"
check "cwd default with a share at /: starts in /, relative paths, chdir, fchdir, getcwd" passed /
check "cwd_check rw: a file made in sub, renamed to ../ (the share's root)" grep -qx "made in sub" "$share/renamed.txt"

# --cwd: anywhere in the mounts.
cwd_run "$work" /work rw --share "$share:/work" --cwd /work
check "--cwd /work with the share at /work" passed /work
cwd_run "$work" /work rw --share "$share:/work" --cwd /work/sub/..
check "--cwd /work/sub/.. is /work" passed /work

# Default: the shell's directory, where the share is mounted at its own path.
cwd_run "$share" "$share" rw --share "$share:$share"
check "cwd default: the shell's directory inside a share at its own path" passed "$share"
# ... and with --root / (read-only: writes get EROFS).
cwd_run "$share" "$share" ro --root /
check "cwd default with --root /: the shell's directory, read-only" passed "$share"

refused_before_start() { # status 2, one error line holding $line, no VM started
    [ "$rc" -eq 2 ] && [ "$(grep -c error "$work/out")" -eq 1 ] && grep -qF -- "$line" "$work/out" &&
        ! grep -q 'vCPU backend' "$work/out"
}
refused() { # description, expected text, CLI arguments...
    what=$1 line=$2; shift 2
    "$vmm" run --vgpu none --guest "$dir/cwd_check" "$@" > "$work/out" 2>&1
    rc=$?
    cat "$work/out"
    check "$what: refused with status 2 and one line" refused_before_start
}
refused "--cwd naming nothing" "--cwd /work/none: No such file or directory in the guest's mounts" --share "$share:/work" --cwd /work/none
refused "--cwd naming a file" "--cwd /work/input.txt: not a directory" --share "$share:/work" --cwd /work/input.txt
refused "--cwd relative" "--cwd work: not an absolute guest path" --share "$share:/work" --cwd work
refused "--cwd without files" "--cwd /work: the guest has no files" --cwd /work
"$vmm" run --help > "$work/out" 2>&1
check "run --help describes --cwd" has "--cwd GUEST_PATH"

checks_done cwd
