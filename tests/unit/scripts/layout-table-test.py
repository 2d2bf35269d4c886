#!/usr/bin/env python3
"""Fails when a README's folder table and the tree disagree.

README.md's "Layout" table must name (in its first column, in backticks,
with a trailing slash; a row may name several) exactly these folders:
  - every top-level folder (hidden ones aside);
  - every folder under kvmtool-gpu/, guest-stub/, memmap/ and tlb-study/
    that holds a file;
  - every folder directly under tests/ (their own folders follow the
    components: tests/unit/<component>/).
guest-stub/README.md's folder table must name each folder directly under
guest-stub/ (relative to it).

A folder missing from a table, or a row naming a folder that does not
exist, is reported by name. __pycache__, hidden folders and the top-level
folders the root .gitignore names (/build*/, ...) do not count.

Usage: layout-table-test.py [--root DIR] [--self-test]
"""
import argparse
import fnmatch
import os
import re
import shutil
import sys
import tempfile

SOURCE_TREES = ["kvmtool-gpu", "guest-stub", "memmap", "tlb-study"]
NAME = re.compile(r"`([^`]+)`")


def ignored(name):
    return name.startswith(".") or name == "__pycache__"


def subfolders(path):
    return sorted(d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d)) and not ignored(d))


def folders_with_files(root, top):
    out = []
    for d, dirs, files in os.walk(os.path.join(root, top)):
        dirs[:] = [x for x in dirs if not ignored(x)]
        if files:
            out.append(os.path.relpath(d, root))
    return out


def ignored_at_top(root):
    """The root .gitignore's /NAME/ patterns: build outputs and the like."""
    try:
        with open(os.path.join(root, ".gitignore")) as f:
            return [l.strip().strip("/") for l in f if l.strip().startswith("/") and l.strip().endswith("/")]
    except FileNotFoundError:
        return []


def expected_repo_folders(root):
    skip = ignored_at_top(root)
    want = {d for d in subfolders(root) if not any(fnmatch.fnmatchcase(d, p) for p in skip)}
    for top in SOURCE_TREES:
        if os.path.isdir(os.path.join(root, top)):
            want.update(folders_with_files(root, top))
    if os.path.isdir(os.path.join(root, "tests")):
        want.update(os.path.join("tests", d) for d in subfolders(os.path.join(root, "tests")))
    return want


def table_rows(readme, header):
    """The first cells of the first table whose header row starts with header."""
    with open(readme) as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith(header):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows += NAME.findall(row.split("|")[1])
            return rows
    return None


def compare(name, rows, want):
    """Problems, one line each, between a table's rows and the folders it must name."""
    if rows is None:
        return [f"{name}: no folder table"]
    problems = []
    named = []
    for r in rows:
        if not r.endswith("/"):
            problems.append(f"{name}: row `{r}` is not a folder (no trailing /)")
        named.append(r.rstrip("/"))
    for dup in sorted({n for n in named if named.count(n) > 1}):
        problems.append(f"{name}: `{dup}/` has two rows")
    for missing in sorted(want - set(named)):
        problems.append(f"{name}: the folder {missing}/ is not in the table")
    for extra in sorted(set(named) - want):
        problems.append(f"{name}: the table names {extra}/, which is not a folder of the tree")
    return problems


def check(root):
    problems = compare("README.md", table_rows(os.path.join(root, "README.md"), "| folder |"),
                       expected_repo_folders(root))
    guest = os.path.join(root, "guest-stub")
    if os.path.isdir(guest):
        problems += compare("guest-stub/README.md", table_rows(os.path.join(guest, "README.md"), "| folder |"),
                            set(subfolders(guest)))
    return problems


def self_test(root):
    """A new source folder, and a row for a folder that is gone, must each be caught."""
    with tempfile.TemporaryDirectory() as tmp:
        for top in SOURCE_TREES + ["tests"]:
            for d in expected_repo_folders(root):
                if d.split(os.sep)[0] == top:
                    os.makedirs(os.path.join(tmp, d), exist_ok=True)
                    open(os.path.join(tmp, d, "placeholder"), "w").close()
        for d in subfolders(root):
            os.makedirs(os.path.join(tmp, d), exist_ok=True)
        for f in ["README.md", ".gitignore"]:
            shutil.copyfile(os.path.join(root, f), os.path.join(tmp, f))
        os.makedirs(os.path.join(tmp, "build-planted"))  # ignored by /build*/
        shutil.copyfile(os.path.join(root, "guest-stub", "README.md"), os.path.join(tmp, "guest-stub", "README.md"))
        if check(tmp):
            print("layout-table self-test FAILED: the copy disagrees before anything was planted:", *check(tmp), sep="\n")
            return 1
        os.makedirs(os.path.join(tmp, "memmap", "planted"))
        open(os.path.join(tmp, "memmap", "planted", "x.cpp"), "w").close()
        os.makedirs(os.path.join(tmp, "memmap", "__pycache__"))
        open(os.path.join(tmp, "memmap", "__pycache__", "x.pyc"), "w").close()
        shutil.rmtree(os.path.join(tmp, "tlb-study"))
        got = check(tmp)
        want = ["README.md: the folder memmap/planted/ is not in the table",
                "README.md: the table names tlb-study/, which is not a folder of the tree"]
        if got != want:
            print("layout-table self-test FAILED: expected", *want, "got", *got, sep="\n")
            return 1
    print("layout-table self-test: a new folder and a row for a removed one were both caught")
    return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..", "..")))
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.root)
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print("layout-table: fix the folder tables (README.md \"Layout\", guest-stub/README.md) to match the tree")
        return 1
    print("layout-table: README.md and guest-stub/README.md name every folder, and only those")
    return 0


if __name__ == "__main__":
    sys.exit(main())
