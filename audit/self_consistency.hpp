// Whether a result's profile says what its own findings stated: the unit its profile describes,
// asked each stated scalar question (ScalarProbe::ask), must give the answer the finding recorded,
// and each identified MMA configuration's profile entry must be the model the identification
// stated. A genuine result contradicts itself nowhere the model describes; a result edited after the
// run (a profile changed in one parameter) does where the edit shows. `fleet` uses it to tell which
// of two results of one device that disagree was changed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gp::audit {

// The findings the profile contradicts, "scalar.add.guard_bits [binary32]: rounding", in document
// order; none where the result holds no profile the model reads.
std::vector<std::string> self_contradictions(const nlohmann::json& result);

}  // namespace gp::audit
