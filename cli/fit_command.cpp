#include "cli/fit_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "audit/result.hpp"
#include "backends/reference/profile.hpp"
#include "cli/batch.hpp"
#include "cli/exit_codes.hpp"
#include "input/input_error.hpp"
#include "input/limits.hpp"
#include "model/dot_parameters.hpp"
#include "model/mma_config_name.hpp"
#include "model/ops.hpp"
#include "tests_mma/identify/candidates.hpp"
#include "tests_mma/identify/fit.hpp"

namespace gp::cli {

namespace {

using backends::algorithm_name;
using backends::parameters_json;
using model::DotConfig;
using model::Format;
using nlohmann::json;
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// The unit's shape: formats, K where known, scale factors.

struct Shape {
  mma::MmaConfig cfg;  // m = n = 1: only the formats and K matter
  bool k_given = false;
  const Format* scale = nullptr;
  int scale_block = 32;
  int scales() const { return scale ? (cfg.k + scale_block - 1) / scale_block : 0; }
};

// The shape of --config MxNxK:a,b,c,d or of the four format options; why not, or "".
std::string resolve_shape(const ShapeArgs& args, Shape& out) {
  const bool formats =
      !args.a_format.empty() || !args.b_format.empty() || !args.c_format.empty() || !args.d_format.empty();
  if (args.config.empty() == !formats)
    return "give either --config MxNxK:a,b,c,d or --a-format, --b-format, --c-format and --d-format";
  std::string names[4] = {args.a_format, args.b_format, args.c_format, args.d_format};
  out.cfg.m = out.cfg.n = 1;
  if (!args.config.empty()) {
    const std::string& s = args.config;
    const model::MmaConfigName parsed = model::parse_mma_config_name(s);
    switch (parsed.fault) {
      case model::MmaNameFault::shape:
        return fmt::format(
            "--config: expected MxNxK:a,b,c,d (e.g. 16x8x16:binary16,binary16,binary32,binary32), got '{}'", s);
      case model::MmaNameFault::size:
        return parsed.shape.k > model::kMaxDotK
                   ? fmt::format("--config: K must lie in 1..{}", model::kMaxDotK)
                   : fmt::format("--config: M and N must lie in 1..{}", model::kMaxMmaTile);
      case model::MmaNameFault::format_count:
        return fmt::format("--config: expected four formats a,b,c,d after the shape, got '{}'", s);
      case model::MmaNameFault::none:
      case model::MmaNameFault::unknown_format: break;  // named below, as the format options are
    }
    for (int i = 0; i < 4; ++i) names[i] = parsed.names[i];
    out.cfg.k = parsed.shape.k;
    out.k_given = true;
  }
  const char* what[4] = {"a", "b", "c", "d"};
  const Format** slots[4] = {&out.cfg.a, &out.cfg.b, &out.cfg.c, &out.cfg.d};
  for (int i = 0; i < 4; ++i) {
    const auto f = model::find_format(names[i]);
    if (!f)
      return fmt::format("{}'s format must be a known format, got '{}' (known: {})", what[i], names[i], format_names());
    *slots[i] = *f;
  }
  if (!args.scale_format.empty()) {
    const auto f = model::find_format(args.scale_format);
    if (!f || (*f != &model::ue8m0 && *f != &model::ue4m3))
      return fmt::format("--scale-format takes ue8m0 or ue4m3, got '{}'", args.scale_format);
    out.scale = *f;
    out.scale_block = args.scale_block.value_or(out.scale == &model::ue4m3 ? 16 : 32);
    const model::DotParameter& block = *model::find_dot_parameter("scale_block");
    if (out.scale_block < block.min || out.scale_block > block.max)
      return fmt::format("--scale-block must lie in {}..{}", block.min, block.max);
  } else if (args.scale_block) {
    return "--scale-block needs --scale-format";
  }
  if (!out.cfg.d->has_sign())
    return fmt::format("d's format {} has no sign: not an output format the model fits", out.cfg.d->name);
  return "";
}

void add_shape_options(CLI::App* cmd, ShapeArgs& a) {
  cmd->add_option("--config", a.config, "The unit's shape and formats, MxNxK:a,b,c,d (only K and the formats matter)");
  cmd->add_option("--a-format", a.a_format, "Format of a");
  cmd->add_option("--b-format", a.b_format, "Format of b");
  cmd->add_option("--c-format", a.c_format, "Format of c");
  cmd->add_option("--d-format", a.d_format, "Format of d");
  // As `model dot` has them (model/dot_parameters.hpp).
  cmd->add_option("--scale-format", a.scale_format, std::string(model::find_dot_parameter("scale_format")->doc));
  cmd->add_option("--scale-block", a.scale_block, std::string(model::find_dot_parameter("scale_block")->doc));
}

// ---------------------------------------------------------------------------------------------
// Reading lines of files ("-": standard input).

struct Where {
  std::size_t file;
  long line;
};

class LineSource {
 public:
  // Opens the file; an error message (one line, without "gpuparanoia: ") or "".
  std::string open(const std::string& name, std::istream& std_in = std::cin) {
    name_ = name == "-" ? input::kStdinName : name;
    if (name == "-") {
      if (&std_in == &std::cin)
        if (const auto why = stdin_unreadable()) return why->substr(13, why->size() - 14);
      in_ = &std_in;
      return "";
    }
    std::error_code ec;
    if (fs::is_directory(name, ec)) return name + ": is a directory, not a file";
    file_ = std::make_unique<std::ifstream>(name, std::ios::binary);
    if (!*file_) return fmt::format("{}: cannot be read: {}", name, std::strerror(errno));
    in_ = file_.get();
    return "";
  }
  // The next line that is not blank or a comment; false at the end. `error` set on a line too long.
  bool next(std::string& line, std::string& error) {
    while (true) {
      const LineRead r = read_line(*in_, line);
      if (r == LineRead::end) return false;
      ++line_no_;
      if (r == LineRead::too_long) {
        error =
            input::InputError{name_, line_no_, "", fmt::format("longer than {} bytes", input::kMaxLineBytes)}.text();
        return false;
      }
      const std::size_t first = line.find_first_not_of(" \t\r");
      if (first != std::string::npos && line[first] != '#') return true;
    }
  }
  const std::string& name() const { return name_; }
  long line_no() const { return line_no_; }

