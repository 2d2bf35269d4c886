#!/usr/bin/env python3
"""Fails on a function that nothing calls, tests included.

Universal Ctags lists every function definition and declaration in the
repository's C, C++ and CUDA sources; a name is dead when every place it
occurs as an identifier (comments aside) is one of those definitions or
declarations. Name-based, so it errs toward silence: a dead overload or a
dead method sharing its name with a live one is not caught; whatever it
reports is uncalled. Runs in about a second.

A name made by the preprocessor counts as used where its table makes it:
a macro that pastes a parameter onto a prefix (op_##NAME), passed to an
X-macro table (VGPU_OPS(that macro)), names prefix + that argument of
every row of the table (pasted_uses()).

--production-only counts no call from tests/: it fails on a production
function (kvmtool-gpu/, guest-stub/, memmap/, tlb-study/) that only tests
call, which the normal mode cannot see.

dead-functions.allow lists the names foreign code calls (the CUDA-named
entry points guest-stub/ exports, the fuzzer's entry) and the few
production functions kept though only tests call them: one name or an
fnmatch pattern a line, each with its reason.

Usage: dead-functions.py [--root DIR] [--production-only] [--self-test]
"""
import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

SOURCE_DIRS = ["kvmtool-gpu", "guest-stub", "memmap", "tlb-study", "tests"]
CODE = (".c", ".cc", ".cpp", ".h", ".hpp", ".cu", ".cuh")
# Where a function may also be named: assembly, linker scripts, templates.
REFERENCES = CODE + (".S", ".s", ".ld", ".in")
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Comments go; string literals stay (a name in a string may be a dlsym()).
COMMENT_OR_STRING = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
ALWAYS_LIVE = {"main"}
TESTS = "tests"


def strip_comments(text):
    return COMMENT_OR_STRING.sub(lambda m: " " if m.group(0)[0] == "/" else m.group(0), text)


DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)(.*)$", re.M)
PASTE = re.compile(r"(\w+)\s*##\s*(\w+)")


def split_args(text):
    """The top-level comma-separated arguments of text, which starts after '('."""
    args, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                args.append(cur.strip())
                return args
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    return args


def pasted_uses(texts):
    """Names the preprocessor makes: for TABLE(MACRO) where MACRO pastes its
    k-th parameter onto a prefix and TABLE's rows are X(a0, a1, ...), the
    names prefix + ak of every row."""
    pastes, tables = {}, {}
    for text in texts:
        joined = text.replace("\\\n", " ")
        for m in DEFINE.finditer(joined):
            name, params, body = m.group(1), [p.strip() for p in m.group(2).split(",")], m.group(3)
            for prefix, param in PASTE.findall(body):
                if param in params:
                    pastes.setdefault(name, set()).add((prefix, params.index(param)))
            if len(params) == 1 and params[0]:
                x = params[0]
                rows = [split_args(body[r.end():]) for r in re.finditer(r"\b%s\(" % re.escape(x), body)]
                if rows:
                    tables[name] = rows
    uses = Counter()
    for text in texts:
        for table, macro in re.findall(r"\b(\w+)\(\s*(\w+)\s*\)", text):
            for prefix, k in pastes.get(macro, ()):
                for row in tables.get(table, ()):
                    if k < len(row) and IDENT.fullmatch(row[k]):
                        uses[prefix + row[k]] += 1
    return uses


def source_files(root):
    out = []
    for top in SOURCE_DIRS:
        for d, _, files in os.walk(os.path.join(root, top)):
            out += [os.path.join(d, f) for f in files if f.endswith(REFERENCES)]
    return sorted(out)


def declared_functions(root, files):
    """name -> [(file, line)] of every definition and declaration."""
    code = [f for f in files if f.endswith(CODE)]
    cmd = ["ctags", "--output-format=json", "--languages=C,C++", "--langmap=C++:+.cu.cuh",
           "--kinds-C=fp", "--kinds-C++=fp", "--fields=+nK", "-f", "-", "-L", "-"]
    run = subprocess.run(cmd, input="\n".join(code), capture_output=True, text=True, cwd=root, check=True)
    decls = {}
    for line in run.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag":
            continue
        name = tag["name"]
        # Lambdas (ctags names them __anon...), operators, destructors; and
        # a static_assert(f(), ...), which ctags misreads as a declaration.
        if name.startswith(("operator", "~", "__anon")) or not IDENT.fullmatch(name):
            continue
        if "static_assert" in tag.get("pattern", ""):
            continue
        decls.setdefault(name, []).append((os.path.relpath(tag["path"], root), tag.get("line", 0)))
    return decls


def load_allow(path):
    """[(name glob, path glob)]: a line is NAME [PATH] # why; PATH defaults to any."""
    pats = []
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words:
                pats.append((words[0], words[1] if len(words) > 1 else "*"))
    return pats


def allowed(name, places, allow):
    return any(fnmatch.fnmatchcase(name, n) and all(fnmatch.fnmatchcase(p, where) for p, _ in places)
               for n, where in allow)


def is_test(rel_path):
    return rel_path.split(os.sep, 1)[0] == TESTS


