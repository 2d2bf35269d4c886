#!/usr/bin/env python3
"""Guest against native for NVIDIA's cuda-samples, from one or more runs.tsv
files of run-nvidia-samples.sh (repeated passes): per sample, the median wall
time of each side and their ratio, and the median of the sample's own first
figure (a time or a rate) and guest / native in time (for a rate,
native / guest). Prints a markdown table.
Usage: samples_compare.py RUNS.tsv [RUNS.tsv ...]"""
import csv
import re
import statistics
import sys

FIGURE = re.compile(r"([0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?)\s*(GB/s|GFlop/s|MPixels/sec|MElements/s|sims/s|"
                    r"msecs|msec|ms|sec|s)\b", re.I)
RATES = {"gb/s", "gflop/s", "mpixels/sec", "melements/s", "sims/s"}


def figure(text):
    m = FIGURE.search(text or "")
    return (float(m.group(1)), m.group(2)) if m else None


def main(paths):
    rows = {}  # sample -> side -> {"wall": [...], "fig": [...], "unit": u, "ok": n, "runs": n}
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f, delimiter="\t"):
                side = rows.setdefault(r["sample"], {}).setdefault(r["side"], {"wall": [], "fig": [], "unit": None,
                                                                             "ok": 0, "runs": 0})
                side["runs"] += 1
                if r["exit"] != "0":
                    continue
                side["ok"] += 1
                side["wall"].append(float(r["seconds"]))
                fig = figure(r["timing"])
                if fig:
                    side["fig"].append(fig[0])
                    side["unit"] = fig[1]
    print("| sample | passed (native, guest) | wall native s | wall guest s | wall guest / native "
          "| figure native | figure guest | time guest / native |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in sorted(rows, key=str.lower):
        n, g = rows[name].get("native"), rows[name].get("guest")
        if not n or not g:
            continue
        med = lambda xs: statistics.median(xs) if xs else None
        wn, wg, fn, fg = med(n["wall"]), med(g["wall"]), med(n["fig"]), med(g["fig"])
        wall_ratio = f"{wg / wn:.2f}x" if wn and wg else ""
        unit = g["unit"] or n["unit"] or ""
        time_ratio = ""
        if fn and fg:
            time_ratio = f"{(fn / fg if unit.lower() in RATES else fg / fn):.2f}x"
        fmt = lambda v: "" if v is None else f"{v:.4g} {unit}".strip()
        print(f"| {name} | {n['ok']}/{n['runs']}, {g['ok']}/{g['runs']} | {'' if wn is None else f'{wn:.2f}'} | "
              f"{'' if wg is None else f'{wg:.2f}'} | {wall_ratio} | {fmt(fn)} | {fmt(fg)} | {time_ratio} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
