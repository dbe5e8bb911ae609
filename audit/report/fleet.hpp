// The results of a fleet (`gpuparanoia fleet`): devices grouped by model and driver, and within a
// group by their identified arithmetic (arithmetic_of: the profile, validation counts aside). A
// device is an outlier when its arithmetic differs from the one most devices of its group share
// (in a group with no such majority, the devices whose results alone contradict themselves least set
// it, else every device is one), or when its check (audit/health_check.hpp) failed; each says what
// differs (compare's leaves, and where its profile contradicts its own findings) or which check failed.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "audit/report/compare.hpp"

namespace gp::audit {

struct FleetOutlier {
  std::string file, device;             // the result file, and "<node> <device id>"
  std::string why;                      // "arithmetic differs", "check failed", "no majority"
  std::vector<Difference> differences;  // A: the group's arithmetic, B: this device's; or the failed checks
};

// The devices of one model and driver, through one backend and build variant ("rte" of vulkan:0+rte:
// its kernels compiled in another float mode compute otherwise by design).
struct FleetGroup {
  std::string name, driver, backend, variant;
  std::size_t devices = 0, audits = 0, checks = 0;
  std::size_t arithmetics = 0;  // distinct identified arithmetics among the audits
  std::vector<FleetOutlier> outliers;
  // The results whose profile contradicts their own findings (edited after the run, or a fault of
  // the tool's assembly), outliers or not: file, and the findings contradicted.
  std::vector<std::pair<std::string, std::vector<std::string>>> self_contradictory;
};

struct Fleet {
  std::size_t results = 0;
  std::vector<FleetGroup> groups;  // by model, then driver
  std::size_t outliers() const;
};

// What fleet_of reads of a result (its device, host, run and profile, and a check's findings without
// their observations), with where its profile contradicts its own findings
// (audit/self_consistency.hpp): a fleet's thousands of results held at once take little memory.
nlohmann::json fleet_part(const nlohmann::json& doc, const std::vector<std::string>& self_contradictions);
// `docs`: each result file's path and document (audits and checks alike), whole or their fleet_part.
Fleet fleet_of(const std::vector<std::pair<std::string, nlohmann::json>>& docs);
std::string fleet_text(const Fleet& f);
std::string fleet_markdown(const Fleet& f);
nlohmann::json fleet_json(const Fleet& f);

}  // namespace gp::audit
