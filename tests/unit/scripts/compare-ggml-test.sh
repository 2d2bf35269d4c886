#!/usr/bin/env bash
# compare_ggml.py on made-up test-backend-ops logs (its console format, colour
# codes included): the same outcomes pass, a case that passes natively and
# fails as a guest fails, and perf mode gives guest/native per op.
set -euo pipefail
compare=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ok=$'\033[1;32mOK\033[0m' fail=$'\033[1;31mFAIL\033[0m'
cat >"$dir/native.log" <<LOG
Testing 2 devices

Backend 1/2: CUDA0
  MUL_MAT(type_a=f16,type_b=f32,m=16,n=1,k=256,bs=[1,1]): $ok
  ADD(type=f32,ne=[10,5,4,3]): $ok
  ROPE(type=f32,mode=8): not supported [CUDA0]
  2/2 tests passed
LOG
sed 's/^/guest: /' "$dir/native.log" >"$dir/same.log"
sed "s/ADD(type=f32,ne=\[10,5,4,3\]): .*/ADD(type=f32,ne=[10,5,4,3]): $fail/" "$dir/native.log" >"$dir/fails.log"
python3 "$compare" test "$dir/native.log" "$dir/same.log" >"$dir/out" || { cat "$dir/out"; echo "FAIL: same runs reported different"; exit 1; }
grep -q '| native | 3 | 2 | 0 | 1 |' "$dir/out" || { cat "$dir/out"; echo "FAIL: native counts"; exit 1; }
if python3 "$compare" test "$dir/native.log" "$dir/fails.log" >"$dir/out"; then echo "FAIL: a guest failure passed"; exit 1; fi
grep -q 'ADD(type=f32,ne=\[10,5,4,3\]): native OK, guest FAIL' "$dir/out" || { cat "$dir/out"; exit 1; }
if python3 "$compare" test "$dir/native.log" /dev/null >"$dir/out"; then echo "FAIL: an empty guest log passed"; exit 1; fi

cat >"$dir/perf-native.log" <<'LOG'
  MUL_MAT(type_a=f16,m=4096):                 200 runs -   400.00 us/run -  137.44 GFLOP/run - 343.60 TFLOPS
  MUL_MAT(type_a=q4_0,m=4096):                200 runs -   100.00 us/run -  137.44 GFLOP/run - 343.60 TFLOPS
  ADD(type=f32,ne=[4096,512,1,1]):           8192 runs -    10.00 us/run -    24576 kB/run -  2343.75 GB/s
LOG
cat >"$dir/perf-guest.log" <<'LOG'
guest:   MUL_MAT(type_a=f16,m=4096):                 200 runs -   404.00 us/run -  137.44 GFLOP/run - 340.20 TFLOPS
guest:   MUL_MAT(type_a=q4_0,m=4096):                200 runs -   120.00 us/run -  137.44 GFLOP/run - 286.33 TFLOPS
guest:   ADD(type=f32,ne=[4096,512,1,1]):           8192 runs -    10.50 us/run -    24576 kB/run -  2232.14 GB/s
LOG
python3 "$compare" perf "$dir/perf-native.log" "$dir/perf-guest.log" >"$dir/out" || { cat "$dir/out"; exit 1; }
grep -q 'cases of 100 us or more natively: 2; guest/native time median 1.105, min 1.010, max 1.200; within 5%: 1' "$dir/out" ||
  { cat "$dir/out"; echo "FAIL: perf summary"; exit 1; }
grep -q '| MUL_MAT | 2 | 1.105 | 1.010 | 1.200 |' "$dir/out" || { cat "$dir/out"; echo "FAIL: per-op table"; exit 1; }
grep -q 'MUL_MAT(type_a=q4_0,m=4096): 100.00 us native, 120.00 us guest' "$dir/out" || { cat "$dir/out"; exit 1; }
echo "compare_ggml: all checks passed"
