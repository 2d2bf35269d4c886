#!/usr/bin/env python3
"""Plots of `kvmtool-gpu bench bandwidth`, `bench calls` and `bench multigpu`
from their CSV.

usage: plot_bench.py bandwidth|calls|multigpu|share RESULTS.csv OUT.png

bandwidth: GB/s against copy size, one panel per direction and host backing,
one line per mode (native lines dashed, in every panel); with --trials, the
median trial of each size (as the markdown report).
calls: time per call for each measurement, grouped by doorbell and batching,
native as a dashed line across each group.
multigpu: time against matrix order, one line per gathering mode (G_G, G_H),
guest solid and native dashed, as the seed's figure.
share: aggregate and slowest member against N, VMs solid, native processes
dashed, one panel per workload.
Exits 3 when matplotlib is missing (the caller says so and goes on).
"""
import csv
import statistics
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("plot_bench.py: matplotlib is not installed", file=sys.stderr)
    sys.exit(3)


def size_label(b):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


def plot_bandwidth(rows, out):
    rows = [r for r in rows if r["status"] == "ok"]
    dirs = [d for d in ("htod", "dtoh") if any(r["dir"] == d for r in rows)]
    order = {"4K": 0, "2M": 1, "1G": 2}
    hps = sorted({r["hpages"] for r in rows if r["source"] == "guest"}, key=lambda h: order.get(h, 9)) or ["-"]
    # tab10 colour per strategy; 7 (gray) is skipped: native pageable is gray
    strategy_color = {"none": 0, "auto": 1, "perchunk": 2, "coalesce": 3, "bounce": 4, "batch": 5, "gather": 6,
                      "walk": 8}
    colors = plt.get_cmap("tab10")
    fig, axes = plt.subplots(len(dirs), len(hps), figsize=(6.5 * len(hps), 4.8 * len(dirs)), squeeze=False)
    sizes = sorted({int(r["bytes"]) for r in rows})
    for i, d in enumerate(dirs):
        for j, hp in enumerate(hps):
            ax = axes[i][j]
            modes = []
            for r in rows:
                if r["dir"] == d and (r["source"] == "native" or r["hpages"] == hp) and r["mode"] not in modes:
                    modes.append(r["mode"])
            for m in modes:
                mine = [r for r in rows if r["dir"] == d and r["mode"] == m]
                by_size = {}
                for r in mine:
                    by_size.setdefault(int(r["bytes"]), []).append(float(r["gbps"]))
                pts = sorted((b, statistics.median(v)) for b, v in by_size.items())
                native = m.startswith("native")
                if native:
                    style = "-." if "registered" in m else "--"
                    color, width = "black" if "pinned" in m else "gray", 2.2
                else:  # colour: strategy (or kind); solid: 4 KiB guest pages (and pinned), dotted: 2 MiB
                    st = mine[0]["strategy"]
                    style = ":" if mine[0]["gpages"] == "2M" else "-"
                    kind = mine[0]["kind"]
                    # twocopy (GViM's 2-copy, guest TSC): a colour outside tab10, beside bounce (1-copy)
                    color = "crimson" if kind == "twocopy" else colors(9 if kind == "registered"
                                                                       else strategy_color.get(st, 9))
                    width = 2.0 if st == "none" else 1.2
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", markersize=3, linewidth=width,
                        color=color, label=m.replace(f" hp{hp}", ""))
            ax.set_xscale("log", base=2)
            ax.set_xticks(sizes)
            ax.set_xticklabels([size_label(s) for s in sizes], rotation=45, fontsize=7)
            ax.set_ylabel("GB/s (CUDA events; twocopy: guest TSC)")
            ax.set_title(f"{'host to device' if d == 'htod' else 'device to host'}, guest RAM on {hp} host pages",
                         fontsize=9)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=6, loc="upper left")
    fig.suptitle("kvmtool-gpu bench bandwidth")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def plot_calls(rows, out):
    rows = [r for r in rows if r["status"] == "ok"]
    metrics = []
    for r in rows:
        if r["metric"] not in metrics:
            metrics.append(r["metric"])
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 4.8), squeeze=False)
    for ax, m in zip(axes[0], metrics):
        guest = [r for r in rows if r["metric"] == m and r["source"] == "guest"]
        native = [r for r in rows if r["metric"] == m and r["source"] == "native"]
        labels = [f"{r['doorbell']}\n{'batch' if r['batching'] == 'on' else 'no batch'}" for r in guest]
        ax.bar(range(len(guest)), [float(r["wall_ns_per_call"]) / 1000 for r in guest], label="guest wall")
        ax.bar(range(len(guest)), [float(r["event_ns_per_call"]) / 1000 for r in guest], width=0.4,
               label="guest, CUDA events")
        for n in native:
            ax.axhline(float(n["wall_ns_per_call"]) / 1000, color="black", linestyle="--", label="native wall")
        ax.set_xticks(range(len(guest)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("us per call")
        ax.set_title(m, fontsize=9)
        ax.legend(fontsize=6)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle("kvmtool-gpu bench calls")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def log2_x_panel(ax, xlabel, ylabel, title):
    """A panel whose x axis doubles per step (orders, VM counts), labelled."""
    ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # nothing measured: no legend to draw
        ax.legend(fontsize=7)


def plot_multigpu(rows, out):
    fig, (ax, diff) = plt.subplots(1, 2, figsize=(11, 4.8))

    def points(side, mode, field):
        return sorted((int(r["order"]), float(r[field])) for r in rows if r["side"] == side and r["mode"] == mode)

    for side, style in (("guest", "-"), ("native", "--")):
        for mode, label in (("gg", "G_G (peer copies)"), ("gh", "G_H (through the host)")):
            pts = points(side, mode, "total_ms")
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", label=f"{label}, {side}")
        gg, gh = dict(points(side, "gg", "total_ms")), dict(points(side, "gh", "total_ms"))
        t = dict(points(side, "t", "t_ms"))
        orders = sorted(set(gg) & set(gh))
        if orders:
            diff.plot(orders, [gh[n] - gg[n] for n in orders], style, marker="o", label=f"G_H - G_G, {side}")
        if t:
            diff.plot(sorted(t), [5 * t[n] for n in sorted(t)], style, marker="x", label=f"5T, {side}")
    ax.set_yscale("log")
    diff.set_yscale("symlog", linthresh=0.1)  # the difference may be negative at small orders
    for a, title in ((ax, "time of A*B + C*D"), (diff, "what staging adds, and the seed's 5T")):
        log2_x_panel(a, "matrix order", "ms", title)
    fig.suptitle("kvmtool-gpu bench multigpu")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def plot_share(rows, out):
    works = sorted({r["work"] for r in rows})
    fig, axes = plt.subplots(1, max(len(works), 1), figsize=(5.5 * max(len(works), 1), 4.5), squeeze=False)
    for ax, work in zip(axes[0], works):
        unit = next(r["unit"] for r in rows if r["work"] == work)
        for side, style in (("guest", "-"), ("native", "--")):
            groups = {}
            for r in rows:
                if r["work"] == work and r["side"] == side and r["status"] == "ok":
                    groups.setdefault(int(r["members"]), []).append(float(r["rate"]))
            ns = sorted(groups)
            if not ns:
                continue
            label = "VMs" if side == "guest" else "native processes"
            ax.plot(ns, [sum(groups[n]) for n in ns], style, marker="o", label=f"aggregate, N {label}")
            ax.plot(ns, [min(groups[n]) for n in ns], style, marker="v", alpha=0.6, label=f"slowest member, {label}")
        log2_x_panel(ax, "N at once on one GPU", unit, work)
    fig.suptitle("kvmtool-gpu bench share")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


PLOTS = {"bandwidth": plot_bandwidth, "calls": plot_calls, "multigpu": plot_multigpu, "share": plot_share}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in PLOTS:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[2], newline="") as f:
        rows = list(csv.DictReader(f))
    if not any(r.get("status", "ok") == "ok" for r in rows):
        print(f"plot_bench: {sys.argv[2]}: no completed measurement to plot", file=sys.stderr)
        return 1
    PLOTS[sys.argv[1]](rows, sys.argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
