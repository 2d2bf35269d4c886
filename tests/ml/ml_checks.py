"""What the ML check scripts share: a check runs, and prints one JSON line
(name, whether it passed, the values to compare between a native and a guest
run, a rate where it times one, its seconds); a check that raises is reported
and the rest go on; finish() prints the summary line and gives the exit code."""
import json
import sys
import time
import traceback

RESULTS = []


def check(name):
    def run(fn):
        start = time.perf_counter()
        try:
            values, rate = fn()
            line = {"check": name, "ok": True, "values": values, "rate": rate}
        except Exception as e:  # reported, not hidden: the next check still runs
            line = {"check": name, "ok": False, "error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
            traceback.print_exc(file=sys.stderr)
        line["seconds"] = round(time.perf_counter() - start, 4)
        print(json.dumps(line), flush=True)
        RESULTS.append(line)
        return fn
    return run


def finish():
    failed = [r["check"] for r in RESULTS if not r["ok"]]
    print(json.dumps({"summary": True, "checks": len(RESULTS), "failed": failed}), flush=True)
    sys.exit(1 if failed else 0)
