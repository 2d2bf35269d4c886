// Turning StudyResults into files and a page: a tidy CSV (one measurement
// per row), a JSON document with the machine description and every result,
// and the markdown tables `bench tlb` prints.
//
// CSV columns: section,label,guest_pages,host_pages,bytes,metric,value,unit,emulated
//   section  native_chase | guest_chase | guest_counters | kvm_stats | translate | sg | backing
//   bytes    working set, transfer or mapping size (empty where none)
//   emulated 1 when the code that produced the figure ran under an emulator
//            (guest code under kvm-pvm / TCG, or a TCG-emulated host)
// Rows exist only for values that were measured: no PMU, no counter rows.
#pragma once

#include <ostream>
#include <string>

#include "tlb-study/tlb_study.h"

namespace tlbstudy {

void write_csv(const StudyResults& r, std::ostream& os);
void write_json(const StudyResults& r, std::ostream& os);
void write_markdown(const StudyResults& r, std::ostream& os);

// Throws std::runtime_error naming the file when it cannot be written.
void write_file(const std::string& path, const StudyResults& r, void (*writer)(const StudyResults&, std::ostream&));

} // namespace tlbstudy