 private:
  std::string name_;
  std::unique_ptr<std::ifstream> file_;
  std::istream* in_ = nullptr;
  long line_no_ = 0;
};

// K for a line of n fields: c, K of a, K of b, the scale factors of each, and `extra` more.
std::optional<int> k_of_fields(const Shape& s, std::size_t n, std::size_t extra) {
  for (int k = 1; k <= model::kMaxDotK; ++k) {
    const int scales = s.scale ? (k + s.scale_block - 1) / s.scale_block : 0;
    if (std::size_t(1 + 2 * k + 2 * scales) + extra == n) return k;
  }
  return std::nullopt;
}

// The formats of a line's fields: c, a x K, b x K, scale factors, then d when `with_d`.
std::vector<const Format*> field_formats(const Shape& s, bool with_d) {
  std::vector<const Format*> v{s.cfg.c};
  v.insert(v.end(), std::size_t(s.cfg.k), s.cfg.a);
  v.insert(v.end(), std::size_t(s.cfg.k), s.cfg.b);
  v.insert(v.end(), std::size_t(2 * s.scales()), s.scale);
  if (with_d) v.push_back(s.cfg.d);
  return v;
}

// Reads capture lines into the pool (K from the first line unless given). "" or the error.
std::string read_captures(const std::vector<std::string>& files, Shape& shape, mma::Pool& pool,
                          std::vector<Where>& where, std::istream& std_in = std::cin) {
  std::vector<const Format*> formats;
  std::vector<std::uint64_t> fields;
  input::InputError perr;
  std::string line, error;
  for (std::size_t fi = 0; fi < files.size(); ++fi) {
    LineSource src;
    if (std::string why = src.open(files[fi], std_in); !why.empty()) return why;
    perr.source = src.name();
    while (src.next(line, error)) {
      const std::size_t n = count_fields(line);
      if (formats.empty()) {
        const auto k = k_of_fields(shape, n, 1);
        if (!shape.k_given) {
          if (!k)
            return input::InputError{
                src.name(), src.line_no(), "",
                fmt::format("a capture line is c, K values of a and K of b{}, then d; found {} field{}",
                            shape.scale ? ", their scale factors" : "", n, n == 1 ? "" : "s")}
                .text();
          shape.cfg.k = *k;
        }
        formats = field_formats(shape, true);
        pool = mma::make_pool(shape.cfg, shape.scale, shape.scale_block);
      }
      if (!parse_hex_line(line, src.line_no(), formats, formats.size(), fields, perr)) return perr.text();
      if (fields.size() != formats.size())
        return input::InputError{
            src.name(), src.line_no(), "",
            fmt::format("expected {} fields (c, {} a, {} b{}, d), found {}", formats.size(), shape.cfg.k, shape.cfg.k,
                        shape.scale ? fmt::format(", {} scale factors of a and of b", shape.scales()) : "",
                        fields.size())}
            .text();
      mma::DotCase x;
      const auto K = std::size_t(shape.cfg.k), S = std::size_t(shape.scales());
      x.c = fields[0];
      x.a.assign(fields.begin() + 1, fields.begin() + 1 + std::ptrdiff_t(K));
      x.b.assign(fields.begin() + 1 + std::ptrdiff_t(K), fields.begin() + 1 + std::ptrdiff_t(2 * K));
      x.sa.assign(fields.begin() + 1 + std::ptrdiff_t(2 * K), fields.begin() + 1 + std::ptrdiff_t(2 * K + S));
      x.sb.assign(fields.begin() + 1 + std::ptrdiff_t(2 * K + S), fields.end() - 1);
      mma::add_to(pool, shape.cfg, x, fields.back());
      where.push_back({fi, src.line_no()});
    }
    if (!error.empty()) return error;
  }
  if (where.empty()) return fmt::format("{}: no capture lines", files.size() == 1 ? files.front() : "the captures");
  return "";
}

// ---------------------------------------------------------------------------------------------
// The fit.

// The `model dot` options that evaluate a candidate: the parameters of profiles, with dashes.
std::string model_dot_options(const Shape& s, const DotConfig& c) {
  const int K = s.cfg.k;
  std::string o = fmt::format("--algorithm {} --a-format {} --b-format {} --c-format {} --d-format {}",
                              algorithm_name(c, K), s.cfg.a->name, s.cfg.b->name, s.cfg.c->name, s.cfg.d->name);
  const json params = parameters_json(c, K);
  for (const auto& [key, v] : params.items()) {
    // An FMA chain rounds to nearest even: a fact of the algorithm, not an option.
    if (c.algorithm == model::MmaAlgorithm::sfma) continue;
    std::string value;
    if (v.is_null())
      value = "none";
    else if (v.is_boolean())
      value = v.get<bool>() ? "true" : "false";
    else if (v.is_number())
      value = v.dump();
    else if (v.is_array()) {
      for (const json& x : v) value += (value.empty() ? "" : ",") + x.get<std::string>();
      if (value.empty()) continue;
    } else {
      value = v.get<std::string>();
      if (key == "tree") value = "'" + value + "'";  // parentheses and '+': quoted for a shell
    }
    o += " " + model::spell(key, model::ParameterSpelling::option) + " " + value;
  }
  return o;
}

json line_json(const std::vector<std::string>& files, const Where& w) {
  return {{"file", files[w.file]}, {"line", w.line}};
}

constexpr std::size_t kTextClasses = 12;

// Checks the options, then reads the captures: nullopt, or the exit code once the error is written.
std::optional<int> read_fit_input(const FitArgs& args, Shape& shape, mma::Pool& pool, std::vector<Where>& where,
                                  std::ostream& err) {
  if (std::string why = resolve_shape(args.shape, shape); !why.empty()) {
    err << input::error_line("fit: " + why);
    return kExitUsage;
  }
  if (args.discriminate && (*args.discriminate < 1 || *args.discriminate > 100000)) {
    err << "gpuparanoia: fit: --discriminate N takes N in 1..100000\n";
    return kExitUsage;
  }
  if (!(args.max_seconds >= 0 && args.max_seconds <= 1e6)) {  // NaN fails both
    err << input::error_line(
        fmt::format("fit: --max-seconds takes 0 (no limit) to 1000000 seconds, got {}", args.max_seconds));
    return kExitUsage;
  }
  if (std::string why = read_captures(args.captures, shape, pool, where); !why.empty()) {
    err << input::error_line(why);
    return kExitBadInput;
  }
  return std::nullopt;
}

// The search, stopped --max-seconds after t0, drawing up to --discriminate splitting inputs.
mma::FitResult search_fit(const FitArgs& args, const mma::MmaConfig& cfg, const mma::Pool& pool,
                          std::chrono::steady_clock::time_point t0) {
  mma::Bounds bounds;
  if (args.max_seconds > 0)
    bounds.deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(args.max_seconds));
  return mma::fit(cfg, pool, bounds, std::size_t(args.discriminate.value_or(0)));
}

// A fit's report as it is made: the text (standard error with --discriminate, whose lines take
// standard output) and the JSON document, filled in by the functions below.
struct FitReport {
  const FitArgs& args;
  const Shape& shape;
  const mma::Pool& pool;
  const std::vector<Where>& where;
  const mma::FitResult& fitted;
  std::chrono::steady_clock::time_point t0;
  std::ostream& text;
  json doc;
  json candidates;
  std::vector<std::string> discriminating;
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
};

json fit_document(const FitArgs& args, const Shape& shape, const mma::Pool& pool, std::uint64_t checked) {
  json doc = {{"schema", "gpuparanoia-fit/1"},
              {"lines", pool.size()},
              {"config", shape.cfg.name()},
              {"files", args.captures},
              {"candidates_checked", checked}};
  if (shape.scale) doc["scale"] = {{"format", shape.scale->name}, {"block", shape.scale_block}};
  return doc;
}

// A candidate of the JSON document; the caller adds its class or its first mismatches.
json fit_candidate_json(const Shape& shape, const DotConfig& c, std::size_t mismatches) {
  const int K = shape.cfg.k;
  return {{"algorithm", algorithm_name(c, K)},
          {"parameters", parameters_json(c, K)},
          {"description", mma::describe(shape.cfg, c)},
          {"mismatches", mismatches},
          {"model_dot", model_dot_options(shape, c)}};
}

// The classes of the survivors, in the text (the first kTextClasses) and in the JSON (all of them).
json report_fit_classes(FitReport& r) {
  const std::vector<DotConfig>& survivors = r.fitted.survivors;
  const mma::Classes& k = r.fitted.classes;
  std::vector<std::vector<DotConfig>> members(k.rep.size());
  for (std::size_t i = 0; i < survivors.size(); ++i) members[k.class_of[i]].push_back(survivors[i]);
  json classes = json::array();
  for (std::size_t c = 0; c < k.rep.size(); ++c) {
    const DotConfig& best = survivors[k.rep[c]];
    const json open = mma::ambiguity(r.shape.cfg.k, members[c]);
    classes.push_back({{"class", c + 1}, {"candidates", members[c].size()}, {"open", open}});
    if (c == kTextClasses) r.text << fmt::format("... and {} more classes (--json lists them)\n", k.rep.size() - c);
    if (c >= kTextClasses) continue;
    r.text << fmt::format("class {}: {} candidate{}, first {}\n", c + 1, members[c].size(),
                          members[c].size() == 1 ? "" : "s", mma::describe(r.shape.cfg, best));
    for (const auto& [key, v] : open.items()) r.text << fmt::format("  open: {} {}\n", key, v.get<std::string>());
    r.text << "  gpuparanoia model dot " << model_dot_options(r.shape, best) << "\n";
  }
  return classes;
}

// --discriminate: the inputs that split the classes, with each class's prediction; the lines
// themselves go to standard output once the report is done.
void report_fit_discriminating(FitReport& r) {
  const mma::Classes& k = r.fitted.classes;
  json lines = json::array();
  for (std::size_t idx : k.splitting) {
    json pred = json::object();
    for (std::size_t c = 0; c < k.rep.size(); ++c)
      pred[std::to_string(c + 1)] = format_hex(k.pred[k.rep[c]][idx], r.shape.cfg.d->storage_bits);
    r.discriminating.push_back(mma::dot_line(r.shape.cfg, r.shape.scale, r.fitted.inputs[idx]));
    lines.push_back({{"line", r.discriminating.back()}, {"predictions", pred}});
  }
  r.doc["discriminating"] = lines;
  r.text << (k.rep.size() == 1 ? std::string("one class: no input to split it\n")
                               : fmt::format("{} input lines that split the classes written to standard output; run "
                                             "them on the unit, add its outputs and fit again\n",
                                             lines.size()));
}

// Candidates reproduce every line: each class's best, then the others, best first, 64 at most.
void report_fit_survivors(FitReport& r) {
  const std::vector<DotConfig>& survivors = r.fitted.survivors;
  const mma::Classes& k = r.fitted.classes;
  r.text << fmt::format(
      "{} candidates checked in {:.1f} s; {} reproduce every line, in {} class{} (told apart on {} random inputs)\n",
      r.fitted.checked, r.seconds(), survivors.size(), k.rep.size(), k.rep.size() == 1 ? "" : "es",
      r.fitted.inputs.size());
  std::vector<std::size_t> order = k.rep;
  for (std::size_t i = 0; i < survivors.size() && order.size() < 64; ++i)
    if (std::find(k.rep.begin(), k.rep.end(), i) == k.rep.end()) order.push_back(i);
  for (std::size_t i : order) {
    json c = fit_candidate_json(r.shape, survivors[i], 0);
    c["class"] = k.class_of[i] + 1;
    r.candidates.push_back(c);
  }
  r.doc["survivors"] = survivors.size();
  r.doc["classes"] = report_fit_classes(r);
  if (r.args.discriminate) report_fit_discriminating(r);
}

// The first three lines that candidate c mispredicts, with the captured and predicted outputs.
json first_fit_mismatches(const FitReport& r, const DotConfig& c) {
  const model::Dot dot(c);
  const int bits = r.shape.cfg.d->storage_bits;
  json firsts = json::array();
  for (std::size_t i = 0; i < r.pool.size() && firsts.size() < 3; ++i) {
    const std::uint64_t p = r.pool.predict(dot, i);
    if (mma::agrees(c, p, r.pool.out[i])) continue;
    json l = line_json(r.args.captures, r.where[i]);
    l["captured"] = format_hex(r.pool.out[i], bits);
    l["predicted"] = format_hex(p, bits);
    firsts.push_back(l);
  }
  return firsts;
}

// No candidate reproduces every line and the search ran whole: the closest, with their first misses.
void report_fit_closest(FitReport& r) {
  r.text << fmt::format("{} candidates checked in {:.1f} s; none reproduces every line. The closest:\n",
                        r.fitted.checked, r.seconds());
  for (const mma::Near& x : r.fitted.closest) {
    json c = fit_candidate_json(r.shape, x.c, x.misses);
    c["first_mismatches"] = first_fit_mismatches(r, x.c);
    r.text << fmt::format("  {} of {} lines mispredicted by {}\n", x.misses, r.pool.size(),
                          mma::describe(r.shape.cfg, x.c));
    for (const json& l : c["first_mismatches"])
      r.text << fmt::format("    {}:{}: captured {}, predicted {}\n", l["file"].get<std::string>(),
                            l["line"].get<long>(), l["captured"].get<std::string>(), l["predicted"].get<std::string>());
    r.candidates.push_back(c);
  }
}

// What cut the search short, if anything.
void report_fit_bounds(FitReport& r) {
  r.doc["complete"] = r.fitted.complete();
  if (r.fitted.out_of_time)
    r.text << fmt::format("incomplete: --max-seconds {} ran out before every candidate was checked\n",
                          r.args.max_seconds);
  if (r.fitted.too_many)
    r.text << fmt::format(
        "incomplete: more than {} candidates reproduce every line, too many to class: capture more lines "
        "(the first {} are classed)\n",
        mma::kMaxFitSurvivors, mma::kMaxFitSurvivors);
}

// The discriminating lines on standard output, then the JSON file; the exit code.
int finish_fit(FitReport& r, int code, std::ostream& out, std::ostream& err) {
  r.doc["candidates"] = r.candidates;
  r.doc["seconds"] = r.seconds();
  for (const std::string& l : r.discriminating) out << l << "\n";
  if (!r.args.json.empty())
    if (auto w = audit::write_atomically(r.args.json, r.doc.dump(2) + "\n"); !w) {
      err << input::error_line(w.error().message);
      return kExitWriteFailed;
    }
  return code;
}

}  // namespace

