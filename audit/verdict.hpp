// The one way a probe concludes: from the candidate models that reproduce every output bit of its
// observations. A candidate is a model object (a scalar unit's parameters, an MMA algorithm with
// its parameters, a summation tree); the probe asks one question of it, and the candidate's answer
// comes from its parameters, never from the outputs. The verdict is what the surviving candidates'
// answers imply (docs/ARCHITECTURE.md, "How a verdict is decided"):
//   - one answer left: the verdict states it;
//   - several answers: "inconclusive: ...", what they share and where they differ;
//   - the question does not apply to any survivor (carry-out bits of an FMA chain):
//     "not applicable: ...";
//   - no candidate reproduces the outputs: said, with the closest candidates and the first
//     observation they get wrong.
// The verdict's parameters.candidates lists the survivors (one per distinct answer and model).
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "audit/answer.hpp"
#include "audit/finding.hpp"

namespace gp::audit {

// One candidate as a probe sees it.
struct Candidate {
  std::string model;          // the model's name: "fda", "ieee", "chopped adder"
  nlohmann::json parameters;  // the model's parameters, as the profile writes them
  // The probe's question asked of this candidate (answer.hpp), none when the question does not
  // apply to this kind of unit.
  Answer answer;
};

// Where the closest candidates went wrong, for the verdict when none is left.
struct Miss {
  std::string model;      // the candidate, as Candidate::model plus its parameters
  std::size_t wrong = 0;  // observations it gets wrong
  std::string first;      // the first of them: "1 + 2^-24: device 3f800000, model 3f800001"
};

// `question` names what the probe asks ("CARRIES", "the carry-out bits of a fixed-point
// accumulator"): the first is the verdict's head, the second the not-applicable/inconclusive
// wording. `say` renders one answer in the probe's voice ("every carry kept up to 5 summands"),
// from the answer's own type (answer.hpp, typed).
struct Question {
  std::string head;   // "CARRIES"
  std::string about;  // "the carry-out bits of a fixed-point accumulator"
  std::function<std::string(const Answer&)> say;
};

// The verdict from the survivors (candidates that reproduce every observation). `misses` are
// used only when no candidate survives: the closest first.
Judgement judge(const Question& q, std::span<const Candidate> survivors, std::span<const Miss> misses = {});

// Writes a judgement into a finding: the verdict, parameters.candidates, parameters.survivors,
// parameters.conclusion, and the stated answer's values as parameters (only when one answer is left);
// the finding keeps the judgement itself (Finding::judgement).
void apply(const Judgement& j, Finding& f);

// The values of a record as "key value, key value" (strings bare, others as JSON): an answer's
// fields, a candidate's parameters.
std::string render(const nlohmann::json& fields);
inline std::string render(const Answer& answer) { return render(answer.fields()); }

}  // namespace gp::audit
