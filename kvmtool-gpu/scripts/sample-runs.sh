# Sourced by run-nvidia-samples.sh and run-ordinary-samples.sh (POSIX sh):
# runs one side of a sample with its output in a log and its wall time, and
# appends the row runs.tsv keeps for it (sample, side, exit, seconds, pass
# line, timing, first error line). The program's own lines only are read: a
# guest's carry "guest: ", and the VMM's own "kvmtool-gpu:" lines, which hold
# times too, are left out of the pass line and timing.

sample_runs_header() { # RUNS_TSV
  printf 'sample\tside\texit\tseconds\tpass line\ttiming\terror\n' >"$1"
}

# Runs COMMAND in WORK_DIR with stdout and stderr in LOG; sets run_rc and run_seconds.
sample_run_timed() { # LOG WORK_DIR COMMAND...
  _log=$1 _dir=$2
  shift 2
  _t0=$(date +%s.%N)
  (cd "$_dir" && "$@") >"$_log" 2>&1
  run_rc=$?
  run_seconds=$(awk -v a="$_t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
}

# The first line of a failed run that says why: the program's, else the VMM's error.
sample_first_error() { # LOG
  grep -v -E '^kvmtool-gpu: (timing|vGPU|vCPU|guest code|system calls|result)' "$1" |
    grep -m1 -iE 'error|fail|abort|fault|refused|not supported|cannot|unable|no such|invalid|timed out|terminate|signal' |
    tr '\t' ' ' | cut -c1-160
}

sample_record() { # RUNS_TSV SAMPLE SIDE RC SECONDS LOG PREFIX
  _pass=$(grep -v '^kvmtool-gpu:' "$6" | grep -m1 -iE 'passed|failed|result = |waiv' | tr '\t' ' ' | cut -c1-120)
  _timing=$(grep -v '^kvmtool-gpu:' "$6" | grep -E '[Tt]ime[ =:(]|GB/s|GFlop|Throughput|Performance|[0-9] ?(ms|msec|sec|s)\b' |
    head -3 | tr '\t\n' '  ' | cut -c1-200)
  _error=
  [ "$4" = 0 ] || _error=$(sample_first_error "$6")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$2" "$3" "$4" "$5" "$_pass" "$_timing" "$_error" >>"$1"
  echo "$7: $2 $3: exit $4, ${5}s: $_pass"
}