int run_fit(const FitArgs& args, std::ostream& out, std::ostream& err) {
  Shape shape;
  mma::Pool pool;
  std::vector<Where> where;
  if (const std::optional<int> code = read_fit_input(args, shape, pool, where, err)) return *code;
  const mma::MmaConfig& cfg = shape.cfg;
  const auto t0 = std::chrono::steady_clock::now();
  const mma::FitResult fitted = search_fit(args, cfg, pool, t0);
  if (fitted.checked == 0 && fitted.complete()) {
    err << input::error_line(fmt::format("fit: the model has no algorithm for {} x {} + {} -> {}", cfg.a->name,
                                         cfg.b->name, cfg.c->name, cfg.d->name));
    return kExitUsage;
  }
  FitReport r{args,
              shape,
              pool,
              where,
              fitted,
              t0,
              args.discriminate ? err : out,
              fit_document(args, shape, pool, fitted.checked),
              json::array(),
              {}};
  r.text << fmt::format(
      "fit: {} lines, K = {}, {} x {} + {} -> {}{}\n", pool.size(), cfg.k, cfg.a->name, cfg.b->name, cfg.c->name,
      cfg.d->name,
      shape.scale ? fmt::format(", scale factors {} per {} products", shape.scale->name, shape.scale_block) : "");
  if (!fitted.survivors.empty()) {
    report_fit_survivors(r);
  } else {
    if (fitted.complete())
      report_fit_closest(r);
    else
      r.text << fmt::format("{} candidates checked in {:.1f} s, none of them reproducing every line\n", fitted.checked,
                            r.seconds());
    r.doc["survivors"] = 0;
    r.doc["classes"] = json::array();
  }
  report_fit_bounds(r);
  return finish_fit(r, fitted.survivors.empty() ? kExitDifferences : kExitOk, out, err);
}

