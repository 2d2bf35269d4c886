#!/usr/bin/env python3
"""Writes the files of one commit of a git directory without a work tree (the
`fetch` tool's snapshots) into DEST, skipping the blobs the snapshot lacks
(large files are often absent, and `git archive` stops at the first one) and
listing them on stdout as "missing: PATH".
Usage: extract-snapshot.py GIT_DIR DEST [COMMIT]   (COMMIT default HEAD)"""
import os
import subprocess
import sys


def main(git_dir, dest, commit="HEAD"):
    listing = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", commit],
                             capture_output=True, check=True).stdout
    cat = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    written = missing = 0
    for entry in filter(None, listing.split(b"\0")):
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind != b"blob":  # submodules are not in the snapshot
            continue
        cat.stdin.write(sha + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if header[1] == b"missing":
            print("missing:", path.decode())
            missing += 1
            continue
        data = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)  # the newline after each object
        out = os.path.join(dest, path.decode())
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if mode == b"120000":
            os.symlink(data.decode(), out)
        else:
            with open(out, "wb") as f:
                f.write(data)
            if mode == b"100755":
                os.chmod(out, 0o755)
        written += 1
    cat.stdin.close()
    cat.wait()
    print(f"{written} files written, {missing} missing", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
