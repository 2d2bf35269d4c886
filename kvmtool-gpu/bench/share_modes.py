#!/usr/bin/env python3
"""Side by side: `bench share` under --gpu-share contexts and under mps.

Usage: share_modes.py CONTEXTS_DIR MPS_DIR [FAULT_CONTEXTS_DIR FAULT_MPS_DIR]

Each DIR holds a share.json of `kvmtool-gpu bench share`. Prints one
markdown table per mix: for each N, the VMs' aggregate, Jain's index and
small-call latency (p50 / p99) in both modes, N native processes in both
modes, and the MPS VMs' aggregate against one native process without MPS
(issue 32's target: >= 98% at N = 2..8). With the fault runs, what the
faulting VM cost the others in each mode. Exit status 0 (it judges nothing).
"""
import json
import statistics
import sys


def load(d):
    with open(d + "/share.json") as f:
        return json.load(f)


def summary(rows, side, work, n):
    group = [r for r in rows if r["side"] == side and r["work"] == work and r["members"] == n]
    if not group:
        return None
    ok = [r for r in group if r["status"] == "ok"]
    if len(ok) != len(group):
        return {"failed": f"FAILED ({len(ok)} of {len(group)})"}
    rates = [r["rate"] for r in ok]
    sq = sum(x * x for x in rates)
    return {
        "aggregate": sum(rates),
        "jain": (sum(rates) ** 2) / (len(rates) * sq) if sq else None,
        "p50_us": statistics.median(r["lat_p50_ns"] for r in ok) / 1000,
        "p99_us": max(r["lat_p99_ns"] for r in ok) / 1000,
    }


def agg(s, unit):
    if s is None:
        return "-"
    if "failed" in s:
        return s["failed"]
    return f"{s['aggregate']:.3g}"


def jain(s):
    return f"{s['jain']:.3f}" if s and s.get("jain") is not None else "-"


def lat(s):
    return f"{s['p50_us']:.1f} / {s['p99_us']:.1f}" if s and "p50_us" in s else "-"


def ratio(a, b):
    if not a or not b or "aggregate" not in a or "aggregate" not in b or b["aggregate"] <= 0:
        return "-"
    return f"{100 * a['aggregate'] / b['aggregate']:.1f}%"


def self_test():
    """Two synthetic runs: the table must carry each mode's figures and the ratio."""
    import io
    import os
    import tempfile
    from contextlib import redirect_stdout

    def row(side, work, n, i, rate, p50, p99, status="ok", note=None):
        r = {"side": side, "work": work, "members": n, "member": i, "rate": rate, "lat_p50_ns": p50,
             "lat_p99_ns": p99, "status": status}
        if note:
            r["note"] = note
        return r

    ctx = [row("native", "small", 1, 0, 1000, 5000, 9000)] + [row("guest", "small", 2, i, 400, 7000, 20000) for i in range(2)]
    mps = [row("guest", "small", 2, i, 495, 3000, 8000) for i in range(2)] + [row("native", "small", 2, i, 500, 2000, 4000) for i in range(2)]
    fault = [row("intruder", "compute", 4, 3, 0, 0, 0, note="fault: status=X recovered=yes; the others: 3 of 3 lost their work")]
    with tempfile.TemporaryDirectory() as d:
        for name, rows in (("c", ctx), ("m", mps), ("f", fault)):
            os.mkdir(os.path.join(d, name))
            with open(os.path.join(d, name, "share.json"), "w") as f:
                json.dump({"meta": {"gpu_share": name}, "results": rows}, f)
        out = io.StringIO()
        with redirect_stdout(out):
            main(["", d + "/c", d + "/m", d + "/f", d + "/f"])
    text = out.getvalue()
    want = ["| 2 | 800 | 1.000 | 7.0 / 20.0 | 990 | 1.000 | 3.0 / 8.0 | 99.0% | - | 1e+03 | 2.0 / 4.0 |",
            "| mps | compute | 4 | ok: fault: status=X recovered=yes | 3 of 3 lost their work |"]
    for w in want:
        if w not in text:
            print("share_modes self-test: missing line:\n" + w + "\nin:\n" + text)
            return 1
    print("share_modes self-test: ok")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) not in (3, 5):
        print(__doc__)
        return 2
    ctx, mps = load(argv[1]), load(argv[2])
    print("gpu_share: contexts run:", ctx["meta"].get("gpu_share", "contexts"))
    print("gpu_share: mps run:     ", mps["meta"].get("gpu_share", "?"))
    works = []
    for r in ctx["results"] + mps["results"]:
        if r["work"] not in works:
            works.append(r["work"])
    for work in works:
        unit = "GB/s" if work == "bandwidth" else "kernels/s"
        ns = sorted({r["members"] for r in ctx["results"] + mps["results"] if r["work"] == work and r["side"] == "guest"})
        one = summary(ctx["results"], "native", work, 1)
        print(f"\n### {work} ({unit}); native 1 process without MPS: {agg(one, unit)}\n")
        print("| N | VMs, contexts | Jain | p50 / p99 us | VMs, MPS | Jain | p50 / p99 us | MPS VMs / native 1 "
              "| native N, contexts | native N, MPS | p50 / p99 us native MPS |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for n in ns:
            gc, gm = summary(ctx["results"], "guest", work, n), summary(mps["results"], "guest", work, n)
            nc, nm = summary(ctx["results"], "native", work, n), summary(mps["results"], "native", work, n)
            print(f"| {n} | {agg(gc, unit)} | {jain(gc)} | {lat(gc)} | {agg(gm, unit)} | {jain(gm)} | {lat(gm)} "
                  f"| {ratio(gm, one)} | {agg(nc, unit)} | {agg(nm, unit)} | {lat(nm)} |")
    if len(argv) == 5:
        print("\n### A faulting VM (--intruder fault): what the others lost\n")
        print("| mode | mix | N | the faulting VM | the others |")
        print("| --- | --- | ---: | --- | --- |")
        for mode, d in (("contexts", argv[3]), ("mps", argv[4])):
            for r in load(d)["results"]:
                if r["side"] == "intruder":
                    note = r.get("note", "")
                    mine, _, others = note.partition("; the others: ")
                    print(f"| {mode} | {r['work']} | {r['members']} | {r['status']}: {mine} | {others or '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
