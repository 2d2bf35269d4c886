#!/usr/bin/env python3
"""Medians over several `bench calls` runs (each its own native baseline).

Usage: calls_medians.py RUN_DIR...   (each holding calls.csv and calls.json)

Prints a markdown table: per guest mode and metric, the median of the runs'
rate against native (asynchronous metrics) or us above native (round
trips), the runs' values in brackets, and the median share of one core the
VMM (but its vCPU) and the GPU worker used while the guest idled.
"""
import csv
import json
import statistics
import sys


def load(run):
    with open(f"{run}/calls.csv") as f:
        rows = list(csv.DictReader(f))
    with open(f"{run}/calls.json") as f:
        meta = json.load(f).get("meta", {})
    return rows, meta


def main(runs):
    cells = {}  # (mode, metric) -> [value per run]
    kinds = {}
    idle = {}  # doorbell -> [pct per run]
    for run in runs:
        try:
            rows, meta = load(run)
        except (OSError, ValueError) as e:
            print(f"- {run}: unreadable ({e})")
            continue
        for r in rows:
            if r["source"] != "guest" or r["status"] != "ok":
                continue
            key = (r["mode"], r["metric"])
            if r["rate_vs_native"]:
                cells.setdefault(key, []).append(100 * float(r["rate_vs_native"]))
                kinds[key] = "% of native rate"
            elif r["excess_ns_vs_native"]:
                cells.setdefault(key, []).append(float(r["excess_ns_vs_native"]) / 1000)
                kinds[key] = "us above native"
        for k, v in meta.items():
            if v in ("", "unknown"):
                continue
            if k.startswith("idle_vmm_worker_cpu_pct."):
                idle.setdefault(k.split(".", 1)[1] + " idle", []).append(float(v))
            elif k.startswith("vmm_worker_cpu_pct."):  # .<bell>.<metric>.<batching>: CPU while that row ran
                bell, metric, batching = k.split(".", 1)[1].split(".")
                idle.setdefault(f"{bell} batching {batching} during {metric}", []).append(float(v))
    print(f"Medians of {len(runs)} runs (each against its own native baseline, same run)\n")
    print("| mode | metric | median | unit | runs |")
    print("| --- | --- | ---: | --- | --- |")
    for (mode, metric), vals in sorted(cells.items()):
        runs_text = ", ".join(f"{v:.2f}" for v in vals)
        print(f"| {mode} | {metric} | **{statistics.median(vals):.2f}** | {kinds[(mode, metric)]} | {runs_text} |")
    for bell, vals in sorted(idle.items()):
        runs_text = ", ".join(f"{v:.3f}" for v in vals)
        print(f"| guest {bell} | VMM (but vCPU) + worker CPU | **{statistics.median(vals):.3f}** | % of one core | {runs_text} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
