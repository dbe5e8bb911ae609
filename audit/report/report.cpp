#include "audit/report/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "audit/json_access.hpp"
#include "model/mma_config_name.hpp"
#include "model/summation_tree.hpp"

namespace gp::audit {

using nlohmann::json;

namespace {

// Every read below is checked (audit/json_access.hpp): the document may come from a file.
std::string str(const json& j, const char* key) { return string_member(j, key); }

// The elements of j[key] when it is an array, else none.
const json& array_member(const json& j, const char* key) {
  static const json empty = json::array();
  const json& v = member(j, key);
  return v.is_array() ? v : empty;
}

// The scalar profile of a document: {"<format>": {...}}.
const json& scalar_profile(const json& doc) { return member(member(doc, "profile"), "scalar"); }

// Findings grouped by format (or MMA configuration), in order of first appearance.
std::vector<std::pair<std::string, std::vector<const json*>>> by_target(const json& doc) {
  std::vector<std::pair<std::string, std::vector<const json*>>> groups;
  for (const json& f : array_member(doc, "findings")) {
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
  if (v.is_string()) return input::escaped(v.get_ref<const std::string&>(), false);
  if (v.is_null()) return "none";
  return dump(v);
}

// "add: rounding=chop guard_bits=2 sticky=false; mul: ..."
std::string profile_line(const json& p) {
  std::string out;
  for (const auto& [unit, fields] : p.items()) {
    if (unit == "validation") continue;
    std::string part = input::escaped(unit, false) + ":";
    if (fields.is_object()) {
      for (const auto& [k, v] : fields.items()) part += " " + input::escaped(k, false) + "=" + value_text(v);
    } else {
      part += " " + value_text(fields);
    }
    out += (out.empty() ? "" : "; ") + part;
  }
  return out;
}

// K of an MMA configuration "MxNxK:a,b,c,d", or nothing: only the shape is read.
std::optional<int> config_k(std::string_view config) {
  model::MmaShape shape;
  const std::size_t n = model::read_mma_shape(config, shape);
  if (n == 0 || n == config.size() || config[n] != ':') return std::nullopt;
  return shape.k;
}

}  // namespace

// Only a tree that parses over the configuration's K: a result is outside input, and a tree over
// other products would not be the unit's.
std::optional<model::SummationTree> finding_tree(const json& f) {
  const json& p = member(f, "parameters");
  std::string text = str(p, "tree");
  if (text.empty() && str(p, "algorithm") == "tree") text = str(member(p, "parameters"), "tree");
  const std::optional<int> k = config_k(str(f, "config"));
  if (text.empty() || !k) return std::nullopt;
  return model::parse_summation_tree(text, *k).tree;
}

namespace {

struct Counts {
  int ok = 0, unsupported = 0, error = 0;
};
Counts count(const json& doc) {
  Counts c;
  for (const json& f : array_member(doc, "findings")) {
    const std::string s = str(f, "status");
    (s == "ok" ? c.ok : s == "unsupported" ? c.unsupported : c.error) += 1;
  }
  return c;
}

}  // namespace

std::string text_report(const json& doc) {
  const json& dev = member(doc, "device");
  std::string out = fmt::format("gpuparanoia {} -- {} ({}{}{})\n", str(member(doc, "tool"), "version"), str(dev, "id"),
                                str(dev, "name"), str(dev, "driver").empty() ? "" : ", driver ", str(dev, "driver"));
  if (!str(dev, "description").empty()) out += "  " + str(dev, "description") + "\n";
  out += fmt::format("  started {}, {:.1f} s\n", str(doc, "started"), number_member(doc, "duration_s"));
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
      if (const auto tree = finding_tree(*f)) {
        out += "    summation tree:\n";
        const std::string lines = tree->indented();
        for (std::size_t at = 0, end; at < lines.size(); at = end + 1) {
          end = lines.find('\n', at);
          out.append("      ").append(lines, at, end - at + 1);
        }
      }
    }
    if (const json& p = member(scalar_profile(doc), target); !p.is_null()) {
      out += fmt::format("  Profile: {}\n", profile_line(p));
      if (const json& v = member(p, "validation"); !v.is_null()) {
        const std::int64_t mismatches = integer_member(v, "mismatches");
        out += fmt::format("  Validation of the profile on random inputs: {} cases, {}\n", integer_member(v, "cases"),
                           mismatches == 0 ? std::string("no mismatch") : fmt::format("{} MISMATCHES", mismatches));
      }
    }
  }
  const Counts c = count(doc);
  out += fmt::format("\n{} findings: {} ok, {} unsupported, {} error\n", c.ok + c.unsupported + c.error, c.ok,
                     c.unsupported, c.error);
  return out;
}

std::vector<model::SummationTree> result_trees(const json& doc) {
  std::vector<model::SummationTree> trees;
  for (const json& f : array_member(doc, "findings"))
    if (auto tree = finding_tree(f);
        tree && std::none_of(trees.begin(), trees.end(), [&](const auto& t) { return t.text() == tree->text(); }))
      trees.push_back(std::move(*tree));
  return trees;
}