namespace {

// ---------------------------------------------------------------------------------------------
// The MATLAB models' layout (tests_mma/golden/nvidia-tensor-cores/README.md): a and b as 8-digit
// binary32 bit patterns, K per line; c and d as 32-character 0/1 strings of binary32 values; a
// binary16 d widened to binary32; c held in binary32 and rounded to a narrower c with RNE.

// value (binary32 bits) in f exactly: f's bits, or nullopt.
std::optional<std::uint64_t> narrow(const Format& f, std::uint64_t b32) {
  const model::Result r = model::cvt(f, model::binary32, model::Options{}, b32);
  if (r.flags & model::Flag::inexact) return std::nullopt;
  return r.bits;
}

std::uint64_t widen(const Format& f, std::uint64_t bits) {
  return model::cvt(model::binary32, f, model::Options{}, bits).bits;
}

std::optional<std::uint64_t> parse_bits(std::string_view s) {
  std::uint64_t v = 0;
  std::size_t n = 0;
  for (char ch : s) {
    if (ch == ' ' || ch == '\t' || ch == '\r') continue;
    if (ch != '0' && ch != '1') return std::nullopt;
    v = (v << 1) | std::uint64_t(ch - '0');
    ++n;
  }
  if (n != 32) return std::nullopt;
  return v;
}

std::string bits_text(std::uint64_t v) {
  std::string s(32, '0');
  for (int i = 0; i < 32; ++i) s[std::size_t(31 - i)] = char('0' + ((v >> i) & 1));
  return s;
}

// The shape of a conversion: one the MATLAB layout holds. nullopt, or the exit code once the
// error is written.
std::optional<int> check_convert_shape(const ConvertArgs& args, Shape& shape, std::ostream& err) {
  if (std::string why = resolve_shape(args.shape, shape); !why.empty()) {
    err << input::error_line("captures convert: " + why);
    return kExitUsage;
  }
  if (shape.scale) {
    err << "gpuparanoia: captures convert: the MATLAB layout has no scale factors\n";
    return kExitUsage;
  }
  const mma::MmaConfig& cfg = shape.cfg;
  for (const Format* f : {cfg.a, cfg.b, cfg.c, cfg.d})
    if (f->precision() > model::binary32.precision() || f->emax() > model::binary32.emax()) {
      err << input::error_line(
          fmt::format("captures convert: the MATLAB layout holds binary32 values, not {}", f->name));
      return kExitUsage;
    }
  return std::nullopt;
}

// --to-matlab: capture lines on standard input into a.txt, b.txt, c.txt and d.txt of the folder.
int convert_to_matlab(const ConvertArgs& args, Shape& shape, std::istream& in, std::ostream& err) {
  if (!args.a.empty() || !args.b.empty() || !args.c.empty() || !args.d.empty()) {
    err << "gpuparanoia: captures convert: --to-matlab reads capture lines on standard input, not --a/--b/--c/--d\n";
    return kExitUsage;
  }
  mma::Pool pool;
  std::vector<Where> where;
  if (std::string why = read_captures({"-"}, shape, pool, where, in); !why.empty()) {
    err << input::error_line(why);
    return kExitBadInput;
  }
  const mma::MmaConfig& cfg = shape.cfg;
  std::string a, b, c, d;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    for (std::uint64_t v : pool.A(i)) a += fmt::format("{:08x} ", widen(*cfg.a, v));
    for (std::uint64_t v : pool.B(i)) b += fmt::format("{:08x} ", widen(*cfg.b, v));
    a += "\n";
    b += "\n";
    c += bits_text(widen(*cfg.c, pool.c[i])) + "\n";
    d += bits_text(widen(*cfg.d, pool.out[i])) + "\n";
  }
  std::error_code ec;
  fs::create_directories(args.to_matlab, ec);
  for (const auto& [name, body] : {std::pair{"a.txt", &a}, {"b.txt", &b}, {"c.txt", &c}, {"d.txt", &d}})
    if (auto w = audit::write_atomically(fs::path(args.to_matlab) / name, *body); !w) {
      err << input::error_line(w.error().message);
      return kExitWriteFailed;
    }
  return kExitOk;
}

