#!/usr/bin/env bash
# run-ordinary-samples.sh over a made-up pack and a fake VMM that runs the
# program from "/" as the guest's working directory is, printing the VMM's
# result line with the program's own exit code: the table must say what
# each side did, with the same arguments on both, the guest's first error
# line where it failed, and skip what the manifest says to skip.
# Usage: run-ordinary-samples-test.sh RUN_ORDINARY_SAMPLES_SH
set -u
runner=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
failures=0
check() { # WHAT COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAILED: $1"; failures=$((failures + 1)); fi
}

mkdir -p "$t/pack/suite/ok" "$t/pack/suite/cwd/data" "$t/pack/suite/waive" "$t/pack/suite/skipme"
printf '#!/bin/sh\necho "args: $*"; echo "Test passed"\n' >"$t/pack/suite/ok/ok"
printf '#!/bin/sh\n[ -f data/input ] || { echo "error: no data/input here"; exit 1; }\necho "Test passed"\n' >"$t/pack/suite/cwd/cwd"
echo input >"$t/pack/suite/cwd/data/input"
printf '#!/bin/sh\necho "waiving"; exit 2\n' >"$t/pack/suite/waive/waive"
printf '#!/bin/sh\nexit 0\n' >"$t/pack/suite/skipme/skipme"
chmod +x "$t"/pack/suite/*/*
printf 'id\tfolder\tprogram\targs\tnote\n' >"$t/pack/manifest.tsv"
printf 'ok#1\tsuite/ok\tok\t-n=1 -file=data/x.ppm\t\n' >>"$t/pack/manifest.tsv"
printf 'cwd\tsuite/cwd\tcwd\t\t\n' >>"$t/pack/manifest.tsv"
printf 'waive\tsuite/waive\twaive\t\tneeds 2 GPUs (test_args.json)\n' >>"$t/pack/manifest.tsv"
printf 'skipme\tsuite/skipme\tskipme\t\tskip (test_args.json)\n' >>"$t/pack/manifest.tsv"
printf 'absent\tsuite/absent\tabsent\t\t\n' >>"$t/pack/manifest.tsv"

cat >"$t/vmm" <<'VMM'
#!/usr/bin/env bash
# run --root / --guest PROG --share DIR ... -- ARGS: PROG from "/".
[ "$1" = run ] || exit 2
shift
prog= root= share= args=()
while [ $# -gt 0 ]; do
  case $1 in
    --guest) prog=$2; shift 2 ;;
    --root) root=$2; shift 2 ;;
    --share) share=$2; shift 2 ;;
    --mem|--timeout|--vgpu) shift 2 ;;
    --) shift; args=("$@"); break ;;
    *) echo "fake vmm: unknown $1"; exit 2 ;;
  esac
done
[ "$root" = / ] && [ -d "$share" ] && [ "$(dirname "$prog")" = "$share" ] || { echo "fake vmm: bad options"; exit 2; }
out=$(cd / && "$prog" "${args[@]}" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/guest: /'
echo "kvmtool-gpu: result: guest-exit, exit code $rc ($([ $rc = 0 ] && echo pass || echo FAIL))"
[ $rc = 0 ]
VMM
chmod +x "$t/vmm"

TIMEOUT=20 JOBS=2 bash "$runner" "$t/vmm" "$t/pack" "$t/out" --vgpu cuda >"$t/run.log" 2>&1
check "the runner exits 0" [ $? = 0 ]
sed 's/^/    /' "$t/run.log"
row() { awk -F'\t' -v s="$1" '$1 == s { print $2 "|" $3 "|" $6 }' "$t/out/table.tsv"; }
check "ok passes on both sides" [ "$(row 'ok#1')" = "pass|pass|" ]
check "ok got the same arguments on both sides" \
  [ "$(grep -h '^\(guest: \)\?args:' "$t/out/logs/native-ok_1.log" "$t/out/logs/guest-ok_1.log" | sed 's/^guest: //' | sort -u)" = \
    "args: -n=1 -file=data/x.ppm" ]
check "cwd passes natively, fails as a guest with its first error line" \
  [ "$(row cwd)" = "pass|fail (1)|guest: error: no data/input here" ]
check "waive: the guest's own exit code 2 read from the VMM's result line" [ "$(row waive)" = "waived|waived|" ]
check "skipme is not run" [ "$(row skipme)" = "skipped|skipped|skip (test_args.json)" ]
check "a folder not packed is counted, not run" [ "$(row absent)" = "not packed|not packed|" ]
check "the summary counts what passed" \
  grep -q '^run-ordinary-samples: 5 runs; natively pass 2, as guests pass 1; of those passing natively, 1 pass as guests; not as guests: cwd$' "$t/run.log"
check "table.md has a row per run" [ "$(grep -c '^| ' "$t/out/table.md")" = 7 ]
DEADLINE=0 TIMEOUT=20 bash "$runner" "$t/vmm" "$t/pack" "$t/late" >/dev/null 2>&1
check "past DEADLINE nothing starts" [ "$(awk -F'\t' '$1 == "ok#1" { print $2 }' "$t/late/table.tsv")" = "not run" ]
[ "$failures" = 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all run-ordinary-samples checks passed"
