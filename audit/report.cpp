#include "audit/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

namespace gp::audit {

using nlohmann::json;

namespace {

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Findings grouped by format (or MMA configuration), in order of first appearance.
std::vector<std::pair<std::string, std::vector<const json*>>> by_target(const json& doc) {
  std::vector<std::pair<std::string, std::vector<const json*>>> groups;
  for (const json& f : doc["findings"]) {
    std::string key = str(f, "config").empty() ? str(f, "format") : str(f, "config");
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.push_back({key, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(&f);
  }
  return groups;
}

std::string value_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "none";
  return v.dump();
}

// "add: rounding=chop guard_bits=2 sticky=false; mul: ..."
std::string profile_line(const json& p) {
  std::string out;
  for (const auto& [unit, fields] : p.items()) {
    if (unit == "validation") continue;
    std::string part = unit + ":";
    if (fields.is_object()) {
      for (const auto& [k, v] : fields.items()) part += " " + k + "=" + value_text(v);
    } else {
      part += " " + value_text(fields);
    }
    out += (out.empty() ? "" : "; ") + part;
  }
  return out;
}

struct Counts {
  int ok = 0, unsupported = 0, error = 0;
};
Counts count(const json& doc) {
  Counts c;
  for (const json& f : doc["findings"]) {
    const std::string s = str(f, "status");
    (s == "ok" ? c.ok : s == "unsupported" ? c.unsupported : c.error) += 1;
  }
  return c;
}

}  // namespace

std::string text_report(const json& doc) {
  const json& dev = doc["device"];
  std::string out = fmt::format("gpuparanoia {} -- {} ({}{}{})\n", str(doc["tool"], "version"), str(dev, "id"),
                                str(dev, "name"), str(dev, "driver").empty() ? "" : ", driver ", str(dev, "driver"));
  if (!str(dev, "description").empty()) out += "  " + str(dev, "description") + "\n";
  out += fmt::format("  started {}, {:.1f} s\n", str(doc, "started"), doc.value("duration_s", 0.0));
  for (const auto& [target, findings] : by_target(doc)) {
    out += fmt::format("\n{}\n", target);
    for (const json* f : findings) {
      const std::string status = str(*f, "status");
      if (status == "ok") {
        out += fmt::format("  {:<68} [{}]\n", str(*f, "verdict"), str(*f, "probe"));
        if (!str(*f, "published").empty()) out += fmt::format("    published: {}\n", str(*f, "published"));
      } else {
        out += fmt::format("  {} {}: {} [{}]\n", status == "error" ? "ERROR in" : "unsupported:", str(*f, "title"),
                           str(*f, "message"), str(*f, "probe"));
      }
    }
    const json& p = doc["profile"]["scalar"];
    if (p.contains(target)) {
      out += fmt::format("  Profile: {}\n", profile_line(p[target]));
      if (p[target].contains("validation")) {
        const json& v = p[target]["validation"];
        out += fmt::format("  Validation of the profile on random inputs: {} cases, {}\n", v.value("cases", 0),
                           v.value("mismatches", 0) == 0 ? std::string("no mismatch")
                                                         : fmt::format("{} MISMATCHES", v.value("mismatches", 0)));
      }
    }
  }
  const Counts c = count(doc);
  out += fmt::format("\n{} findings: {} ok, {} unsupported, {} error\n", c.ok + c.unsupported + c.error, c.ok,
                     c.unsupported, c.error);
  return out;
}

std::string markdown_report(const json& doc) {
  const json& dev = doc["device"];
  std::string out = fmt::format("# {}: {}\n\n", str(dev, "id"), str(dev, "name"));
  out += "| | |\n|---|---|\n";
  for (const char* key : {"backend", "vendor", "driver", "api", "description"})
    if (!str(dev, key).empty()) out += fmt::format("| {} | {} |\n", key, str(dev, key));
  out += fmt::format("| tool | gpuparanoia {} |\n| started | {} |\n| duration | {:.1f} s |\n\n",
                     str(doc["tool"], "version"), str(doc, "started"), doc.value("duration_s", 0.0));
  for (const auto& [target, findings] : by_target(doc)) {
    out += fmt::format("## {}\n\n", target);
    const json& p = doc["profile"]["scalar"];
    if (p.contains(target)) {
      out += fmt::format("Profile: `{}`", profile_line(p[target]));
      if (p[target].contains("validation"))
        out += fmt::format(" (validated on {} random cases, {} mismatches)", p[target]["validation"].value("cases", 0),
                           p[target]["validation"].value("mismatches", 0));
      out += "\n\n";
    }
    out += "| probe | status | verdict | source |\n|---|---|---|---|\n";
    for (const json* f : findings) {
      const std::string status = str(*f, "status");
      std::string verdict = status == "ok" ? str(*f, "verdict") : str(*f, "message");
      if (!str(*f, "published").empty()) verdict += "<br>published: " + str(*f, "published");
      out += fmt::format("| `{}` | {} | {} | {} |\n", str(*f, "probe"), status, verdict, str(*f, "source"));
    }
    out += "\n";
  }
  const Counts c = count(doc);
  out += fmt::format("{} ok, {} unsupported, {} error.\n", c.ok, c.unsupported, c.error);
  return out;
}

namespace {

// "chop, 2 guard bits", "rne", "chop, 6 columns + 40": a unit's headline in a table cell.
std::string headline(const json& p, const char* unit) {
  if (!p.contains(unit) || !p[unit].is_object()) return "";
  const json& u = p[unit];
  std::string s = value_text(u.value("rounding", json("?")));
  if (u.value("method", "") == "reciprocal") s = "x * (1/y " + s + ")";
  if (u.contains("guard_bits") && u["guard_bits"].is_number()) s += fmt::format(", {} guard bits", u["guard_bits"].dump());
  if (u.contains("truncated_columns") && u["truncated_columns"].is_number())
    s += fmt::format(", {} columns + {}", u["truncated_columns"].dump(), value_text(u.value("correction", json(0))));
  return s;
}

std::string fused(const json& p, const char* unit) {
  if (!p.contains(unit) || !p[unit].contains("fused")) return "?";
  return p[unit]["fused"] == true ? "fused" : "unfused";
}

}  // namespace

namespace {

// The headline of one format's profile, cell by cell: what the table and the summary show.
struct FormatHeadline {
  std::string format, add, mul, div, fma, mad, subnormals, validation;
};

std::vector<FormatHeadline> format_headlines(const json& doc) {
  std::vector<FormatHeadline> v;
  const json scalar = doc["profile"].value("scalar", json::object());
  for (const auto& [format, p] : scalar.items()) {
    if (!p.is_object()) continue;
    const json sub = p.value("subnormals", json::object()), val = p.value("validation", json::object());
    const auto flush = [&](const char* k) { return sub.contains(k) ? sub[k].get<std::string>() : std::string("?"); };
    v.push_back({format + (p.contains("registers") ? fmt::format(" (in {})", value_text(p["registers"])) : ""),
                 headline(p, "add"), headline(p, "mul"), headline(p, "div"), fused(p, "fma"), fused(p, "mad"),
                 fmt::format("{}/{}/{}", flush("input"), flush("output"), flush("transfer")),
                 val.empty() ? std::string("none")
                             : fmt::format("{} mismatches in {}", val.value("mismatches", 0), val.value("cases", 0))});
  }
  return v;
}

// Each MMA configuration: the identified model and its validation, or the identification's verdict.
std::vector<std::pair<std::string, std::string>> mma_headlines(const json& doc) {
  std::vector<std::pair<std::string, std::string>> v;
  const json identified = doc["profile"].value("mma", json::array());
  for (const json& f : doc["findings"])
    if (str(f, "probe") == "mma.identify" &&
        std::none_of(identified.begin(), identified.end(), [&](const json& e) { return str(e, "config") == str(f, "config"); }))
      v.push_back({str(f, "config"), (str(f, "status") == "ok" ? str(f, "verdict") : str(f, "message")) + " | none"});
  for (const json& e : identified) {
    const json val = e.value("validation", json::object());
    v.push_back({str(e, "config"),
                 fmt::format("{} {} | {}", str(e, "algorithm"), e.value("parameters", json::object()).dump(),
                             val.empty() ? std::string("none")
                                         : fmt::format("{} mismatches in {} tiles", val.value("mismatches", 0),
                                                       val.value("tiles", 0)))});
  }
  return v;
}

}  // namespace

std::vector<std::string> headline_lines(const json& doc) {
  std::vector<std::string> lines;
  for (const FormatHeadline& h : format_headlines(doc))
    lines.push_back(fmt::format("{}: add {}; mul {}; div {}; fma() {}; a*b+c {}; subnormals {}; validation {}", h.format,
                                h.add, h.mul, h.div, h.fma, h.mad, h.subnormals, h.validation));
  for (const auto& [config, model] : mma_headlines(doc)) lines.push_back(fmt::format("{}: {}", config, model));
  return lines;
}

std::string results_table(const std::vector<json>& docs) {
  std::string out =
      "| device | driver | format | add | mul | div | fma() | a*b+c | subnormals in/out/transfer | validation |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n";
  std::string mma;
  for (const json& doc : docs) {
    const std::string id = str(doc["device"], "id"), driver = str(doc["device"], "driver");
    for (const FormatHeadline& h : format_headlines(doc))
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", id, driver, h.format, h.add, h.mul,
                         h.div, h.fma, h.mad, h.subnormals, h.validation);
    for (const auto& [config, model] : mma_headlines(doc)) mma += fmt::format("| {} | {} | {} | {} |\n", id, driver, config, model);
  }
  if (!mma.empty())
    out += "\n| device | driver | MMA configuration | identified model | validation |\n|---|---|---|---|---|\n" + mma;
  return out;
}

}  // namespace gp::audit