std::string matlab_error(const std::string& source, long line, const std::string& what) {
  return input::InputError{source, line, "", what}.text();
}

// The files of the MATLAB layout, read a line of each at a time; c is optional (zero).
struct MatlabFiles {
  LineSource a, b, c, d;
  bool has_c = false;
  std::string la, lb, lc, ld;
};

// Opens --a, --b, --d and --c where given; the error or "".
std::string open_matlab_files(const ConvertArgs& args, MatlabFiles& f) {
  for (auto [src, name] : {std::pair{&f.a, &args.a}, {&f.b, &args.b}, {&f.d, &args.d}})
    if (std::string why = src->open(*name); !why.empty()) return matlab_error("", 0, why);
  f.has_c = !args.c.empty();
  if (f.has_c)
    if (std::string why = f.c.open(args.c); !why.empty()) return matlab_error("", 0, why);
  return "";
}

// The next line of every file: true when each has one; false at the end, with `error` set when the
// files do not end together or a line is too long.
bool next_matlab_lines(MatlabFiles& f, std::string& error) {
  std::string read_error;
  const bool ga = f.a.next(f.la, read_error), gb = ga && f.b.next(f.lb, read_error),
             gd = gb && f.d.next(f.ld, read_error);
  const bool gc = !f.has_c || (gd && f.c.next(f.lc, read_error));
  if (!read_error.empty()) {
    error = matlab_error("", 0, read_error);
    return false;
  }
  if (!ga) {
    // a has ended: so must the others.
    for (auto [src, given] : {std::pair{&f.b, true}, {&f.d, true}, {&f.c, f.has_c}})
      if (given && src->next(f.lb, read_error)) {
        error = matlab_error(src->name(), src->line_no(),
                             fmt::format("has more lines than {} ({} lines there)", f.a.name(), f.a.line_no()));
        return false;
      }
    if (!read_error.empty()) error = matlab_error("", 0, read_error);
    return false;
  }
  if (!gb || !gd || !gc) {
    error = matlab_error(!gb   ? f.b.name()
                         : !gd ? f.d.name()
                               : f.c.name(),
                         0, fmt::format("has fewer lines than {} ({} lines there)", f.a.name(), f.a.line_no()));
    return false;
  }
  return true;
}

