#include "audit/report/compare.hpp"

#include <fmt/format.h>

#include <map>

#include "audit/json_access.hpp"

namespace gp::audit {

using nlohmann::json;

namespace {

constexpr const char* absent = "(absent)";

std::string render(const json& v) {
  if (v.is_string()) return input::escaped(v.get_ref<const std::string&>(), false);
  std::string s = dump(v);
  return s.size() > 200 ? s.substr(0, 197) + "..." : s;
}

// Leaves of an object as "path": value; arrays are leaves, compared whole. Times ("seconds", the
// validation's own) change from run to run: they are left out.
void flatten(const json& v, const std::string& path, std::map<std::string, json>& out) {
  if (v.is_object() && !v.empty()) {
    for (const auto& [k, x] : v.items())
      if (k != "seconds") flatten(x, path.empty() ? k : path + "." + k, out);
  } else {
    out[path] = v;
  }
}

void compare_trees(const json& a, const json& b, const std::string& prefix, std::vector<Difference>& out) {
  std::map<std::string, json> fa, fb;
  flatten(a, "", fa);
  flatten(b, "", fb);
  for (const auto& [k, v] : fa) {
    const auto it = fb.find(k);
    if (it == fb.end())
      out.push_back({prefix + k, render(v), absent});
    else if (it->second != v)
      out.push_back({prefix + k, render(v), render(it->second)});
  }
  for (const auto& [k, v] : fb)
    if (!fa.count(k)) out.push_back({prefix + k, absent, render(v)});
}

// Every read is checked (audit/json_access.hpp): the documents come from files.
std::string device_name(const json& doc) {
  const json& d = member(doc, "device");
  std::string s = string_member(d, "id", "?");
  if (member(d, "name").is_string()) s += " (" + string_member(d, "name") + ")";
  if (const std::string driver = string_member(d, "driver"); !driver.empty()) s += ", driver " + driver;
  return s;
}

// Findings by "probe [target]", in the order of the document.
std::vector<std::pair<std::string, const json*>> keyed(const json& doc) {
  std::vector<std::pair<std::string, const json*>> v;
  const json& findings = member(doc, "findings");
  if (!findings.is_array()) return v;
  for (const json& f : findings) {
    const std::string config = string_member(f, "config"), format = string_member(f, "format");
    v.push_back({fmt::format("{} [{}]", string_member(f, "probe", "?"), config.empty() ? format : config), &f});
  }
  return v;
}

// MMA profile entries keyed by their configuration.
json mma_by_config(const json& doc) {
  json m = json::object();
  const json& mma = member(member(doc, "profile"), "mma");
  if (mma.is_array())
    for (const json& e : mma) m[string_member(e, "config", "?")] = e;
  return m;
}

// The profile as one tree: its scalar units and its MMA entries keyed by configuration.
json profile_tree(const json& doc) {
  return {{"scalar", member(member(doc, "profile"), "scalar", empty_object())}, {"mma", mma_by_config(doc)}};
}

}  // namespace

std::vector<Difference> compare_profiles(const json& a, const json& b) {
  std::vector<Difference> out;
  const json &ta = profile_tree(a), &tb = profile_tree(b);
  compare_trees(ta["scalar"], tb["scalar"], "profile.scalar.", out);
  compare_trees(ta["mma"], tb["mma"], "profile.mma.", out);
  return out;
}

std::string arithmetic_of(const json& doc) {
  std::map<std::string, json> leaves;
  flatten(profile_tree(doc), "", leaves);
  json kept = json::object();
  for (auto& [path, v] : leaves)
    if (!path.ends_with(".validation") && path.find(".validation.") == std::string::npos) kept[path] = std::move(v);
  return kept.dump();
}

Comparison compare_results(const json& a, const json& b) {
  Comparison c;
  c.a_name = device_name(a);
  c.b_name = device_name(b);
  const json& none = empty_object();
  c.differences = compare_profiles(a, b);
  const auto fa = keyed(a), fb = keyed(b);
  std::map<std::string, const json*> in_b(fb.begin(), fb.end());
  for (const auto& [key, f] : fa) {
    const auto it = in_b.find(key);
    if (it == in_b.end()) {
      c.differences.push_back({key, string_member(*f, "status"), absent});
      continue;
    }
    ++c.compared_findings;
    const json& g = *it->second;
    for (const char* field : {"status", "verdict", "message", "published"}) {
      const json &x = member(*f, field), &y = member(g, field);
      if (x != y)
        c.differences.push_back(
            {fmt::format("{} {}", key, field), x.is_null() ? absent : render(x), y.is_null() ? absent : render(y)});
    }
    compare_trees(member(*f, "parameters", none), member(g, "parameters", none), key + " parameters.", c.differences);
  }
  std::map<std::string, const json*> in_a(fa.begin(), fa.end());
  for (const auto& [key, g] : fb)
    if (!in_a.count(key)) c.differences.push_back({key, absent, string_member(*g, "status")});
  return c;
}

std::string comparison_text(const Comparison& c) {
  std::string out = fmt::format("A: {}\nB: {}\n", c.a_name, c.b_name);
  for (const Difference& d : c.differences)
    out += fmt::format("\n{}\n  A: {}\n  B: {}\n", input::escaped(d.where, false), d.a, d.b);
  out += fmt::format("\n{} difference{} ({} findings compared)\n", c.differences.size(),
                     c.differences.size() == 1 ? "" : "s", c.compared_findings);
  return out;
}

std::string comparison_markdown(const Comparison& c) {
  const auto cell = [](std::string s) {
    for (std::size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
    return s;
  };
  std::string out = fmt::format("# {} vs {}\n\n", cell(c.a_name), cell(c.b_name));
  if (c.differences.empty()) {
    out += fmt::format("No difference ({} findings compared).\n", c.compared_findings);
    return out;
  }
  out += "| where | A | B |\n|---|---|---|\n";
  for (const Difference& d : c.differences)
    out += fmt::format("| `{}` | {} | {} |\n", input::escaped(d.where, false), cell(d.a), cell(d.b));
  out += fmt::format("\n{} differences ({} findings compared).\n", c.differences.size(), c.compared_findings);
  return out;
}

std::vector<Difference> changed_findings(const json& base, const json& variant) {
  std::vector<Difference> v;
  for (Difference& d : compare_results(base, variant).differences)
    if (!d.where.starts_with("profile.") && d.where.find(" parameters.") == std::string::npos &&
        (d.where.ends_with(" verdict") || d.where.ends_with(" status") || d.a == absent || d.b == absent))
      v.push_back(std::move(d));
  return v;
}

std::string variant_text(const std::string& base_id, const std::string& mode, const std::vector<Difference>& changed,
                         bool markdown) {
  std::string out =
      fmt::format("{}Against {}: the same unit, its kernels compiled with {}: ", markdown ? "## " : "", base_id, mode);
  out += changed.empty() ? "no finding differs"
                         : fmt::format("{} finding{} differ{}, each the compiler's float mode, not the unit's",
                                       changed.size(), changed.size() == 1 ? "" : "s", changed.size() == 1 ? "s" : "");
  out += markdown ? "\n\n" : "\n";
  for (const Difference& d : changed)
    out += markdown ? fmt::format("- `{}`: {} → {}\n", input::escaped(d.where, false), d.a, d.b)
                    : fmt::format("  {}: {} -> {}\n", input::escaped(d.where, false), d.a, d.b);
  return out;
}

}  // namespace gp::audit
