"""Sets two runs of ggml's test-backend-ops side by side, native and guest,
as Markdown. Usage: compare_ggml.py test|perf NATIVE_LOG GUEST_LOG

test: each case's result (OK, FAIL, not supported) on both sides; exits 1
where a case that passes natively does not pass as a guest, or where a log
holds no case at all.
perf: each case's microseconds per run; guest over native for the cases of
100 us or more natively (issue 43's target: within 5%), median and spread,
and per op. Exits 1 only where a log holds no case."""
import re
import statistics
import sys
from collections import defaultdict

ANSI = re.compile(r"(\x1b|\\x1b)\[[0-9;]*m")  # raw, or as the VMM escapes it in "guest: " lines
CASE = re.compile(r"  ([A-Z][A-Z0-9_]*)\((.*)\): (.*)$")
PERF = re.compile(r"(\d+) runs - +([0-9.]+) us/run")


def cases(path):
    """(op, params, occurrence) -> the rest of the case's line, in order."""
    found, seen = {}, defaultdict(int)
    with open(path, errors="replace") as f:
        for line in f:
            m = CASE.search(ANSI.sub("", line.rstrip("\n")))
            if not m:
                continue
            key = (m[1], m[2])
            seen[key] += 1
            found[key + (seen[key],)] = m[3].strip()
    return found


def outcome(rest):
    if "not supported" in rest:
        return "not supported"
    if rest.startswith("skipping"):
        return "skipped"
    if rest.endswith("FAIL"):
        return "FAIL"
    return "OK" if rest.endswith("OK") else "no result"


def name(key):
    return f"{key[0]}({key[1]})"


def compare_tests(native, guest):
    count = lambda side: {o: sum(1 for r in side.values() if outcome(r) == o) for o in ("OK", "FAIL", "not supported")}
    cn, cg = count(native), count(guest)
    print("| side | cases | OK | FAIL | not supported |\n| --- | --- | --- | --- | --- |")
    print(f"| native | {len(native)} | {cn['OK']} | {cn['FAIL']} | {cn['not supported']} |")
    print(f"| guest | {len(guest)} | {cg['OK']} | {cg['FAIL']} | {cg['not supported']} |")
    lost = [k for k, r in native.items() if outcome(r) == "OK" and outcome(guest.get(k, "")) != "OK"]
    differ = [k for k, r in native.items() if k in guest and outcome(r) != outcome(guest[k])]
    print(f"\nPassing natively, not as a guest: {len(lost)}. Any difference in outcome: {len(differ)}.")
    for k in differ[:40]:
        print(f"- {name(k)}: native {outcome(native[k])}, guest {outcome(guest[k])}")
    for k in [k for k in lost if k not in guest][:20]:
        print(f"- {name(k)}: native OK, no guest result")
    return 0 if not lost else 1


def compare_perf(native, guest):
    times = lambda side: {k: float(m[2]) for k, r in side.items() if (m := PERF.search(r))}
    tn, tg = times(native), times(guest)
    both = [k for k in tn if k in tg]
    print(f"Cases timed on both sides: {len(both)} (native {len(tn)}, guest {len(tg)}).")
    if not both:
        return 1
    big = [k for k in both if tn[k] >= 100]
    for title, keys in (("every case", both), ("cases of 100 us or more natively", big)):
        if not keys:
            continue
        r = sorted(tg[k] / tn[k] for k in keys)
        within = sum(1 for x in r if x <= 1.05)
        print(f"- {title}: {len(keys)}; guest/native time median {statistics.median(r):.3f}, "
              f"min {r[0]:.3f}, max {r[-1]:.3f}; within 5%: {within}")
    by_op = defaultdict(list)
    for k in big:
        by_op[k[0]].append(tg[k] / tn[k])
    if by_op:
        print("\n| op (cases of 100 us or more) | cases | guest/native time: median | min | max |")
        print("| --- | --- | --- | --- | --- |")
        for op, r in sorted(by_op.items()):
            r.sort()
            print(f"| {op} | {len(r)} | {statistics.median(r):.3f} | {r[0]:.3f} | {r[-1]:.3f} |")
    slow = sorted(big, key=lambda k: tg[k] / tn[k], reverse=True)
    slow = [k for k in slow if tg[k] / tn[k] > 1.05][:15]
    if slow:
        print("\nSlower than native by more than 5%:")
        for k in slow:
            print(f"- {name(k)}: {tn[k]:.2f} us native, {tg[k]:.2f} us guest")
    return 0


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("test", "perf"):
        sys.exit(__doc__.splitlines()[1].strip())
    native, guest = cases(sys.argv[2]), cases(sys.argv[3])
    if not native or not guest:
        print(f"no test-backend-ops case in the {'native' if not native else 'guest'} log")
        sys.exit(1)
    sys.exit((compare_tests if sys.argv[1] == "test" else compare_perf)(native, guest))


if __name__ == "__main__":
    main()