// A line of a or b: binary32 bit patterns in hex, each exactly a value of `f`, into `words`; the
// error or "".
std::string matlab_words(const LineSource& src, const std::string& t, const Format& f,
                         std::vector<std::uint64_t>& words) {
  std::size_t i = 0;
  while (i < t.size()) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r')) ++i;
    if (i == t.size()) break;
    const std::size_t start = i;
    while (i < t.size() && t[i] != ' ' && t[i] != '\t' && t[i] != '\r') ++i;
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(t.data() + start, t.data() + i, v, 16);
    if (ec != std::errc() || p != t.data() + i || i - start > 8)
      return matlab_error(src.name(), src.line_no(),
                          fmt::format("word {}: not an 8-digit binary32 bit pattern", words.size() + 1));
    const auto bits = narrow(f, v);
    if (!bits)
      return matlab_error(src.name(), src.line_no(),
                          fmt::format("word {}: {:08x} is not exactly a {} value", words.size() + 1, v, f.name));
    words.push_back(*bits);
  }
  return "";
}

// The current lines of the files as a capture line appended to `buffer`; K is the first line's
// unless given. The error or "".
std::string append_capture_line(const mma::MmaConfig& cfg, const MatlabFiles& f, int& K, std::string& buffer) {
  std::vector<std::uint64_t> words[2];
  const Format* fmts[2] = {cfg.a, cfg.b};
  const LineSource* srcs[2] = {&f.a, &f.b};
  const std::string* texts[2] = {&f.la, &f.lb};
  for (int j = 0; j < 2; ++j)
    if (std::string why = matlab_words(*srcs[j], *texts[j], *fmts[j], words[j]); !why.empty()) return why;
  if (K == 0) K = int(words[0].size());
  for (int j = 0; j < 2; ++j)
    if (int(words[j].size()) != K || K < 1 || K > model::kMaxDotK)
      return matlab_error(srcs[j]->name(), srcs[j]->line_no(),
                          fmt::format("expected {} words, found {}", K, words[j].size()));
  std::uint64_t c = 0;
  if (f.has_c) {
    const auto v = parse_bits(f.lc);
    if (!v) return matlab_error(f.c.name(), f.c.line_no(), "expected 32 characters 0 or 1 (a binary32 value)");
    c = model::cvt(*cfg.c, model::binary32, model::Options{}, *v).bits;  // rounded to nearest even
  } else {
    c = model::zero(*cfg.c, false).bits;
  }
  const auto dv = parse_bits(f.ld);
  if (!dv) return matlab_error(f.d.name(), f.d.line_no(), "expected 32 characters 0 or 1 (a binary32 value)");
  const auto d = narrow(*cfg.d, *dv);
  if (!d)
    return matlab_error(f.d.name(), f.d.line_no(), fmt::format("{:08x} is not exactly a {} value", *dv, cfg.d->name));
  buffer += format_hex(c, cfg.c->storage_bits);
  for (std::uint64_t v : words[0]) buffer += " " + format_hex(v, cfg.a->storage_bits);
  for (std::uint64_t v : words[1]) buffer += " " + format_hex(v, cfg.b->storage_bits);
  buffer += " " + format_hex(*d, cfg.d->storage_bits) + "\n";
  return "";
}