def dead_functions(root, allow, production_only=False):
    """Functions nothing calls; with production_only, neither the tests'
    declarations nor their calls count, so a production function only tests
    call is dead."""
    files = source_files(root)
    if production_only:
        files = [f for f in files if not is_test(os.path.relpath(f, root))]
    decls = declared_functions(root, files)
    uses = Counter()
    texts = []
    for path in files:
        with open(path, errors="replace") as f:
            texts.append(strip_comments(f.read()))
        uses.update(IDENT.findall(texts[-1]))
    uses.update(pasted_uses(texts))
    dead = []
    for name, places in decls.items():
        if name in ALWAYS_LIVE or allowed(name, places, allow):
            continue
        # ctags may list one place twice (a K&R-style or macro-split line):
        # count distinct places, and what it saw as declarations at most once each.
        if uses[name] <= len(set(places)):
            dead.append((name, sorted(set(places))))
    return sorted(dead)


def report(dead, by=""):
    for name, places in dead:
        where = ", ".join(f"{p}:{n}" for p, n in places)
        print(f"dead-functions: {name} is never called{by} ({where})")


def self_test(root, allow):
    """Plants an uncalled function in a copy of the sources: it must be caught."""
    with tempfile.TemporaryDirectory() as tmp:
        for path in source_files(root): # only what the check reads
            dst = os.path.join(tmp, os.path.relpath(path, root))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(path, dst)
        before = {n for n, _ in dead_functions(tmp, allow)}
        prod_before = {n for n, _ in dead_functions(tmp, allow, production_only=True)}
        with open(os.path.join(tmp, "kvmtool-gpu", "util", "planted_dead.cpp"), "w") as f:
            f.write("namespace kvmgpu {\nint planted_never_called(int x) { return x + 1; }\n}\n")
        # A method declared in a header and defined elsewhere, never called.
        with open(os.path.join(tmp, "memmap", "planted_dead.h"), "w") as f:
            f.write("struct PlantedThing {\n    int planted_method_nobody_calls() const;\n};\n")
        with open(os.path.join(tmp, "memmap", "planted_dead.cpp"), "w") as f:
            f.write('#include "memmap/planted_dead.h"\n'
                    "// planted_method_nobody_calls() in a comment is not a call\n"
                    "int PlantedThing::planted_method_nobody_calls() const { return 1; }\n")
        # A table, a macro pasting its rows' names onto a prefix, the table
        # expanded with it: the row's function is used, a row-less one is not.
        with open(os.path.join(tmp, "memmap", "planted_table.cpp"), "w") as f:
            f.write("#define PLANTED_ROWS(X) \\\n    X(ROW_ONE, 1) \\\n    X(ROW_TWO, 2)\n"
                    "#define PLANTED_ENTRY(NAME, n) planted_op_##NAME,\n"
                    "int planted_op_ROW_ONE() { return 1; }\nint planted_op_ROW_TWO() { return 2; }\n"
                    "int planted_op_ROW_GONE() { return 3; }\n"
                    "using F = int (*)();\nF planted_ops[] = {PLANTED_ROWS(PLANTED_ENTRY)};\n")
        # A production function only a test calls: live for the normal mode,
        # dead for --production-only.
        with open(os.path.join(tmp, "memmap", "planted_test_only.cpp"), "w") as f:
            f.write("int planted_only_tests_call(int x) { return x; }\n")
        os.makedirs(os.path.join(tmp, TESTS, "unit", "memmap"), exist_ok=True)
        with open(os.path.join(tmp, TESTS, "unit", "memmap", "planted_test.cpp"), "w") as f:
            f.write("int planted_only_tests_call(int x);\nint planted_check() { return planted_only_tests_call(1); }\n"
                    "int main() { return planted_check(); }\n")
        after = {n for n, _ in dead_functions(tmp, allow)}
        want = {"planted_never_called", "planted_method_nobody_calls", "planted_op_ROW_GONE"}
        if after - before != want:
            print(f"dead-functions self-test FAILED: planted {sorted(want)}, caught {sorted(after - before)}")
            return 1
        prod_after = {n for n, _ in dead_functions(tmp, allow, production_only=True)}
        prod_want = want | {"planted_only_tests_call"}
        if prod_after - prod_before != prod_want:
            print(f"dead-functions self-test FAILED (--production-only): planted {sorted(prod_want)}, "
                  f"caught {sorted(prod_after - prod_before)}")
            return 1
    print(f"dead-functions self-test: every planted dead function caught ({', '.join(sorted(want))}), "
          "the rows' pasted names not; --production-only also caught planted_only_tests_call, "
          "which only a test calls")
    return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--production-only", action="store_true",
                    help="count no call from tests/: find production functions only tests call")
    ap.add_argument("--self-test", action="store_true", help="plant a dead function in a copy; expect it caught")
    args = ap.parse_args()
    if not shutil.which("ctags"):
        print("dead-functions: ctags (universal-ctags) is not installed: run kvmtool-gpu/scripts/install-deps.sh")
        return 2
    allow = load_allow(os.path.join(here, "dead-functions.allow"))
    if args.self_test:
        return self_test(args.root, allow)
    dead = dead_functions(args.root, allow, args.production_only)
    by = " outside tests/" if args.production_only else ""
    report(dead, by)
    if dead:
        print(f"dead-functions: {len(dead)} uncalled{by}; delete them, or (only for what foreign code calls, "
              "or an API kept for a reason) list them in kvmtool-gpu/scripts/dead-functions.allow")
        return 1
    print(f"dead-functions: every function is called{by}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
