#!/bin/sh
# Linux-ABI guests through the CLI (ctest kvm_linux_guests): static and
# static-pie C++ programs built by the system g++ (tests/kvm/CMakeLists.txt)
# read and write files in a --share, fail to leave it, pass their arguments
# and exit code through; a read-only share refuses writes with EROFS; a
# dynamic executable, a non-x86-64 ELF and a truncated one are refused with
# one line; a dynamic executable runs with --root / (ld.so, libstdc++,
# exceptions, a thread, dlopen, /dev/stdout by path) as natively and is
# refused without a root; --stdio raw (cat and sh from the root, the
# shell's streams byte for byte, the exit code as status); threads (thread_check: pthreads, futexes, exit_group from a
# thread, the main thread exiting first, a faulting thread, the thread
# limit, hostile clone/futex values); aliases (alias_check); ring 3 doing
# what it may not (hostile_check); pipes, eventfds, poll, epoll,
# /proc/self/fd and signal handlers for the guest's own faults and kill
# (abi_check); the XSAVE state (xsave_check: AVX enabled on every thread,
# YMM registers kept across a handler, Linux's XSAVE frames and their
# checks; where the host CPU has AVX the guest must have it); the file window (file_map_check: libraries and root files
# mapped, private writes private, SIGSEGV for a write to a read-only
# mapping, the slot cap); the working directory (linux-cwd.sh); a console flood (one write is cut to
# 64 KiB, the output stops at the console's limit, --timeout ends an endless
# one); the system-call round trip is measured and printed.
# Usage: linux-guests.sh KVMTOOL_GPU GUEST_DIR
set -u
vmm=$1
dir=$2
. "$(dirname "$0")/check-lib.sh"

for prog in cxx_check cxx_check_pie; do
    share=$work/$prog
    mkdir -p "$share/sub"
    printf 'alpha beta\ngamma\n' > "$share/input.txt"
    echo outside > "$work/outside.txt"
    ln -s ../outside.txt "$share/link_out"
    ln -s "$work/outside.txt" "$share/abs_link"
    "$vmm" run --guest "$dir/$prog" --mem 128M --vgpu none --share "$share" -- rw 7 > "$work/out" 2>&1
    rc=$?
    cat "$work/out"
    check "$prog: CLI status 1 for a guest exit code other than 0" [ "$rc" -eq 1 ]
    check "$prog: exit code 7 propagated" has "result: guest-exit, exit code 7"
    check "$prog: iostream and argv[0]" has "guest: iostream ok, argv[0] $prog"
    check "$prog: exception caught" has "guest: exception caught: boom"
    check "$prog: heap (brk, mmap, mremap)" has "guest: heap ok: 12288"
    check "$prog: read the share's input" has "guest: input: 2 lines: alpha beta;gamma;"
    for p in ../outside.txt /../outside.txt sub/../../outside.txt link_out abs_link; do
        check "$prog: $p stays inside the share" has "guest: escape $p: ENOENT"
    done
    check "$prog: /proc/self/exe is the guest's own program" has "guest: escape /proc/self/exe: inside"
    check "$prog: wrote output.txt in the share" grep -qx "processed 2 lines" "$share/output.txt"
    check "$prog: no failure inside the guest" sh -c "! grep -q FAILED '$work/out'"
    check "$prog: system calls counted" has "kvmtool-gpu: system calls: "

    rm -f "$share/output.txt"
    "$vmm" run --guest "$dir/$prog" --mem 128M --vgpu none --share "$share:ro" -- ro 0 > "$work/out" 2>&1
    rc=$?
    cat "$work/out"
    check "$prog: read-only share: EROFS, exit 0" sh -c "[ $rc -eq 0 ] && grep -q 'write in a read-only share: EROFS' '$work/out'"
    check "$prog: read-only share unchanged" [ ! -e "$share/output.txt" ]
done

# The vDSO: clock reads make no system call; with --no-vdso each is one.
"$vmm" run --guest "$dir/clock_check" --mem 128M --vgpu none -- 20000 > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "clock_check: vDSO clocks agree with the system calls" [ "$rc" -eq 0 ]
clock_calls() { sed -n 's/.*[(,] *clock_gettime \([0-9]*\).*/\1/p' "$work/out"; }
check "clock_check: 20000 clock reads, fewer than 100 system calls" [ "$(clock_calls)" -lt 100 ]
"$vmm" run --guest "$dir/clock_check" --mem 128M --vgpu none --no-vdso -- 20000 no-vdso > "$work/out" 2>&1
rc=$?
tail -3 "$work/out"
check "clock_check --no-vdso: clocks still agree" [ "$rc" -eq 0 ]
check "clock_check --no-vdso: every clock read is a system call" [ "$(clock_calls)" -gt 20000 ]

