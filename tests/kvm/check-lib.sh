# Sourced (". check-lib.sh") by the tests/kvm scripts that run a list of
# checks: a scratch directory $work, removed at exit; check, which prints
# ok or FAILED for one check and counts the failures; has, a text in
# $work/out; checks_done, the closing verdict and the exit status.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() { # description, command...: the command must succeed
    what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
has() { grep -qF -- "$1" "$work/out"; }
checks_done() { # what the checks were of ("Linux-ABI guest"): exits 1 if any failed
    [ "$failures" -eq 0 ] || { echo "$failures $1 check(s) failed"; exit 1; }
    echo "all $1 checks passed"
}
