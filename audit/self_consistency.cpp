#include "audit/self_consistency.hpp"

#include <fmt/format.h>

#include <exception>
#include <map>

#include "audit/json_access.hpp"
#include "audit/runner.hpp"
#include "backends/reference/profile.hpp"
#include "tests_scalar/suite.hpp"

namespace gp::audit {

using nlohmann::json;

namespace {

// The stated answers of the scalar findings the profile's unit answers otherwise.
void scalar_contradictions(const json& result, const backends::Profile& profile, std::vector<std::string>& out) {
  std::map<std::string_view, const ScalarProbe*> probes;
  for (const ScalarProbe* p : scalar::probes()) probes.emplace(p->id(), p);
  for (const json& f : member(result, "findings")) {
    const json& par = member(f, "parameters");
    if (string_member(f, "status") != "ok" || string_member(par, "conclusion") != "stated") continue;
    const auto probe = probes.find(string_member(f, "probe"));
    const auto format = model::find_format(string_member(f, "format"));
    if (probe == probes.end() || !format) continue;
    const model::ScalarUnit* unit = backends::unit_for(profile, **format);
    if (!unit) continue;
    std::optional<Answer> answer;
    try {
      answer = probe->second->ask(*unit);
    } catch (const std::exception&) {
      continue;  // a unit the question cannot be asked of states nothing against the finding
    }
    if (!answer || !answer->applies()) continue;
    for (const auto& [key, value] : answer->fields().items())
      if (par.contains(key) && par[key] != value)
        out.push_back(fmt::format("{} [{}]: {}", probe->first, string_member(f, "format"), key));
  }
}

// The identified models the profile's MMA entries do not hold.
void mma_contradictions(const json& result, std::vector<std::string>& out) {
  std::map<std::string, const json*> entries;
  for (const json& e : member(member(result, "profile"), "mma")) entries.emplace(string_member(e, "config"), &e);
  for (const json& f : member(result, "findings")) {
    const json& par = member(f, "parameters");
    if (string_member(f, "probe") != kMmaIdentify || !par.contains("algorithm")) continue;
    const auto e = entries.find(string_member(f, "config"));
    for (const char* key : {"algorithm", "parameters"})
      if (e == entries.end() || member(*e->second, key) != par[key])
        out.push_back(fmt::format("{} [{}]: {}", kMmaIdentify, string_member(f, "config"), key));
  }
}

}  // namespace

std::vector<std::string> self_contradictions(const json& result) {
  std::vector<std::string> out;
  // The profile alone (its findings' published words are not the model's): a fleet asks it of each of
  // thousands of results.
  const json view = {
      {"schema", member(result, "schema")}, {"profile", member(result, "profile")}, {"findings", json::array()}};
  auto profiles = backends::parse_profiles(view, "result");
  if (!profiles || profiles->size() != 1) return out;
  scalar_contradictions(result, profiles->front(), out);
  mma_contradictions(result, out);
  return out;
}

}  // namespace gp::audit