# A console flood: bounded per call and in all; the watchdog still ends an endless one.
"$vmm" run --guest "$dir/console_flood" --mem 128M --vgpu none > "$work/out" 2>&1
rc=$?
grep -v '^guest: $' "$work/out"
check "console_flood: one 8 MiB write came back after 64 KiB" has "console_flood: one write took 65536 bytes"
check "console_flood: the output stops at the console's limit, with one notice" \
    sh -c "[ $rc -eq 0 ] && [ \$(grep -c 'reached its limit' '$work/out') -eq 1 ] && [ \$(wc -c < '$work/out') -lt 20000000 ]"
timeout 120 "$vmm" run --guest "$dir/console_flood" --mem 128M --vgpu none --timeout 1 -- forever > "$work/out" 2>&1
grep -v '^guest: $' "$work/out"
check "console_flood forever: --timeout 1 ends it" has "result: timeout"

refused() { # description, expected line, CLI arguments...
    what=$1 line=$2; shift 2
    "$vmm" run --vgpu none "$@" > "$work/out" 2>&1
    rc=$?
    cat "$work/out"
    check "$what: refused with status 2 and one line" sh -c "[ $rc -eq 2 ] && [ \$(grep -c error '$work/out') -eq 1 ] && grep -qF -- '$line' '$work/out'"
}
refused "dynamic executable without a root" "needs --root (e.g. --root /)" --guest "$dir/dynamic_check"
refused "root that does not exist" "--root $work/none" --guest "$dir/dyn_check" --root "$work/none"
refused "--stdio raw for several VMs" "streams to one guest: not with --vms" --guest "$dir/dyn_check" --stdio raw --vms 2
refused "--stdio of no kind" "expected console or raw" --guest "$dir/dyn_check" --stdio tty

# Dynamic executables: the interpreter and libraries from --root /, the
# output compared with the native run's (through a pipe, as the console is one).
# Without a /dev/stdout link on this machine (the nested machine's devtmpfs
# has none; the native run then creates a plain file of that name) the
# native output lacks its line: compare the others.
skip_native='^write to the root'
[ -e /dev/stdout ] || skip_native='^(write to the root|/dev/stdout:)'
"$dir/dyn_check" "$dir/dyn_plugin.so" | cat > "$work/native"
"$vmm" run --guest "$dir/dyn_check" --mem 256M --vgpu none --root / -- "$dir/dyn_plugin.so" root-write > "$work/out" 2>&1
rc=$?
cat "$work/out"
sed -n 's/^guest: //p' "$work/out" | grep -Ev "$skip_native" > "$work/guest"
grep -Ev "$skip_native" "$work/native" > "$work/native.cmp"
check "dyn_check: exit 0 with --root /" [ "$rc" -eq 0 ]
check "dyn_check: the same output as natively" cmp "$work/native.cmp" "$work/guest"
check "dyn_check: /dev/stdout by path, then done" sh -c "grep -qx 'guest: /dev/stdout: written by path' '$work/out' && grep -qx 'guest: done' '$work/out'"
check "dyn_check: a write to the root gets EROFS" has "guest: write to the root: EROFS"
# --stdio raw: this shell's streams are the guest's own, byte for byte
# (control bytes and NULs too); the VMM's lines go to stderr, its status is
# the guest's exit code. stdin from a file, then from a pipe.
if [ -x /bin/cat ] && [ -x /bin/sh ]; then
printf 'one\n\033[2Jtwo\000three' > "$work/stdin.bin"
"$vmm" run --stdio raw --guest /bin/cat --mem 256M --vgpu none --root / < "$work/stdin.bin" > "$work/raw.out" 2> "$work/raw.err"
rc=$?
cat "$work/raw.err"
check "--stdio raw: cat copies a file on stdin to stdout unchanged" cmp "$work/stdin.bin" "$work/raw.out"
check "--stdio raw: the VMM's lines on stderr" grep -q 'kvmtool-gpu: result: guest-exit, exit code 0' "$work/raw.err"
check "--stdio raw: status 0" [ "$rc" -eq 0 ]
printf 'through a pipe' | "$vmm" run --stdio raw --guest /bin/cat --mem 256M --vgpu none --root / 2> "$work/raw.err" | cat > "$work/raw.out"
check "--stdio raw: cat copies a pipe" sh -c "[ \"\$(cat '$work/raw.out')\" = 'through a pipe' ]"
"$vmm" run --stdio raw --guest /bin/sh --mem 256M --vgpu none --root / -- -c 'echo out; echo err >&2; exit 7' \
    < /dev/null > "$work/raw.out" 2> "$work/raw.err"