// The MATLAB files into capture lines on standard output, written in blocks of 64 KiB.
int convert_from_matlab(const ConvertArgs& args, const Shape& shape, std::ostream& out, std::ostream& err) {
  if (args.a.empty() || args.b.empty() || args.d.empty()) {
    err << "gpuparanoia: captures convert: --a, --b and --d name the files (--c too, unless c is zero)\n";
    return kExitUsage;
  }
  MatlabFiles f;
  std::string error = open_matlab_files(args, f), buffer;
  int K = shape.k_given ? shape.cfg.k : 0;
  while (error.empty() && next_matlab_lines(f, error)) {
    error = append_capture_line(shape.cfg, f, K, buffer);
    if (buffer.size() > (1u << 16)) {
      out << buffer;
      buffer.clear();
    }
  }
  if (!error.empty()) {
    err << input::error_line(error);
    return kExitBadInput;
  }
  out << buffer;
  return kExitOk;
}

}  // namespace

int run_convert(const ConvertArgs& args, std::istream& in, std::ostream& out, std::ostream& err) {
  Shape shape;
  if (const std::optional<int> code = check_convert_shape(args, shape, err)) return *code;
  if (!args.to_matlab.empty()) return convert_to_matlab(args, shape, in, err);
  return convert_from_matlab(args, shape, out, err);
}

