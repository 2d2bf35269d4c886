#!/usr/bin/env bash
# compare_ml.py on made-up runs: the same values pass, a guest failure or a
# differing value fails, and guest lines keep the VMM's "guest: " prefix.
set -euo pipefail
compare=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/native.log" <<'LOG'
{"check": "sum", "ok": true, "values": {"s": 1.0, "v": [1, 2]}, "rate": 100.0}
{"check": "copy", "ok": true, "values": {"e": 0.0}, "rate": null}
LOG
sed 's/^/guest: /' "$dir/native.log" >"$dir/same.log"
sed 's/"s": 1.0/"s": 1.5/' "$dir/same.log" >"$dir/differs.log"
sed 's/{"check": "copy".*/{"check": "copy", "ok": false, "error": "boom"}/' "$dir/same.log" >"$dir/fails.log"
python3 "$compare" "$dir/native.log" "$dir/same.log" >"$dir/out" || { cat "$dir/out"; echo "FAIL: same runs reported different"; exit 1; }
grep -q '| sum | ok | ok | yes | 1.000' "$dir/out" || { cat "$dir/out"; echo "FAIL: no rate ratio"; exit 1; }
if python3 "$compare" "$dir/native.log" "$dir/differs.log" >"$dir/out"; then echo "FAIL: a differing value passed"; exit 1; fi
grep -q '| sum | ok | ok | NO' "$dir/out" || { cat "$dir/out"; exit 1; }
if python3 "$compare" "$dir/native.log" "$dir/fails.log" >"$dir/out"; then echo "FAIL: a guest failure passed"; exit 1; fi
grep -q 'guest differs from native: copy' "$dir/out" || { cat "$dir/out"; exit 1; }
echo "compare_ml: all checks passed"
