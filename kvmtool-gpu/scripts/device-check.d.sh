# Sourced at the end of device-check.sh on the GPU machine ($repo, $bin,
# $out, step and note come from there): the bandwidth study (issue 4) and
# the call-overhead study (issue 6), full sweeps on the CUDA backend, each
# with its native baseline in the same run. Results: $out/bandwidth-*/ and
# $out/calls/ (CSV, JSON, markdown, PNG if matplotlib is there); the
# markdown tables are appended to the summary.
#
# Time: about 3 minutes expected, 7.3 at most (the sum of the limits). Each step has a time limit;
# the drivers rewrite their CSV/JSON/markdown after every VM, so a step cut
# short still leaves what it measured (and says FAILED rc=124). 1 GiB copies
# run only where the targets are judged: pinned buffers, and pageable ones
# through the gather kernel (and auto, which picks it); the naive
# strategies stop at 256 MiB.
bench=("$bin/kvmtool-gpu" bench)
common=(--vgpu cuda --plot-script "$repo/kvmtool-gpu/bench/plot_bench.py")
bw_sizes=4K,64K,1M,16M,64M,256M,1G

note "== bench bandwidth (issue 4) and bench calls (issue 6)"
# First the hardware's ceiling, without a VM: SM and TMA reads (and writes)
# of shuffled 4 KiB host pages against the copy engine (bench/probes/).
if [ -x "$bin/sysmem_read_probe" ]; then
  step probe-sysmem-read timeout 60 "$bin/sysmem_read_probe"
  grep -v '^round ' "$out/probe-sysmem-read.log" | sed 's/^/    /' | tee -a "$summary"
else
  note "probe-sysmem-read            skipped: no sysmem_read_probe in .carry/bin (built where nvcc is)"
fi
# The main run: guest RAM on 2 MiB pages, 4 KiB guest pages, every kind and strategy.
step bench-bandwidth-hp2M-gp4K timeout 120 "${bench[@]}" bandwidth "${common[@]}" --sizes "$bw_sizes" --slow-max 256M \
  --host-pages 2M --guest-pages 4K --out "$out/bandwidth-hp2M-gp4K"
# 2 MiB guest pages (fewer, larger SG entries): pageable buffers only.
step bench-bandwidth-hp2M-gp2M timeout 40 "${bench[@]}" bandwidth "${common[@]}" --sizes "$bw_sizes" --slow-max 64M \
  --host-pages 2M --guest-pages 2M --kinds pageable --out "$out/bandwidth-hp2M-gp2M"
# Guest RAM on 4 KiB host pages.
step bench-bandwidth-hp4K-gp4K timeout 80 "${bench[@]}" bandwidth "${common[@]}" --sizes "$bw_sizes" --slow-max 64M \
  --host-pages 4K --guest-pages 4K --out "$out/bandwidth-hp4K-gp4K"
# Guest RAM on 1 GiB pages, where the pool has the two pages a 1 GiB sweep needs.
if [ "$(cat /sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages 2>/dev/null || echo 0)" -ge 2 ]; then
  step bench-bandwidth-hp1G-gp4K timeout 40 "${bench[@]}" bandwidth "${common[@]}" --sizes 64M,256M,1G --strategies auto,gather \
    --host-pages 1G --guest-pages 4K --out "$out/bandwidth-hp1G-gp4K"
else
  note "bench-bandwidth-hp1G-gp4K      skipped: fewer than 2 free 1 GiB huge pages"
fi
# Calls: one VM per doorbell; the polling executor spins 2 ms after each
# command (the emulated guest is slow between calls; see docs/results/calls.md).
step bench-calls timeout 60 "${bench[@]}" calls "${common[@]}" --poll-spin-us 2000 --out "$out/calls"
# The same with CUDA in the VMM process (--gpu-worker inline): what the
# worker process's round trip adds to every call.
step bench-calls-inline timeout 40 "${bench[@]}" calls "${common[@]}" --poll-spin-us 2000 --gpu-worker inline \
  --out "$out/calls-inline"

for d in bandwidth-hp2M-gp4K bandwidth-hp2M-gp2M bandwidth-hp4K-gp4K bandwidth-hp1G-gp4K calls calls-inline; do
  md=$(ls "$out/$d"/*.md 2>/dev/null | head -1)
  [ -n "$md" ] || continue
  note ""
  note "--- $d"
  tee -a "$summary" <"$md"
done