void add_fit_commands(CLI::App& app, int& exit_code) {
  auto fa = std::make_shared<FitArgs>();
  CLI::App* fit = app.add_subcommand(
      "fit", "The model's algorithms and parameters that reproduce captured dot products (lines 'c a.. b.. d' in hex)");
  add_shape_options(fit, fa->shape);
  fit->add_option("--json", fa->json, "Write the fit as JSON (schema gpuparanoia-fit/1) to this file");
  fit->add_option(
      "--discriminate", fa->discriminate,
      "Write up to N input lines that split the classes left to standard output (the report goes to standard error)");
  fit->add_option("--max-seconds", fa->max_seconds,
                  "Stop checking candidates after this time (the fit says it is incomplete)");
  fit->add_option("captures", fa->captures, "Capture files ('-': standard input)")->required();
  fit->callback([fa, &exit_code] {
    std::ios_base::sync_with_stdio(false);
    exit_code = run_fit(*fa, std::cout, std::cerr);
  });

  auto ca = std::make_shared<ConvertArgs>();
  CLI::App* captures = app.add_subcommand("captures", "Captured dot products in other layouts");
  CLI::App* convert = captures->add_subcommand(
      "convert", "The MATLAB tensor-core models' model_validation layout into capture lines on standard output");
  add_shape_options(convert, ca->shape);
  convert->add_option("--a", ca->a, "File of a: K binary32 bit patterns in hex per line");
  convert->add_option("--b", ca->b, "File of b: K binary32 bit patterns in hex per line");
  convert->add_option("--c", ca->c, "File of c: a binary32 value as 32 characters 0/1 per line (absent: c = 0)");
  convert->add_option("--d", ca->d, "File of d: the captured output as 32 characters 0/1 per line (binary16 widened)");
  convert->add_option(
      "--to-matlab", ca->to_matlab,
      "The other way: capture lines on standard input into a.txt, b.txt, c.txt and d.txt of this folder");
  convert->callback([ca, &exit_code] {
    std::ios_base::sync_with_stdio(false);
    exit_code = run_convert(*ca, std::cin, std::cout, std::cerr);
  });
}

}  // namespace gp::cli
