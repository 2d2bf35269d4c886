#!/usr/bin/env python3
"""Fails when a folder reaches one it must not (issue 44's two rules).

  - tlb-study/ is a study: it never includes the command line
    (kvmtool-gpu/cli/) nor links its libraries (kvmgpu_cli,
    kvmgpu_bench_commands); `bench tlb` registers itself and parses its
    flags with kvmtool-gpu/util/arg_parser.h.
  - guest-stub/ shares only kvmtool-gpu/abi/ with the VMM: every
    "kvmtool-gpu/..." it includes, and every kvmtool-gpu source its CMake
    files compile, is under abi/.

Each breach is reported with its file and line. --self-test plants one
breach of each kind in a copy and checks that each is found.

Usage: include-rules-test.py [--root DIR] [--self-test]
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

SOURCES = (".c", ".cc", ".cpp", ".cu", ".h", ".hpp", ".S")
CMAKE = ("CMakeLists.txt", ".cmake")
INCLUDE = re.compile(r'^\s*#\s*include\s*"(kvmtool-gpu/[^"]+)"')
CMAKE_PATH = re.compile(r"kvmtool-gpu/([A-Za-z0-9_.-]+)/")
CLI_LIBRARIES = re.compile(r"\b(kvmgpu_cli|kvmgpu_bench_commands)\b")


def files_under(root, top, suffixes):
    for d, dirs, files in os.walk(os.path.join(root, top)):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        for f in files:
            if f.endswith(suffixes):
                yield os.path.join(d, f)


def lines_of(path):
    """(number, line) of each line that is not a whole-line comment."""
    comment = "#" if path.endswith(CMAKE) else "//"
    with open(path, errors="replace") as f:
        for number, line in enumerate(f, 1):
            if not line.lstrip().startswith(comment):
                yield number, line


def breaches(root):
    out = []
    where = lambda path, n: f"{os.path.relpath(path, root)}:{n}"
    for path in files_under(root, "tlb-study", SOURCES):
        for n, line in lines_of(path):
            m = INCLUDE.match(line)
            if m and m.group(1).startswith("kvmtool-gpu/cli/"):
                out.append(f"{where(path, n)}: the study includes the command line ({m.group(1)})")
    for path in files_under(root, "tlb-study", CMAKE):
        for n, line in lines_of(path):
            if CLI_LIBRARIES.search(line):
                out.append(f"{where(path, n)}: the study links the command line's library")
    for path in files_under(root, "guest-stub", SOURCES):
        for n, line in lines_of(path):
            m = INCLUDE.match(line)
            if m and not m.group(1).startswith("kvmtool-gpu/abi/"):
                out.append(f"{where(path, n)}: the guest includes the VMM's {m.group(1)} (only abi/ is shared)")
    for path in files_under(root, "guest-stub", CMAKE):
        for n, line in lines_of(path):
            for folder in CMAKE_PATH.findall(line):
                if folder != "abi":
                    out.append(f"{where(path, n)}: the guest builds the VMM's kvmtool-gpu/{folder}/ (only abi/ is shared)")
    return out


def self_test(root):
    with tempfile.TemporaryDirectory() as tmp:
        for top in ("tlb-study", "guest-stub"):
            shutil.copytree(os.path.join(root, top), os.path.join(tmp, top))
        if breaches(tmp):
            print("self-test: the copy breaks a rule before anything is planted")
            return 1
        planted = {
            "tlb-study/planted.cpp": '#include "kvmtool-gpu/cli/run_command.h"\n',
            "tlb-study/planted.cmake": "target_link_libraries(tlb_study PRIVATE kvmgpu_cli)\n",
            "guest-stub/planted.h": '#include "kvmtool-gpu/devices/vgpu/command_dispatch.h"\n',
            "guest-stub/planted.cmake": "set(x ${PROJECT_SOURCE_DIR}/kvmtool-gpu/devices/vgpu/blas/x.cpp)\n",
        }
        for name, text in planted.items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        found = breaches(tmp)
        missed = [name for name in planted if not any(b.startswith(name + ":") for b in found)]
        if missed:
            print("self-test: planted breaches not found: " + ", ".join(missed))
            return 1
    print(f"self-test: each of the {len(planted)} planted breaches found")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if args.self_test:
        return self_test(root)
    found = breaches(root)
    for b in found:
        print(b)
    if not found:
        print("include rules kept: tlb-study/ needs nothing of cli/, guest-stub/ only abi/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
