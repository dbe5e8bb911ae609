#include "audit/report/fleet.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <map>
#include <climits>
#include <cstdint>
#include <set>

#include "audit/json_access.hpp"

namespace gp::audit {

using nlohmann::json;

namespace {

constexpr std::string_view kCheckPrefix = "check.";

// The node and device a result names: the host it ran on where it says, else its file's name.
std::string device_label(const std::string& file, const json& doc) {
  std::string node = string_member(member(doc, "host"), "hostname");
  if (node.empty()) node = file;
  return fmt::format("{} {}", node, string_member(member(doc, "device"), "id", "?"));
}

bool is_check(const json& doc) { return member(member(doc, "run"), "check").is_object(); }

// Where a result's profile contradicts its own findings, as fleet_part records it.
const json& contradictions(const json& doc) {
  static const json none = json::array();
  const json& c = member(doc, "self_contradictions");
  return c.is_array() ? c : none;
}

// A check's findings that did not pass: an error, or mismatches.
std::vector<Difference> failed_checks(const json& doc) {
  std::vector<Difference> out;
  const json& findings = member(doc, "findings");
  if (!findings.is_array()) return out;
  for (const json& f : findings) {
    if (!string_member(f, "probe").starts_with(kCheckPrefix)) continue;
    const std::string status = string_member(f, "status");
    const bool bad = status == "error" || integer_member(member(f, "parameters"), "mismatches") != 0;
    if (!bad) continue;
    const std::string target =
        string_member(f, "config").empty() ? string_member(f, "format") : string_member(f, "config");
    out.push_back(
        {fmt::format("{} [{}]", string_member(f, "probe"), target), "as recorded", string_member(f, "verdict")});
  }
  return out;
}

// Whether any finding was checked at all (a check that could check nothing did not pass).
bool checked_something(const json& doc) {
  const json& findings = member(doc, "findings");
  if (!findings.is_array()) return false;
  return std::any_of(findings.begin(), findings.end(), [](const json& f) {
    return string_member(f, "probe").starts_with(kCheckPrefix) && string_member(f, "status") == "ok";
  });
}

}  // namespace

json fleet_part(const json& doc, const std::vector<std::string>& self_contradictions) {
  json part = json::object();
  if (!self_contradictions.empty()) part["self_contradictions"] = self_contradictions;
  for (const char* key : {"schema", "device", "host", "run", "profile"})
    if (doc.contains(key)) part[key] = doc[key];
  json& findings = part["findings"] = json::array();
  if (is_check(doc))
    for (const json& f : member(doc, "findings")) {
      json g = f;
      if (g.is_object()) g.erase("observations");
      findings.push_back(std::move(g));
    }
  return part;
}

std::size_t Fleet::outliers() const {
  std::size_t n = 0;
  for (const FleetGroup& g : groups) n += g.outliers.size();
  return n;
}

Fleet fleet_of(const std::vector<std::pair<std::string, json>>& docs) {
  Fleet fleet;
  fleet.results = docs.size();
  struct Members {
    std::vector<const std::pair<std::string, json>*> audits, checks;
    std::set<std::string> devices;
  };
  std::map<std::array<std::string, 4>, Members> by_model;
  for (const auto& item : docs) {
    const json& d = member(item.second, "device");
    const std::string id = string_member(d, "id");
    const std::size_t plus = id.find('+');
    Members& m = by_model[{string_member(d, "name", "?"), string_member(d, "driver", "?"), string_member(d, "backend"),
                           plus == std::string::npos ? "" : id.substr(plus + 1)}];
    (is_check(item.second) ? m.checks : m.audits).push_back(&item);
    m.devices.insert(device_label(item.first, item.second));
  }
  for (const auto& [model, m] : by_model) {
    FleetGroup g{model[0], model[1], model[2], model[3], m.devices.size(), m.audits.size(), m.checks.size(), 0, {}, {}};
    // The audits by arithmetic; the one most of them share is the group's.
    std::map<std::string, std::vector<const std::pair<std::string, json>*>> kinds;
    for (const auto* a : m.audits) kinds[arithmetic_of(a->second)].push_back(a);
    g.arithmetics = kinds.size();
    std::size_t most = 0, with_most = 0;
    for (const auto& [k, v] : kinds) most = std::max(most, v.size());
    const std::vector<const std::pair<std::string, json>*>* majority = nullptr;
    for (const auto& [k, v] : kinds)
      if (v.size() == most) ++with_most, majority = &v;
    // No arithmetic most devices share (two devices that differ): the one whose results contradict
    // their own findings least (audit/self_consistency.hpp, fleet_part's count), where one does.
    if (with_most > 1) {
      std::size_t fewest = SIZE_MAX, with_fewest = 0;
      for (const auto& [k, v] : kinds) {
        if (v.size() != most) continue;
        const std::size_t c = contradictions(v.front()->second).size();
        if (c < fewest)
          fewest = c, with_fewest = 1, majority = &v;
        else if (c == fewest)
          ++with_fewest;
      }
      if (with_fewest > 1) majority = nullptr;  // each is in doubt
    }
    for (const auto& [k, v] : kinds) {
      if (majority && &v == majority) continue;
      for (const auto* a : v) {
        FleetOutlier o{
            a->first, device_label(a->first, a->second), majority ? "arithmetic differs" : "no majority", {}};
        const json& ref = majority ? majority->front()->second : kinds.begin()->second.front()->second;
        for (Difference& d : compare_profiles(ref, a->second))
          if (d.where.find(".validation") == std::string::npos) o.differences.push_back(std::move(d));
        for (const json& c : contradictions(a->second))
          if (c.is_string())
            o.differences.push_back({"its profile against its own findings", "as stated",
                                     "contradicts " + input::escaped(c.get<std::string>(), false)});
        g.outliers.push_back(std::move(o));
      }
    }
    // The others whose profile contradicts their own findings (an outlier's difference says it).
    for (const auto* a : m.audits)
      if (const json& c = contradictions(a->second);
          !c.empty() &&
          std::none_of(g.outliers.begin(), g.outliers.end(), [&](const FleetOutlier& o) { return o.file == a->first; }))
        g.self_contradictory.emplace_back(a->first, c.get<std::vector<std::string>>());
    for (const auto* c : m.checks) {
      std::vector<Difference> failed = failed_checks(c->second);
      if (failed.empty() && checked_something(c->second)) continue;
      if (failed.empty()) failed.push_back({"check", "as recorded", "nothing could be checked"});
      g.outliers.push_back({c->first, device_label(c->first, c->second), "check failed", std::move(failed)});
    }
    fleet.groups.push_back(std::move(g));
  }
  return fleet;
}

std::string fleet_text(const Fleet& f) {
  std::string out = fmt::format("{} results, {} model and driver group{}, {} outlier{}\n", f.results, f.groups.size(),
                                f.groups.size() == 1 ? "" : "s", f.outliers(), f.outliers() == 1 ? "" : "s");
  for (const FleetGroup& g : f.groups) {
    out += fmt::format("\n{}, driver {} ({}{}): {} device{}, {} audit{} ({} arithmetic{}), {} check{}\n",
                       input::escaped(g.name, false), input::escaped(g.driver, false), g.backend,
                       g.variant.empty() ? "" : ", +" + input::escaped(g.variant, false), g.devices,
                       g.devices == 1 ? "" : "s", g.audits, g.audits == 1 ? "" : "s", g.arithmetics,
                       g.arithmetics == 1 ? "" : "s", g.checks, g.checks == 1 ? "" : "s");
    for (const FleetOutlier& o : g.outliers) {
      out +=
          fmt::format("  OUTLIER {} ({}): {}\n", input::escaped(o.device, false), input::escaped(o.file, false), o.why);
      for (const Difference& d : o.differences)
        out += fmt::format("    {}: {} -> {}\n", input::escaped(d.where, false), d.a, d.b);
    }
    for (const auto& [file, found] : g.self_contradictory)
      out += fmt::format("  its profile contradicts its own findings: {}: {}\n", input::escaped(file, false),
                         input::escaped(fmt::format("{}", fmt::join(found, "; ")), false));
  }
  return out;
}

std::string fleet_markdown(const Fleet& f) {
  const auto cell = [](std::string s) {
    s = input::escaped(s, false);
    for (std::size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
    return s;
  };
  std::string out = fmt::format("# Fleet: {} results, {} outliers\n\n", f.results, f.outliers());
  out +=
      "| model | driver | backend | variant | devices | audits | arithmetics | checks | outliers |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const FleetGroup& g : f.groups)
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(g.name), cell(g.driver), cell(g.backend),
                    cell(g.variant), g.devices, g.audits, g.arithmetics, g.checks, g.outliers.size());
  for (const FleetGroup& g : f.groups)
    for (const FleetOutlier& o : g.outliers) {
      out += fmt::format("\n## {} ({})\n\n{}\n\n| where | group | device |\n|---|---|---|\n", cell(o.device),
                         cell(o.file), o.why);
      for (const Difference& d : o.differences)
        out += fmt::format("| `{}` | {} | {} |\n", cell(d.where), cell(d.a), cell(d.b));
    }
  return out;
}

json fleet_json(const Fleet& f) {
  json groups = json::array();
  for (const FleetGroup& g : f.groups) {
    json outliers = json::array();
    for (const FleetOutlier& o : g.outliers) {
      json diffs = json::array();
      for (const Difference& d : o.differences) diffs.push_back({{"where", d.where}, {"group", d.a}, {"device", d.b}});
      outliers.push_back({{"file", o.file}, {"device", o.device}, {"why", o.why}, {"differences", diffs}});
    }
    json contradictory = json::array();
    for (const auto& [file, found] : g.self_contradictory)
      contradictory.push_back({{"file", file}, {"findings", found}});
    groups.push_back({{"name", g.name},
                      {"driver", g.driver},
                      {"backend", g.backend},
                      {"variant", g.variant},
                      {"devices", g.devices},
                      {"audits", g.audits},
                      {"arithmetics", g.arithmetics},
                      {"checks", g.checks},
                      {"outliers", outliers},
                      {"self_contradictory", contradictory}});
  }
  return {{"results", f.results}, {"outliers", f.outliers()}, {"groups", groups}};
}

}  // namespace gp::audit
