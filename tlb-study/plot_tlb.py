#!/usr/bin/env python3
"""Plots `kvmtool-gpu bench tlb --csv` output: latency per access against
working set, one line per combination (native 4K/2M/1G; guest pages x host
pages). Native and guest go on separate panels because emulated guest
figures are orders of magnitude apart from hardware ones.

usage: plot_tlb.py RESULTS.csv OUT.png
exit status: 0 plotted, 2 bad input, 3 matplotlib is not installed.
"""
import csv
import sys


def label_ws(b):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_tlb.py: matplotlib is not installed (python3-matplotlib)", file=sys.stderr)
        return 3

    series = {}   # (section, label) -> [(ws, ns)]
    emulated = {}  # section -> bool
    with open(argv[1], newline="") as f:
        for row in csv.DictReader(f):
            if row["metric"] != "ns_per_access" or row["section"] not in ("native_chase", "guest_chase"):
                continue
            key = (row["section"], row["label"])
            series.setdefault(key, []).append((int(row["bytes"]), float(row["value"])))
            emulated[row["section"]] = emulated.get(row["section"], False) or row["emulated"] == "1"
    if not series:
        print("plot_tlb.py: no ns_per_access rows in " + argv[1], file=sys.stderr)
        return 2

    sections = [s for s in ("native_chase", "guest_chase") if any(k[0] == s for k in series)]
    fig, axes = plt.subplots(1, len(sections), figsize=(7 * len(sections), 5), squeeze=False)
    for ax, section in zip(axes[0], sections):
        for (sec, label), pts in sorted(series.items()):
            if sec != section:
                continue
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = sorted({p[0] for (sec, _), pts in series.items() if sec == section for p in pts})
        step = max(1, len(ticks) // 11)
        ax.set_xticks(ticks[::step])
        ax.set_xticklabels([label_ws(t) for t in ticks[::step]], rotation=45)
        title = "native" if section == "native_chase" else "guest (guest TSC)"
        if emulated.get(section):
            title += " - EMULATED: emulator cost, not TLB cost"
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("working set (one access per 4 KiB page, random order)")
        ax.set_ylabel("ns per access")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("kvmtool-gpu bench tlb: pointer-chase latency per access")
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
