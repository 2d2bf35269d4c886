#!/bin/sh
# The system's own dynamic python3 as a Linux-ABI guest with --root /
# (ctest kvm_linux_python, nested_linux_python): `python3 -c` prints what it
# prints natively, tempfile works in the private TMPDIR, a script reads and
# writes a file in a --share, one uses
# pipes, epoll, /proc/self/fd and a SIGUSR1 handler, one has two shares
# (link, symlink, EXDEV across them) and uses select, and faulthandler reports
# a segmentation fault (its handler on its sigaltstack) before the run ends. The
# start-up times of `python3 -c pass`, natively and as a guest, are printed
# for the log (no threshold). Then CPython's own test modules, natively and
# as a guest (below). Skips (77) where python3 or its standard library is
# missing; CPython's tests are skipped, said so, where its test package is.
# Usage: linux-python.sh KVMTOOL_GPU [PYTHON]
set -u
vmm=$1
py=${2:-/usr/bin/python3}
if ! [ -x "$py" ] || ! "$py" -c pass > /dev/null 2>&1; then
    echo "SKIP: $py does not run here (no python3 or its standard library)"
    exit 77
fi
. "$(dirname "$0")/check-lib.sh"
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
# Two shares at once: link and symlink inside one, rename and link from one
# to the other refused (EXDEV); select over a pipe.
mkdir "$work/second"
cat > "$work/share/mounts.py" <<'PY'
import errno, os, select, sys
here, there = os.path.dirname(os.path.abspath(sys.argv[0])), sys.argv[1]
with open(os.path.join(here, "a.txt"), "w") as f:
    f.write("a")
os.link(os.path.join(here, "a.txt"), os.path.join(here, "a-link.txt"))
os.symlink("a.txt", os.path.join(here, "a-sym"))
with open(os.path.join(here, "a-link.txt")) as f:
    print("link, symlink:", f.read(), os.readlink(os.path.join(here, "a-sym")))
for what, call in (("rename", os.rename), ("link", os.link)):
    try:
        call(os.path.join(here, "a.txt"), os.path.join(there, "moved"))
        print(what, "across: done")
    except OSError as e:
        print(what, "across:", errno.errorcode[e.errno])
r, w = os.pipe()
print("select before:", select.select([r], [w], [], 0) == ([], [w], []))
os.write(w, b"x")
print("select after:", select.select([r], [], [], 1)[0] == [r])
PY
"$vmm" run --guest "$py" --mem 512M --vgpu none --root / --share "$work/share" --share "$work/second:/second" -- \
    "$work/share/mounts.py" /second > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "python3 with two shares: exit 0" [ "$rc" -eq 0 ]
check "python3 with two shares: link and symlink in one" grep -qx "guest: link, symlink: a a.txt" "$work/out"
check "python3 with two shares: rename and link across them EXDEV" \
    sh -c "grep -qx 'guest: rename across: EXDEV' '$work/out' && grep -qx 'guest: link across: EXDEV' '$work/out' && ! [ -e '$work/second/moved' ]"
check "python3 select: a pipe's ends" sh -c "grep -qx 'guest: select before: True' '$work/out' && grep -qx 'guest: select after: True' '$work/out'"
"$vmm" run --guest "$py" --mem 512M --vgpu none --root / -- -X faulthandler -c 'import faulthandler; faulthandler._read_null()' > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "python3 faulthandler: its handler reports the segmentation fault, then the fault ends the run" \
    sh -c "[ $rc -eq 1 ] && grep -q 'Fatal Python error: Segmentation fault' '$work/out' && grep -q 'result: guest-fault' '$work/out'"

# CPython's own tests (Debian's libpython3.11-testsuite), natively and as a
# guest: both must pass, with the same result for every test case. Left out
# of both runs: the cases that start a child process (fork, posix_spawn,
# subprocess: a guest is one process, so they cannot pass there), listed
# below as found by running the modules natively with fork and spawn
# refused. Tests run in one process (no -j: regrtest's workers are child
# processes). CPYTHON_TESTS overrides the modules (the nested machine runs
# a subset: tests/nested/CMakeLists.txt says why).
cpython_tests=${CPYTHON_TESTS:-test_json test_re test_math test_struct test_threading}
if ! "$py" -c 'import test.test_json, test.test_threading' > /dev/null 2>&1; then
    echo "SKIP (CPython's tests): $py has no test package (Debian: libpython3.11-testsuite)"
else
    cat > "$work/share/child-process-tests.txt" <<'LIST'
