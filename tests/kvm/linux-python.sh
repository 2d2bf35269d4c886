#!/bin/sh
# The system's own dynamic python3 as a Linux-ABI guest with --root /
# (ctest kvm_linux_python, nested_linux_python): `python3 -c` prints what it
# prints natively, tempfile works in the private TMPDIR, a script reads and
# writes a file in a --share, one uses
# pipes, epoll, /proc/self/fd and a SIGUSR1 handler, and faulthandler reports
# a segmentation fault (its handler on its sigaltstack) before the run ends. The
# start-up times of `python3 -c pass`, natively and as a guest, are printed
# for the log (no threshold). Skips (77) where python3 or its standard
# library is missing.
# Usage: linux-python.sh KVMTOOL_GPU [PYTHON]
set -u
vmm=$1
py=${2:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! [ -x "$py" ] || ! "$py" -c pass > /dev/null 2>&1; then
    echo "SKIP: $py does not run here (no python3 or its standard library)"
    exit 77
fi
failures=0
check() {
    what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
# Milliseconds from /proc/uptime (busybox's date has no %N).
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

native=$("$py" -c 'import sys; print(6 * 7, sys.prefix)')
t0=$(now_ms)
"$vmm" run --guest "$py" --mem 512M --vgpu none --root / -- -c 'import sys; print(6 * 7, sys.prefix)' > "$work/out" 2>&1
rc=$?
t1=$(now_ms)
cat "$work/out"
check "python3 -c with --root /: exit 0" [ "$rc" -eq 0 ]
check "python3 -c with --root /: prints '$native' as natively" grep -qxF "guest: $native" "$work/out"

# tempfile needs a writable temporary directory: with --root / the guest's
# TMPDIR is a private one.
"$vmm" run --guest "$py" --mem 512M --vgpu none --root / -- -c 'import tempfile, os; fd, p = tempfile.mkstemp(); os.write(fd, b"t"); print("tmp:", os.path.dirname(p) == os.environ["TMPDIR"] == os.environ["HOME"], os.path.getsize(p))' > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "python3 tempfile in the private TMPDIR: exit 0" [ "$rc" -eq 0 ]
check "python3 tempfile in the private TMPDIR (also HOME): wrote one byte" grep -qx "guest: tmp: True 1" "$work/out"

mkdir "$work/share"
echo "from the host" > "$work/share/in.txt"
cat > "$work/share/rw.py" <<'PY'
import os, sys
d = os.path.dirname(os.path.abspath(sys.argv[0]))
with open(os.path.join(d, "in.txt")) as f:
    text = f.read().strip()
with open(os.path.join(d, "out.txt"), "w") as f:
    f.write(text.upper() + "\n")
print("listed:", sorted(os.listdir(d)))
PY
"$vmm" run --guest "$py" --mem 512M --vgpu none --root / --share "$work/share" -- "$work/share/rw.py" > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "python3 script in a share: exit 0" [ "$rc" -eq 0 ]
check "python3 script in a share: wrote out.txt" grep -qx "FROM THE HOST" "$work/share/out.txt"

cat > "$work/share/events.py" <<'PY'
import os, select, signal
r, w = os.pipe()
ep = select.epoll()
ep.register(r, select.EPOLLIN)
print("epoll before:", ep.poll(0.01))
os.write(w, b"x")
print("epoll after:", [(fd == r, ev) for fd, ev in ep.poll(1)])
print("fds listed:", str(r) in os.listdir("/proc/self/fd"), os.readlink("/proc/self/fd/%d" % r).startswith("pipe:"))
seen = []
signal.signal(signal.SIGUSR1, lambda s, f: seen.append(s))
os.kill(os.getpid(), signal.SIGUSR1)
print("signal handled:", seen == [signal.SIGUSR1])
PY
"$py" "$work/share/events.py" > "$work/native" 2>&1
"$vmm" run --guest "$py" --mem 512M --vgpu none --root / --share "$work/share" -- "$work/share/events.py" > "$work/out" 2>&1
rc=$?
cat "$work/out"
sed -n 's/^guest: //p' "$work/out" > "$work/guest"
check "python3 pipes, epoll, /proc/self/fd, SIGUSR1: exit 0, the same output as natively" sh -c "[ $rc -eq 0 ] && cmp '$work/native' '$work/guest'"
"$vmm" run --guest "$py" --mem 512M --vgpu none --root / -- -X faulthandler -c 'import faulthandler; faulthandler._read_null()' > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "python3 faulthandler: its handler reports the segmentation fault, then the fault ends the run" \
    sh -c "[ $rc -eq 1 ] && grep -q 'Fatal Python error: Segmentation fault' '$work/out' && grep -q 'result: guest-fault' '$work/out'"

# Start-up time of `python3 -c pass` (the VMM's whole run, VM creation included).
t2=$(now_ms); "$py" -c pass; t3=$(now_ms)
t4=$(now_ms); "$vmm" run --guest "$py" --mem 512M --vgpu none --root / --quiet -- -c pass > /dev/null 2>&1; t5=$(now_ms)
echo "python3 -c pass: native $((t3 - t2)) ms, as a guest $((t5 - t4)) ms (the first guest run above: $((t1 - t0)) ms)"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all python3 guest checks passed"