rc=$?
cat "$work/raw.err"
check "--stdio raw: the guest's exit code is the status" [ "$rc" -eq 7 ]
check "--stdio raw: stdout holds the guest's line alone" sh -c "[ \"\$(cat '$work/raw.out')\" = out ]"
check "--stdio raw: stderr the guest's line" grep -qx err "$work/raw.err"
"$vmm" run --stdio raw --quiet --guest /bin/sh --mem 256M --vgpu none --root / -- -c 'echo out; echo err >&2' \
    < /dev/null > "$work/raw.out" 2> "$work/raw.err"
cat "$work/raw.err"
check "--stdio raw --quiet: stdout the guest's, stderr the guest's and the result line alone" sh -c \
    "[ \"\$(cat '$work/raw.out')\" = out ] && [ \$(wc -l < '$work/raw.err') -eq 2 ] && grep -qx err '$work/raw.err' && grep -q '^kvmtool-gpu: result: guest-exit, exit code 0' '$work/raw.err'"
fi
# The file window: libraries and root files mapped, not copied (file_map_check).
printf 'file window contents 0123456789\n' > "$work/mapped.txt"
"$vmm" run --guest "$dir/file_map_check" --mem 256M --vgpu none --root / -- "$work/mapped.txt" > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "file_map_check: exit 0" [ "$rc" -eq 0 ]
check "file_map_check: libc in the file window" has "guest: libc mapped in the file window"
check "file_map_check: private writes stay private" has "guest: private writes stay private"
check "file_map_check: past the slot cap, copied" has "guest: slot cap: later mappings copied into RAM"
check "file_map_check: SIGSEGV handler for a read-only mapping's write" has "guest: SIGSEGV for a write to a read-only file mapping"
check "file_map_check: the file unchanged" grep -qx 'file window contents 0123456789' "$work/mapped.txt"
"$vmm" run --guest "$dir/file_map_check" --mem 256M --vgpu none --root / -- "$work/mapped.txt" crash > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "file_map_check crash: a guest fault, not a VMM crash" sh -c "[ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q 'result: guest-fault' '$work/out' && grep -q 'write of 1 bytes at 0x.* in the file window (not allowed by its protection)' '$work/out'"
# The same program with a root of its own: a directory holding only the
# loader and libraries it needs (ldd), and the plugin.
sysroot=$work/sysroot
if command -v ldd > /dev/null; then
for lib in $(ldd "$dir/dyn_check" "$dir/dyn_plugin.so" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' | sort -u); do
    mkdir -p "$sysroot$(dirname "$lib")" && cp -L "$lib" "$sysroot$lib"
done
cp "$dir/dyn_plugin.so" "$sysroot/plugin.so"
"$vmm" run --guest "$dir/dyn_check" --mem 256M --vgpu none --root "$sysroot" -- /plugin.so > "$work/out" 2>&1
rc=$?
tail -3 "$work/out"
check "dyn_check: a root of its own (ldd's libraries only)" sh -c "[ $rc -eq 0 ] && grep -q 'guest: plugin: loaded' '$work/out'"
fi
"$vmm" run --guest "$dir/dyn_check" --mem 256M --vgpu none --root "$work/cxx_check" -- /plugin.so > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "dyn_check: a root without its interpreter: refused, named" sh -c "[ $rc -eq 2 ] && grep -q 'interpreter /lib64/ld-linux-x86-64.so.2: No such file' '$work/out'"

cp "$dir/syscall_loop" "$work/not_x86"
printf '\050\000' | dd of="$work/not_x86" bs=1 seek=18 conv=notrunc 2>/dev/null # e_machine = ARM
refused "non-x86-64 ELF" "not an x86-64 image" --guest "$work/not_x86"
head -c 100 "$dir/syscall_loop" > "$work/truncated"
refused "truncated ELF" "guest image refused" --guest "$work/truncated"
refused "share that does not exist" "--share $work/none" --guest "$dir/syscall_loop" --share "$work/none"

# Threads: each a vCPU; the checks inside the guest, then the ways a thread ends the process.
thread_run() { # mode, extra CLI arguments...
    mode=$1; shift
    timeout 120 "$vmm" run --guest "$dir/thread_check" --mem 128M --vgpu none "$@" -- "$mode" > "$work/out" 2>&1
    rc=$?
    cat "$work/out"
}
thread_run all
check "thread_check: TLS, tids, mutex, condvar, 200 threads, early exit, hostile values" \
    sh -c "[ $rc -eq 0 ] && grep -q 'guest: thread_check passed' '$work/out'"
check "thread_check: clone3 answered ENOSYS, clone served" sh -c "grep -q 'clone3 ' '$work/out' && grep -q ' clone ' '$work/out'"
thread_run exit-group
check "thread_check exit-group: exit(5) in a thread ends the process with 5" has "result: guest-exit, exit code 5"
thread_run main-exit
check "thread_check main-exit: the process lives on after main's pthread_exit" \
    sh -c "[ $rc -eq 0 ] && grep -q 'guest: worker after main' '$work/out'"
thread_run fault
check "thread_check fault: a thread's page fault ends the VM, named" \
    sh -c "[ $rc -eq 1 ] && grep -q 'accessing 0x8.*(thread 2)' '$work/out' && grep -q 'result: guest-fault' '$work/out'"
thread_run limit --max-threads 4
check "thread_check limit: --max-threads 4 gives EAGAIN at the fourth, one log line" \
    sh -c "[ $rc -eq 0 ] && grep -q 'guest: limit: 3 threads started, then EAGAIN' '$work/out' && [ \$(grep -c 'thread limit reached' '$work/out') -eq 1 ]"
thread_run parallel
check "thread_check parallel: timed (printed for the log)" has "guest: parallel: one spinning thread"
# The time-out ends a run whose first thread waits in pthread_join while another spins (about 60 s of work).
start=$(date +%s)
timeout 120 "$vmm" run --guest "$dir/thread_check" --mem 128M --vgpu none --timeout 1 -- parallel 100000000000 > "$work/out" 2>&1
took=$(( $(date +%s) - start ))
cat "$work/out"
# (the watchdog's result is what is checked; the time is printed, not judged: CI's machines vary)
check "thread_check: --timeout 1 stops a threaded guest (took ${took} s)" \
    sh -c "grep -q 'result: timeout' '$work/out'"

# Aliases (KVMGPU_LINUX_SYS_ALIAS): second names for the guest's RAM, as managed memory uses them.
timeout 120 "$vmm" run --guest "$dir/alias_check" --mem 128M --vgpu none > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "alias_check: both names, a running thread, write(2) through an alias, hostile values" \
    sh -c "[ $rc -eq 0 ] && grep -q 'guest: alias_check passed' '$work/out' && grep -q 'guest: written from an alias' '$work/out'"

# Ring 3 doing what it must not (hostile_check): each run ends as stated, never in a triple fault.
hostile() { # mode, extra guest arguments...
    mode=$1; shift
    timeout 120 "$vmm" run --guest "$dir/hostile_check" --mem 128M --vgpu none -- "$mode" "$@" > "$work/out" 2>&1
    rc=$?
    cat "$work/out"
}
fault_says() { # description, mode, pattern: a clean guest fault whose line matches
    what=$1 mode=$2 pattern=$3
    hostile "$mode"
    check "hostile_check $mode: $what" sh -c "[ $rc -eq 1 ] && grep -q 'result: guest-fault' '$work/out' && grep -qE -- '$pattern' '$work/out' && ! grep -q 'still running' '$work/out'"
}
hostile flags
check "hostile_check flags: RFLAGS after a system call: IOPL 0, IF set, NT dropped" sh -c "[ $rc -eq 0 ] && ! grep -q FAILED '$work/out'"
hostile vmm-pages
check "hostile_check vmm-pages: EFAULT for the VMM's pages; boot info and vDSO readable" sh -c "[ $rc -eq 0 ] && ! grep -q FAILED '$work/out'"
fault_says "a store into the page tables faults" write-tables '#PF.*accessing 0x3008 \(write, not present\)'
fault_says "a store into the vDSO faults" write-vdso '#PF.*\(write, protection\)'
fault_says "a jump to the system-call stub is a clean fault" stub '#(PF|GP)'
fault_says "cli is #GP at IOPL 0" cli '#GP.*CLI'
fault_says "sti is #GP at IOPL 0" sti '#GP.*STI'
fault_says "out to port 0x80 is refused" out '#GP|has no ports'
fault_says "in from port 0x80 is refused" in '#GP|has no ports'
fault_says "the exit port from ring 3 is refused, not an exit" exit-port '#GP|has no ports'
fault_says "a non-canonical RCX is not returned to" noncanonical 'not a canonical user address'
fault_says "TF and RSP 0 at a syscall: a clean fault" tf-bad-rsp 'guest fault'
hostile cr3-thread
check "hostile_check cr3-thread: the request is refused on thread 2's own vCPU" \
    sh -c "grep -q 'result: bad-cpu-request' '$work/out' && grep -q 'CR3 = 0x1001.*(thread 2)' '$work/out'"
hostile random 200000
check "hostile_check random: random system calls end in an exit or a clean fault" \
    sh -c "grep -qE 'result: (guest-exit|guest-fault)' '$work/out' && ! grep -q 'triple' '$work/out'"

# Pipes, eventfds, poll, epoll, /proc/self/fd; signals for the guest's own faults and kill (abi_check).
abi() { # mode, extra CLI arguments...
    mode=$1; shift
    timeout 120 "$vmm" run --guest "$dir/abi_check" --mem 128M --vgpu none "$@" -- "$mode" > "$work/out" 2>&1
    rc=$?
    cat "$work/out"
}
abi events
check "abi_check events: pipes, eventfds, poll, epoll, a blocked read and epoll_wait woken, /proc/self/fd" \
    sh -c "[ $rc -eq 0 ] && grep -q 'guest: events: pipes, eventfds, poll and epoll ok' '$work/out'"
abi signals
check "abi_check signals: SIGSEGV on a sigaltstack, SIGILL, SIGTRAP, SIGFPE, raise and kill; registers back" \
    sh -c "[ $rc -eq 0 ] && grep -q 'guest: signals: handlers ran and the interrupted code went on' '$work/out'"
abi segv-default
check "abi_check segv-default: the handler ran once, then the same fault ended the run, named" \
    sh -c "[ $rc -eq 1 ] && grep -q 'guest: segv handler ran' '$work/out' && grep -q '#PF.*accessing 0x18' '$work/out' && ! grep -q 'guest: FAILED' '$work/out'"
abi kill-default
check "abi_check kill-default: SIGTERM without a handler ends the run, named" \
    sh -c "[ $rc -eq 1 ] && grep -q 'guest ended by SIGTERM' '$work/out' && ! grep -q 'guest: FAILED' '$work/out'"
start=$(date +%s)
abi poll-forever --timeout 1
took=$(( $(date +%s) - start ))
check "abi_check poll-forever: --timeout 1 ends a guest blocked in poll (took ${took} s)" \
    sh -c "grep -q 'result: timeout' '$work/out'"

# XSAVE (xsave_check): required where this machine's CPU shows AVX, else its SKIP line names why not.
timeout 120 "$vmm" run --guest "$dir/xsave_check" --mem 128M --vgpu none > "$work/out" 2>&1
rc=$?
cat "$work/out"
if grep -q 'this KVM offers guests no XSAVE' "$work/out"; then
    check "xsave_check: this KVM offers guests no XSAVE: the VMM says so and the guest sees none" \
        sh -c "[ $rc -eq 0 ] && grep -q 'guest: xsave: SKIP' '$work/out'"
elif grep -qw avx /proc/cpuinfo; then
    check "xsave_check: AVX enabled on both threads, YMM kept across a handler, XSAVE frames as Linux's" \
        sh -c "[ $rc -eq 0 ] && grep -q 'guest: xsave: ok' '$work/out'"
else
    check "xsave_check: this CPU has no AVX: the guest says so" sh -c "[ $rc -eq 0 ] && grep -q 'guest: xsave: SKIP' '$work/out'"
fi

# The working directory: --cwd, its default, chdir, fchdir, getcwd, relative paths.
check "linux-cwd.sh: the guest's working directory" sh "$(dirname "$0")/linux-cwd.sh" "$vmm" "$dir"

# The system-call round trip (no threshold: the figure is printed for the log).
"$vmm" run --guest "$dir/syscall_loop" --mem 64M --vgpu none -- 2000 > "$work/out" 2>&1
rc=$?
cat "$work/out"
check "syscall_loop: ran, measured the round trip" sh -c "[ $rc -eq 0 ] && grep -q 'guest: getpid round trip: ' '$work/out'"
check "syscall_loop: 2000 getpid counted" has "getpid 2000"

checks_done "Linux-ABI guest"
