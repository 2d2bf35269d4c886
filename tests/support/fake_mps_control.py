# A stand-in for nvidia-cuda-mps-control in the MPS plumbing tests (no GPU,
# no driver): the tests install it on a PATH of their own with a shebang
# naming python3. Like the real program it finds its pipe directory in
# CUDA_MPS_PIPE_DIRECTORY; `-d` starts a daemon that listens on
# PIPE/control and writes PIPE/nvidia-cuda-mps-control.pid; without
# arguments it sends its stdin's command to that daemon, which quits on
# "quit". Every call is appended to $FAKE_MPS_RECORD (one line each).
# FAKE_MPS_FAIL_START=N makes `-d` exit with status N instead.
import os
import socket
import sys

pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps")
record_path = os.environ.get("FAKE_MPS_RECORD")


def record(line):
    if record_path:
        with open(record_path, "a") as f:
            f.write(line + "\n")


def daemon():
    control = os.path.join(pipe, "control")
    pidfile = os.path.join(pipe, "nvidia-cuda-mps-control.pid")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(control)
    s.listen(8)
    with open(pidfile, "w") as f:
        f.write(str(os.getpid()))
    while True:
        c, _ = s.accept()
        data = c.recv(256).decode(errors="replace").strip()
        c.close()
        if data == "quit":
            record("daemon quit")
            os.unlink(control)
            os.unlink(pidfile)
            os._exit(0)


if sys.argv[1:] == ["-d"]:
    record("start pipe=%s log=%s" % (pipe, os.environ.get("CUDA_MPS_LOG_DIRECTORY", "")))
    fail = os.environ.get("FAKE_MPS_FAIL_START")
    if fail:
        sys.exit(int(fail))
    if os.fork():
        sys.exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    daemon()
else:
    command = sys.stdin.read().strip()
    record("client " + command)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        c.connect(os.path.join(pipe, "control"))
    except OSError as e:
        print("cannot reach the daemon: %s" % e, file=sys.stderr)
        sys.exit(1)
    c.sendall(command.encode())
    c.close()
