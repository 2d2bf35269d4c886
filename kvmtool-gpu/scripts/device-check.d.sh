# Sourced at the end of device-check.sh on the GPU machine ($repo, $bin,
# $out, want, step and note come from there): the bandwidth study on the
# CUDA backend, each run with its native baseline measured first in the same
# run. Results: $out/bandwidth-*/ (CSV, JSON, markdown, PNG if matplotlib is
# there); the markdown tables are appended to the summary.
#
# Two parts, one device call each (10 minutes): `bench` (the probe, and
# guest RAM on 2 MiB pages) and `bench2` (every strategy side by side, and
# 4 KiB and 1 GiB host pages); the call benchmark is device-check.sh's
# `calls` part. The judged cells (pinned, and pageable through the device
# walk, at 64 MiB..1 GiB) take 3 trials each and are judged on medians (with
# ring-3 guests the whole `bench` part takes ~20 s); the comparison of every
# strategy takes 1 trial and stops at 256 MiB. GViM's three modes: the
# judged steps take every kind (twocopy, GViM's 2-copy, among them) and the
# steps that name their kinds name twocopy too, so each markdown has its
# "GViM's modes" table (2-copy: twocopy, 1-copy: bounce, bypass). Each step
# has a time limit; the drivers rewrite their CSV/JSON/markdown after every
# result, so a step cut short keeps what it measured (and says FAILED rc=124).
bench=("$bin/kvmtool-gpu" bench)
common=(--vgpu cuda --plot-script "$repo/kvmtool-gpu/bench/plot_bench.py")
judged=(--sizes 64M,256M,1G --strategies walk --trials 3)

if want bench; then
  note "== bench: the probe, and guest RAM on 2 MiB host pages"
  # First the hardware's ceiling, without a VM: SM and TMA reads (and writes)
  # of shuffled 4 KiB host pages against the copy engine (bench/probes/).
  if [ -x "$bin/sysmem_read_probe" ]; then
    step probe-sysmem-read timeout 60 "$bin/sysmem_read_probe"
    grep -v '^round ' "$out/probe-sysmem-read.log" | sed 's/^/    /' | tee -a "$summary"
  else
    note "probe-sysmem-read            skipped: no sysmem_read_probe in .carry/bin (built where nvcc is)"
  fi
  # The targets' case: 4 KiB guest pages on 2 MiB host pages, pinned and walk.
  step bench-bandwidth-hp2M-gp4K timeout 330 "${bench[@]}" bandwidth "${common[@]}" "${judged[@]}" \
    --host-pages 2M --guest-pages 4K --out "$out/bandwidth-hp2M-gp4K"
  # 2 MiB guest pages (few, large SG entries): the walk and the VMM-built table.
  step bench-bandwidth-hp2M-gp2M timeout 90 "${bench[@]}" bandwidth "${common[@]}" --kinds pageable,twocopy \
    --sizes 64M,256M,1G --strategies walk,gather --trials 3 --host-pages 2M --guest-pages 2M \
    --out "$out/bandwidth-hp2M-gp2M"
fi

if want bench2; then
  note "== bench2: every strategy, and 4 KiB and 1 GiB host pages"
  # Every strategy side by side, small to 256 MiB (the naive ones to 16 MiB),
  # with pinned and twocopy: GViM's 2-copy, 1-copy and bypass in one table.
  step bench-bandwidth-strategies timeout 150 "${bench[@]}" bandwidth "${common[@]}" --kinds pinned,pageable,twocopy \
    --sizes 4K,64K,1M,16M,64M,256M --slow-max 16M --host-pages 2M --guest-pages 4K --out "$out/bandwidth-strategies"
  step bench-bandwidth-hp4K-gp4K timeout 300 "${bench[@]}" bandwidth "${common[@]}" "${judged[@]}" \
    --host-pages 4K --guest-pages 4K --out "$out/bandwidth-hp4K-gp4K"
  # Guest RAM on 1 GiB pages, where the pool has the two pages a 1 GiB sweep needs.
  if [ "$(cat /sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages 2>/dev/null || echo 0)" -ge 2 ]; then
    step bench-bandwidth-hp1G-gp4K timeout 100 "${bench[@]}" bandwidth "${common[@]}" --sizes 256M,1G \
      --strategies walk --host-pages 1G --guest-pages 4K --out "$out/bandwidth-hp1G-gp4K"
  else
    note "bench-bandwidth-hp1G-gp4K      skipped: fewer than 2 free 1 GiB huge pages"
  fi
fi

for d in bandwidth-hp2M-gp4K bandwidth-hp2M-gp2M bandwidth-strategies bandwidth-hp4K-gp4K bandwidth-hp1G-gp4K; do
  md=$(ls "$out/$d"/*.md 2>/dev/null | head -1)
  [ -n "$md" ] || continue
  note ""
  note "--- $d"
  tee -a "$summary" <"$md"
done
