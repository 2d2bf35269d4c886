// `kvmtool-gpu bench tlb`: the TLB and translation-cost study (tlb-study/):
// native pointer chase per backing page size, the VMM's translation work,
// and the guest pointer chase per (guest pages x host backing) when
// /dev/kvm opens; markdown on stdout, progress on stderr, CSV/JSON/PNG on
// request.
#pragma once

#include <string>
#include <vector>

namespace kvmgpu::cli {
int bench_tlb_command(const std::vector<std::string>& args);
const char* bench_tlb_help();
} // namespace kvmgpu::cli
