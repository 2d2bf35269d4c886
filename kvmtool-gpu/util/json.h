// JSON for the result files: nlohmann's, with keys kept in the order they
// are set (people read these files too). Non-finite numbers become null.
#pragma once

#include <nlohmann/json.hpp>

namespace kvmgpu {

using Json = nlohmann::ordered_json;

// The text of a result file: two-space indent, a final newline.
inline std::string json_text(const Json& j) { return j.dump(2) + "\n"; }

} // namespace kvmgpu
