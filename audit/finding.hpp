// What a probe concludes: status, a one-line verdict in Paranoia's voice,
// inferred parameters, and the observations that justify them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "audit/answer.hpp"
#include "backends/expected.hpp"
#include "backends/reference/unit_schema.hpp"

namespace gp::audit {

enum class Status { ok, unsupported, error };
std::string_view name(Status s);

// One evaluation on the device: its inputs, its output, and each hypothesis' prediction.
struct Observation {
  std::vector<std::uint64_t> inputs;
  std::uint64_t output = 0;
  std::vector<std::pair<std::string, std::uint64_t>> predictions;
  int input_bits = 32, output_bits = 32;  // storage widths, for hex rendering
  std::string note;                       // what the case is ("1.5 - 2^-26")
};

enum class Conclusion { stated, inconclusive, not_applicable, unexplained };

// A probe's judgement of the candidate models (verdict.hpp, judge): which case it is, the one answer
// left where it is stated, the verdict, and the survivors listed (as the finding writes them).
struct Judgement {
  Conclusion conclusion = Conclusion::unexplained;
  Answer answer;  // the one answer (stated), else none
  std::string verdict;
  nlohmann::json candidates = nlohmann::json::array();
  std::size_t survivors = 0;  // how many candidates reproduce every observation (candidates lists some)
};

struct Finding {
  std::string probe;   // stable id, "scalar.add.guard_bits"
  std::string format;  // format name for scalar probes
  std::string config;  // MMA configuration name for MMA probes
  std::string title;
  std::string source;
  Status status = Status::ok;
  std::string verdict;                                   // "ADDITION: chopped, 2 guard bits"
  nlohmann::json parameters = nlohmann::json::object();  // everything the probe inferred
  // What the finding states of the format's scalar unit (a scalar probe's), merged into its
  // profile.scalar[format] by the runner.
  backends::ScalarProfile profile;
  std::string message;    // why unsupported, what failed, or remarks
  std::string published;  // what a source published for this probe on this device (DeviceInfo::published)
  // The judgement of a probe that concludes from candidate models (verdict.hpp, apply), typed, for the
  // probe's own code after it; not written (its parameters are) and not read back from a document.
  std::optional<Judgement> judgement;
  double duration_s = 0;
  std::vector<Observation> observations;
};

Finding unsupported(std::string why);
Finding failed(std::string why);
// What an error ends a probe with: `unsupported` where the device lacks what the probe needs (a
// format, an operation, a buffer large enough: ErrorKind::unsupported), else `error`.
Status status_of(const Error& e);
// The finding of a probe that an error ended: status_of(e), e's message.
Finding failed(const Error& e);

}  // namespace gp::audit