test.test_json.test_tool.TestTool.*
test.test_re.ReTests.test_regression_gh94675
test.test_struct.StructTest.test_struct_cleans_up_at_runtime_shutdown
test.test_threading.AtexitTests.test_atexit_after_shutdown
test.test_threading.AtexitTests.test_atexit_called_once
test.test_threading.AtexitTests.test_atexit_output
test.test_threading.SubinterpThreadingTests.test_daemon_threads_fatal_error
test.test_threading.ThreadJoinOnShutdown.*
test.test_threading.ThreadTests.test_dummy_thread_after_fork
test.test_threading.ThreadTests.test_finalization_shutdown
test.test_threading.ThreadTests.test_finalize_running_thread
test.test_threading.ThreadTests.test_finalize_with_trace
test.test_threading.ThreadTests.test_fork_at_exit
test.test_threading.ThreadTests.test_import_from_another_thread
test.test_threading.ThreadTests.test_is_alive_after_fork
test.test_threading.ThreadTests.test_join_nondaemon_on_shutdown
test.test_threading.ThreadTests.test_locals_at_exit
test.test_threading.ThreadTests.test_main_thread_after_fork
test.test_threading.ThreadTests.test_main_thread_after_fork_from_nonmain_thread
test.test_threading.ThreadTests.test_main_thread_during_shutdown
test.test_threading.ThreadingExceptionTests.test_print_exception
test.test_threading.ThreadingExceptionTests.test_print_exception_stderr_is_none_1
test.test_threading.ThreadingExceptionTests.test_print_exception_stderr_is_none_2
test.test_threading.ThreadingExceptionTests.test_recursion_limit
LIST
    # "test_x (test.mod.Class.test_x) ... ok": one line per case and its result.
    results() { grep -oE '^test[A-Za-z0-9_]* \([A-Za-z0-9_.]+\) \.\.\. (ok|FAIL|ERROR|skipped|expected failure|unexpected success)' "$1" | sort; }
    # shellcheck disable=SC2086
    t6=$(now_ms)
    (cd "$work" && "$py" -m test -v --ignorefile "$work/share/child-process-tests.txt" $cpython_tests) > "$work/cpython-native" 2>&1
    native_rc=$?
    t7=$(now_ms)
    # shellcheck disable=SC2086
    "$vmm" run --guest "$py" --mem 512M --vgpu none --timeout 0 --root / --share "$work/share" -- \
        -m test -v --ignorefile "$work/share/child-process-tests.txt" $cpython_tests > "$work/cpython-guest" 2>&1
    guest_rc=$?
    t8=$(now_ms)
    sed -n 's/^guest: //p' "$work/cpython-guest" > "$work/cpython-guest-out"
    results "$work/cpython-native" > "$work/cpython-native-results"
    results "$work/cpython-guest-out" > "$work/cpython-guest-results"
    echo "CPython's tests ($cpython_tests): native $(grep -c ' ok$' "$work/cpython-native-results") ok, exit $native_rc, $((t7 - t6)) ms; as a guest $(grep -c ' ok$' "$work/cpython-guest-results") ok, exit $guest_rc, $((t8 - t7)) ms"
    if [ "$native_rc" -ne 0 ]; then
        echo "natively failing (reported, not hidden):"
        grep -E '\.\.\. (FAIL|ERROR)$|^(FAIL|ERROR):' "$work/cpython-native"
        tail -20 "$work/cpython-native"
    fi
    grep -E 'not served|^kvmtool-gpu: (result|error|system calls)' "$work/cpython-guest"
    if [ "$guest_rc" -ne 0 ]; then
        grep -E '\.\.\. (FAIL|ERROR)$' "$work/cpython-guest-out"
        # unittest's reports: from the first "=====" line to "Ran N tests".
        sed -n '/^======/,/^Ran [0-9]/p' "$work/cpython-guest-out" | head -200
        tail -30 "$work/cpython-guest"
    fi
    diff "$work/cpython-native-results" "$work/cpython-guest-results" > "$work/cpython-diff"
    cat "$work/cpython-diff"
    check "CPython's tests natively: exit 0" [ "$native_rc" -eq 0 ]
    check "CPython's tests as a guest: exit 0" [ "$guest_rc" -eq 0 ]
    check "CPython's tests: every case's result as natively ($(wc -l < "$work/cpython-native-results") cases)" \
        sh -c "[ -s '$work/cpython-native-results' ] && ! [ -s '$work/cpython-diff' ]"
fi

# Start-up time of `python3 -c pass` (the VMM's whole run, VM creation included).
t2=$(now_ms); "$py" -c pass; t3=$(now_ms)
t4=$(now_ms); "$vmm" run --guest "$py" --mem 512M --vgpu none --root / --quiet -- -c pass > /dev/null 2>&1; t5=$(now_ms)
echo "python3 -c pass: native $((t3 - t2)) ms, as a guest $((t5 - t4)) ms (the first guest run above: $((t1 - t0)) ms)"

checks_done "python3 guest"
