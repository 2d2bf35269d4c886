"""Compares two runs of an ML check script (torch_eager_check.py,
cupy_check.py): the native one and the guest one. Prints a markdown table
(check, native, guest, values equal within tolerance, rate ratio) and exits
1 when a check passed natively but not as a guest, or their values differ.
Usage: compare_ml.py NATIVE_LOG GUEST_LOG [--rtol R]"""
import json
import math
import sys


def load(path):
    checks = {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("guest: "):  # the VMM prefixes a guest's lines
                line = line[len("guest: "):]
            if not line.startswith("{"):
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "check" in rec:
                checks[rec["check"]] = rec
    return checks


def close(a, b, rtol):
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return False
        return math.isclose(a, b, rel_tol=rtol, abs_tol=rtol)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], rtol) for k in a)
    return a == b


def main():
    args = sys.argv[1:]
    rtol = 1e-3
    if "--rtol" in args:
        i = args.index("--rtol")
        rtol = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    native, guest = load(args[0]), load(args[1])
    print("| check | natively | as a guest | same values | guest rate / native |")
    print("| --- | --- | --- | --- | --- |")
    bad = []
    for name in list(native) + [n for n in guest if n not in native]:
        n, g = native.get(name), guest.get(name)
        status = lambda r: "missing" if r is None else ("ok" if r["ok"] else "FAILED: " + r.get("error", ""))
        same = "" if not (n and g and n["ok"] and g["ok"]) else ("yes" if close(n["values"], g["values"], rtol) else "NO")
        ratio = ""
        if n and g and n.get("rate") and g.get("rate"):
            ratio = f"{g['rate'] / n['rate']:.3f} ({g['rate']} / {n['rate']})"
        print(f"| {name} | {status(n)} | {status(g)} | {same} | {ratio} |")
        if n and n["ok"] and (g is None or not g["ok"] or same == "NO"):
            bad.append(name)
    print()
    print("guest differs from native: " + (", ".join(bad) if bad else "none"))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