std::string markdown_report(const json& doc, const TreeDrawings* drawings) {
  const std::vector<model::SummationTree> trees = drawings ? result_trees(doc) : std::vector<model::SummationTree>{};
  const json& dev = member(doc, "device");
  std::string out = fmt::format("# {}: {}\n\n", str(dev, "id"), str(dev, "name"));
  out += "| | |\n|---|---|\n";
  for (const char* key : {"backend", "vendor", "driver", "api", "description"})
    if (!str(dev, key).empty()) out += fmt::format("| {} | {} |\n", key, str(dev, key));
  if (!str(dev, "code").empty()) out += fmt::format("| compiled kernels | {} |\n", str(dev, "code"));
  out += fmt::format("| tool | gpuparanoia {} |\n| started | {} |\n| duration | {:.1f} s |\n\n",
                     str(member(doc, "tool"), "version"), str(doc, "started"), number_member(doc, "duration_s"));
  for (const auto& [target, findings] : by_target(doc)) {
    out += fmt::format("## {}\n\n", target);
    if (const json& p = member(scalar_profile(doc), target); !p.is_null()) {
      out += fmt::format("Profile: `{}`", profile_line(p));
      if (const json& v = member(p, "validation"); !v.is_null())
        out += fmt::format(" (validated on {} random cases, {} mismatches)", integer_member(v, "cases"),
                           integer_member(v, "mismatches"));
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
    // A table cell cannot hold a fenced block: the diagrams follow the table, each under its probe.
    for (const json* f : findings)
      if (const auto tree = finding_tree(*f)) {
        out += fmt::format("`{}`: the summation tree `{}`\n\n```mermaid\n{}```\n\n", str(*f, "probe"), tree->text(),
                           tree->mermaid());
        const auto drawn =
            std::find_if(trees.begin(), trees.end(), [&](const auto& t) { return t.text() == tree->text(); });
        const std::size_t i = std::size_t(drawn - trees.begin());
        if (drawn == trees.end() || i >= drawings->notes.size()) continue;
        const std::string file = fmt::format("{}-tree{}", drawings->stem, i + 1);
        out += drawings->notes[i].empty() ? fmt::format("![the summation tree {}]({}.svg)\n\n", tree->text(), file)
                                          : fmt::format("No drawing: {}.\n\n", drawings->notes[i]);
        out += fmt::format("Graphviz source: [{}.dot]({}.dot)\n\n", file, file);
      }
  }
  const Counts c = count(doc);
  out += fmt::format("{} ok, {} unsupported, {} error.\n", c.ok, c.unsupported, c.error);
  return out;
}

namespace {

// "chop, 2 guard bits", "rne", "chop, 6 columns + 40", "within 2.5 ulp": a unit's headline in a table cell.
std::string headline(const json& p, const char* unit) {
  const json& u = member(p, unit);
  if (!u.is_object()) return "";
  static const json unknown = "?", zero = 0;
  std::string s = value_text(member(u, "rounding", unknown));
  if (str(u, "method") == "reciprocal") s = "x * (1/y " + s + ")";
  if (str(u, "method") == "approximate") s = "within " + value_text(member(u, "max_ulps", unknown)) + " ulp";
  if (const json& g = member(u, "guard_bits"); g.is_number()) s += fmt::format(", {} guard bits", dump(g));
  if (const json& t = member(u, "truncated_columns"); t.is_number())
    s += fmt::format(", {} columns + {}", dump(t), value_text(member(u, "correction", zero)));
  return s;
}

std::string fused(const json& p, const char* unit) {
  const json& f = member(member(p, unit), "fused");
  if (f.is_null()) return "?";
  return f == true ? "fused" : "unfused";
}

}  // namespace

namespace {

// The headline of one format's profile, cell by cell: what the table and the summary show.
struct FormatHeadline {
  std::string format, add, mul, div, fma, mad, subnormals, validation;
};

std::vector<FormatHeadline> format_headlines(const json& doc) {
  std::vector<FormatHeadline> v;
  const json& scalar = scalar_profile(doc);
  if (!scalar.is_object()) return v;
  for (const auto& [format, p] : scalar.items()) {
    if (!p.is_object()) continue;
    const json& sub = member(p, "subnormals");
    const json& val = member(p, "validation", empty_object());
    const auto flush = [&](const char* k) { return string_member(sub, k, "?"); };
    const json& registers = member(p, "registers");
    v.push_back(
        {input::escaped(format, false) + (registers.is_null() ? "" : fmt::format(" (in {})", value_text(registers))),
         headline(p, "add"), headline(p, "mul"), headline(p, "div"), fused(p, "fma"), fused(p, "mad"),
         fmt::format("{}/{}/{}", flush("input"), flush("output"), flush("transfer")),
         val.empty()
             ? std::string("none")
             : fmt::format("{} mismatches in {}", integer_member(val, "mismatches"), integer_member(val, "cases"))});
  }
  return v;
}

// Each MMA configuration: the identified model and its validation, or the identification's verdict;
// MMA-Sim's row for its instruction against the device (mma.identify's parameters.table).
struct MmaHeadline {
  std::string config, instruction, model, validation, row;
  std::string key;  // formats, algorithm and parameters of the identified model; "" when none
};

std::string row_text(const json& t) {
  if (!t.is_object()) return "";
  const std::string id = str(t, "instruction");
  if (t.contains("error")) return fmt::format("{}: not compared ({})", id, str(t, "error"));
  if (!t.contains("tiles"))  // the models alone (results of 0.1.0 before the comparison on the device)
    return integer_member(t, "differences") == 0
               ? fmt::format("{}: the same model", id)
               : fmt::format("{}: differs on {} of {} random inputs", id, integer_member(t, "differences"),
                             integer_member(t, "inputs"));
  if (integer_member(t, "mismatches") == 0 && integer_member(t, "differences") == 0)
    return fmt::format("{}: the same ({} elements of {} tiles predicted)", id, integer_member(t, "elements"),
                       integer_member(t, "tiles"));
  return fmt::format("{}: differs, {} of {} elements mispredicted; {}", id, integer_member(t, "mismatches"),
                     integer_member(t, "elements"), str(t, "first_difference"));
}

std::vector<MmaHeadline> mma_headlines(const json& doc) {
  std::vector<MmaHeadline> v;
  const json& identified = array_member(member(doc, "profile"), "mma");
  const auto identify_finding = [&](const std::string& config) -> const json& {
    for (const json& f : array_member(doc, "findings"))
      if (str(f, "probe") == "mma.identify" && str(f, "config") == config) return f;
    return member(doc, "no such finding");
  };
  for (const json& f : array_member(doc, "findings"))
    if (str(f, "probe") == "mma.identify" && std::none_of(identified.begin(), identified.end(), [&](const json& e) {
          return str(e, "config") == str(f, "config");
        }))
      v.push_back({str(f, "config"), "", str(f, "status") == "ok" ? str(f, "verdict") : str(f, "message"), "none",
                   row_text(member(member(f, "parameters"), "table")), ""});
  for (const json& e : identified) {
    const json& val = member(e, "validation", empty_object());
    const std::string config = str(e, "config"), parameters = dump(member(e, "parameters", empty_object()));
    v.push_back({config, str(e, "instruction"), fmt::format("{} {}", str(e, "algorithm"), parameters),
                 val.empty() ? std::string("none")
                             : fmt::format("{} mismatches in {} tiles", integer_member(val, "mismatches"),
                                           integer_member(val, "tiles")),
                 row_text(member(member(identify_finding(config), "parameters"), "table")),
                 fmt::format("{} {} {}", config.substr(config.find(':') + 1), str(e, "algorithm"), parameters)});
  }
  return v;
}

}  // namespace

std::vector<std::string> headline_lines(const json& doc) {
  std::vector<std::string> lines;
  for (const FormatHeadline& h : format_headlines(doc))
    lines.push_back(fmt::format("{}: add {}; mul {}; div {}; fma() {}; a*b+c {}; subnormals {}; validation {}",
                                h.format, h.add, h.mul, h.div, h.fma, h.mad, h.subnormals, h.validation));
  for (const MmaHeadline& h : mma_headlines(doc))
    lines.push_back(fmt::format("{}: {} | {}{}", h.config, h.model, h.validation, h.row.empty() ? "" : " | " + h.row));
  return lines;
}

std::string results_table(const std::vector<json>& docs) {
  std::string out =
      "| device | driver | format | add | mul | div | fma() | a*b+c | subnormals in/out/transfer | validation |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n";
  struct Row {
    std::string id, driver;
    MmaHeadline h;
  };
  std::vector<Row> rows;
  for (const json& doc : docs) {
    const std::string id = str(member(doc, "device"), "id"), driver = str(member(doc, "device"), "driver");
    for (const FormatHeadline& h : format_headlines(doc))
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", id, driver, h.format, h.add, h.mul,
                         h.div, h.fma, h.mad, h.subnormals, h.validation);
    for (MmaHeadline& h : mma_headlines(doc)) rows.push_back({id, driver, std::move(h)});
  }
  if (rows.empty()) return out;
  out +=
      "\n| device | driver | MMA configuration | identified model | validation | MMA-Sim's row "
      "|\n|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    // A configuration of no table row (a cooperative matrix) beside the instructions of the same
    // identified model (formats, algorithm, parameters) among the results shown.
    std::string row = r.h.row;
    if (row.empty()) {
      std::vector<std::string> same;
      for (const Row& o : rows)
        if (!o.h.instruction.empty() && !r.h.key.empty() && o.h.key == r.h.key)
          same.push_back(fmt::format("{} {}", o.id, o.h.instruction));
      row = same.empty() ? "none" : fmt::format("none; the same model as {}", fmt::join(same, ", "));
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", r.id, r.driver, r.h.config, r.h.model, r.h.validation, row);
  }
  return out;
}

}  // namespace gp::audit
