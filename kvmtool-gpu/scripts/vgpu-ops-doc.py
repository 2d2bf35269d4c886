#!/usr/bin/env python3
"""Writes docs/vgpu-opcodes.md from the opcode table (kvmtool-gpu/abi/vgpu_ops.h):
one row per opcode with its number, facts, argument and result fields, and
the row's comment. With --check, fails (exit 1) when the committed page is
not what the table gives, so the page cannot fall behind (ctest runs it).

Usage: vgpu-ops-doc.py [--check]"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HEADER = os.path.join(ROOT, "kvmtool-gpu", "abi", "vgpu_ops.h")
ABI = os.path.join(ROOT, "kvmtool-gpu", "abi", "vgpu_abi.h")  # the layouts the table borrows (vgpu_launch_args)
PAGE = os.path.join(ROOT, "docs", "vgpu-opcodes.md")
FACTS = {"VGPU_OPF_CTX": "ctx", "VGPU_OPF_ASYNC": "async", "VGPU_OPF_COOP": "coop", "VGPU_OPF_CAPTURED": "captured",
         "VGPU_OPF_NODES": "nodes", "VGPU_OPF_TAKES_QUOTA": "quota+", "VGPU_OPF_GIVES_QUOTA": "quota-"}
def fields(src):
    """struct name -> its fields, from the headers' one-line and multi-line definitions."""
    out = {}
    for name, body in re.findall(r"struct (vgpu_\w+) \{(.*?)\};", src, re.S):
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        out[name] = ", ".join(m for m in re.findall(r"\b(\w+(?:\[\d+\])?)\s*;", body))
    return out


def rows(src):
    """(name, number, facts, args, result, comment) per X(...) row, comments joined."""
    table = src[src.index("#define VGPU_OPS(X)"):src.index("#define VGPU_OP_ENUMERATOR_")]
    table = table.replace("\\\n", "\n")
    found = []
    pattern = re.compile(r"X\((\w+), (\d+), ([^,]+), ([^,]+), ([^)]+)\)((?:\s*/\*.*?\*/)?)", re.S)
    for m in pattern.finditer(table):
        comment = " ".join(re.sub(r"^\s*/\*|\*/\s*$", "", m.group(6).strip()).split())
        found.append((m.group(1), int(m.group(2)), m.group(3).strip(), m.group(4).strip(), m.group(5).strip(), comment))
    return found


def layout(kind, struct_fields):
    kind = " ".join(kind.split())
    if kind == "void":
        return ""
    return struct_fields[kind.replace("struct ", "")]


def page():
    with open(HEADER) as f:
        src = f.read()
    with open(ABI) as f:
        struct_fields = fields(src + f.read())
    lines = ["# vGPU opcodes",
             "",
             "Written by `kvmtool-gpu/scripts/vgpu-ops-doc.py` from the opcode table,",
             "`kvmtool-gpu/abi/vgpu_ops.h` (the facts' meanings are there); a test fails when",
             "this page is not what the table gives. Arguments are the command's `arg[]` in",
             "order, results the completion's `result[]`.",
             "",
             "Facts: `ctx` needs a current context; `async` may be sent without waiting;",
             "`coop` may be cooperative; `captured` is recorded by an open stream capture",
             "(counted against `max_graph_nodes`); `nodes` adds graph nodes; `quota+` and",
             "`quota-` take and give back device-memory quota.",
             "",
             "| number | opcode | facts | arguments | results | notes |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, number, facts, args, result, comment in rows(src):
        f = " ".join(FACTS[x.strip()] for x in facts.split("|") if x.strip() != "0")
        lines.append(f"| {number} | `{name}` | {f} | {layout(args, struct_fields)} | {layout(result, struct_fields)} | "
                     f"{comment.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main():
    text = page()
    if "--check" in sys.argv[1:]:
        with open(PAGE) as f:
            if f.read() != text:
                print("docs/vgpu-opcodes.md is not what vgpu_ops.h gives: run kvmtool-gpu/scripts/vgpu-ops-doc.py")
                return 1
        print(f"docs/vgpu-opcodes.md matches vgpu_ops.h ({text.count(chr(10)) - 14} opcodes)")
        return 0
    with open(PAGE, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
