#include "cli/model_dot.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "cli/batch.hpp"
#include "cli/exit_codes.hpp"
#include "input/input_error.hpp"
#include "input/limits.hpp"
#include "model/dot_parameters.hpp"
#include "model/mma_instructions.hpp"

namespace gp::cli {

namespace {

using model::DotConfig;
using model::Format;

std::string algorithm_names() {
  std::string s;
  for (model::MmaAlgorithm a : model::all_mma_algorithms) s += (s.empty() ? "" : " ") + std::string(model::name(a));
  return s + " tree ocfda";
}

// The message of a bad line: "gpuparanoia: <stdin>:3: why".
std::string line_error(long line_no, std::string why) {
  return input::error_line(input::InputError{input::kStdinName, line_no, "", std::move(why)}.text());
}

// Where DotArgs keeps each parameter's option (the options are the table's,
// model/dot_parameters.hpp): integers as CLI11 reads them, the others as written.
using ArgField =
    std::variant<std::optional<int> DotArgs::*, std::string DotArgs::*, std::vector<std::string> DotArgs::*>;
ArgField arg_field(std::string_view key) {
  static const std::map<std::string_view, ArgField> fields = {{"F", &DotArgs::F},
                                                              {"block", &DotArgs::block},
                                                              {"group", &DotArgs::group},
                                                              {"out_fraction_bits", &DotArgs::out_fraction_bits},
                                                              {"align_floor", &DotArgs::align_floor},
                                                              {"out_rounding", &DotArgs::out_rounding},
                                                              {"nan", &DotArgs::nan},
                                                              {"round_down_alignment", &DotArgs::round_down_alignment},
                                                              {"carry_bits", &DotArgs::carry_bits},
                                                              {"scale_format", &DotArgs::scale_format},
                                                              {"scale_block", &DotArgs::scale_block},
                                                              {"tree", &DotArgs::tree},
                                                              {"sums", &DotArgs::sums},
                                                              {"products", &DotArgs::products},
                                                              {"rounding", &DotArgs::rounding},
                                                              {"flush", &DotArgs::flush},
                                                              {"flush_inputs", &DotArgs::flush_inputs}};
  return fields.at(key);
}

// Whether the option of a parameter was given.
bool given(const DotArgs& args, const model::DotParameter& p) {
  return std::visit(
      [&](auto field) {
        const auto& v = args.*field;
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::optional<int>>)
          return v.has_value();
        else
          return !v.empty();
      },
      arg_field(p.name));
}

// The options of the --algorithm form as parameters; why one is malformed, or "".
std::string parameters_of(const DotArgs& args, model::DotParameters& p) {
  for (const model::DotParameter& param : model::dot_parameters()) {
    if (!given(args, param)) continue;
    const std::string key(param.name);
    const ArgField field = arg_field(param.name);
    if (const auto* i = std::get_if<std::optional<int> DotArgs::*>(&field)) {
      p[key] = std::int64_t(*(args.**i));
      continue;
    }
    if (const auto* l = std::get_if<std::vector<std::string> DotArgs::*>(&field)) {
      p[key] = args.**l;
      continue;
    }
    const std::string& text = args.*std::get<std::string DotArgs::*>(field);
    if (param.type == model::DotParameterType::integer_or_null) {
      if (text == "none") {
        p[key] = std::monostate{};
        continue;
      }
      int v = 0;
      const char* end = text.data() + text.size();
      const auto [ptr, ec] = std::from_chars(text.data(), end, v);
      if (ec != std::errc() || ptr != end)
        return fmt::format("{}: an exponent or 'none', got '{}'", model::spell(key, model::ParameterSpelling::option),
                           text);
      p[key] = std::int64_t(v);
    } else if (param.type == model::DotParameterType::boolean) {
      if (text != "true" && text != "false")
        return fmt::format("{}: true or false, got '{}'", model::spell(key, model::ParameterSpelling::option), text);
      p[key] = text == "true";
    } else {
      p[key] = text;
    }
  }
  return "";
}

void list_instructions(std::ostream& out) {
  for (const model::MmaInstruction& i : model::all_mma_instructions()) {
    const DotConfig& c = i.config;
    std::string params;
    if (c.algorithm == model::MmaAlgorithm::gps)
      params = fmt::format("G={}", c.group);
    else if (c.algorithm == model::MmaAlgorithm::tree)
      params = c.tree->text();
    else if (c.algorithm != model::MmaAlgorithm::sfma)
      params = fmt::format("F={}", c.F);
    if (c.block > 0 && c.algorithm != model::MmaAlgorithm::sfma && c.algorithm != model::MmaAlgorithm::gps)
      params += fmt::format(" block={}", c.block);
    if (c.scale) params += fmt::format(" scale={}/{}", c.scale->name, c.scale_block);
    if (c.flush_inputs) params += " flush_inputs";
    out << fmt::format("{:48} {}x{}x{}  {},{},{},{}  {}({})\n", i.id(), i.m, i.n, i.k, c.a->name, c.b->name, c.c->name,
                       c.d->name, model::name(c.algorithm), params);
  }
}

// What a batch evaluates, an instruction or an algorithm's form, with its evaluators.
struct Unit {
  const model::MmaInstruction* ins = nullptr;
  std::optional<DotAlgorithmForm> form;
  // Evaluators, one per K (the --algorithm form derives block defaults from K), created on first
  // use and shared by the workers.
  std::map<int, std::unique_ptr<model::Dot>> dots;
  std::mutex dots_mutex;

  const Format* d_format() const { return ins ? ins->config.d : form->d; }

  // K and the number of scale factors of each operand for a line of `fields` fields.
  bool shape_for(std::size_t fields, int& k, int& scales) const {
    if (ins) {
      k = ins->k;
      scales = model::scale_count(ins->config, k);
      return fields == std::size_t(1 + 2 * k + 2 * scales);
    }
    if (!form->scale) {
      if (fields < 1 || fields % 2 == 0) return false;
      k = int(fields - 1) / 2;
      scales = 0;
      return k <= model::kMaxDotK;
    }
    const int sb = form->scale_block;
    for (k = 0; k <= model::kMaxDotK; ++k) {
      scales = (k + sb - 1) / sb;
      if (std::size_t(1 + 2 * k + 2 * scales) == fields) return true;
    }
    return false;
  }

  // The error message of a line whose field count fits no K.
  std::string shape_error(long line_no, std::size_t n, int k, int scales) const {
    if (ins)
      return line_error(
          line_no, fmt::format("{} needs {} fields (c, {} a, {} b{}), found {}", ins->id(), 1 + 2 * k + 2 * scales, k,
                               k, scales ? fmt::format(", {} scale factors of a and of b", scales) : "", n));
    return line_error(
        line_no, fmt::format("expected c, K values of a and K of b{} (K <= {}), found {} field{}",
                             form->scale ? " and their scale factors" : "", model::kMaxDotK, n, n == 1 ? "" : "s"));
  }

  // The evaluator for K products, or nullptr and the error of the line.
  const model::Dot* evaluator(int k, long line_no, std::string& error) {
    const std::lock_guard lock(dots_mutex);
    auto it = dots.find(k);
    if (it == dots.end()) {
      if (form->tree_k && form->tree_k != k) {
        error = line_error(line_no, fmt::format("the tree sums {} products, the line has {}", form->tree_k, k));
        return nullptr;
      }
      const model::DotConfigOrError cfg = form->config(k);
      if (!cfg.config) {
        error = line_error(line_no, cfg.error);
        return nullptr;
      }
      it = dots.emplace(k, std::make_unique<model::Dot>(*cfg.config)).first;
    }
    return it->second.get();
  }
};

}  // namespace

int resolve_instruction(const DotArgs& args, const model::MmaInstruction*& ins, std::ostream& err) {
  ins = model::find_mma_instruction(args.instruction);
  if (!ins) {
    err << input::error_line(
        fmt::format("unknown instruction '{}' (arch:name, e.g. hopper:HMMA.16816.F32; `gpuparanoia model dot "
                    "--list` lists them)",
                    args.instruction));
    return kExitUsage;
  }
  // The fused algorithms' parameters (those of the tree and sfma aside) name no instruction.
  bool misplaced = !args.a_format.empty() || !args.b_format.empty() || !args.c_format.empty() || !args.d_format.empty();
  for (const model::DotParameter& p : model::dot_parameters())
    misplaced = misplaced || (p.taken_by_fused() && given(args, p));
  if (misplaced) {
    err << "gpuparanoia: --F, --block, --group, the format options and the fused algorithms' parameters belong to "
           "the "
           "--algorithm form\n";
    return kExitUsage;
  }
  return kExitOk;
}

int resolve_algorithm(const DotArgs& args, DotAlgorithmForm& f, std::ostream& err) {
  const auto alg = model::find_mma_algorithm(args.algorithm);
  if (!alg) {
    err << input::error_line(fmt::format("unknown algorithm '{}' (known: {})", args.algorithm, algorithm_names()));
    return kExitUsage;
  }
  f = {};
  f.algorithm = *alg;
  if (const std::string why = parameters_of(args, f.parameters); !why.empty()) {
    err << input::error_line(why);
    return kExitUsage;
  }
  const std::pair<const char*, const std::string*> names[] = {{"--a-format", &args.a_format},
                                                              {"--b-format", &args.b_format},
                                                              {"--c-format", &args.c_format},
                                                              {"--d-format", &args.d_format}};
  const Format** slots[] = {&f.a, &f.b, &f.c, &f.d};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto found = model::find_format(*names[i].second);
    if (!found) {
      err << input::error_line(fmt::format("{} needs a known format, got '{}' (known: {})", names[i].first,
                                           *names[i].second, format_names()));
      return kExitUsage;
    }
    *slots[i] = *found;
  }
  // Check the configuration once, before reading anything: for the tree's own K, else for a
  // representative one. A malformed tree is bad input, as a malformed line is.
  model::DotConfigOrError checked = f.config(0);
  if (checked.config && !checked.config->tree) checked = f.config(16);
  if (!checked.config) {
    err << input::error_line(checked.error);
    return checked.key == "tree" && f.algorithm == model::MmaAlgorithm::tree ? kExitBadInput : kExitUsage;
  }
  f.scale = checked.config->scale;
  f.scale_block = checked.config->scale_block;
  if (checked.config->tree) f.tree_k = checked.config->tree->k;
  return kExitOk;
}

namespace {

// The --instruction form; the exit code (kExitOk: resolved).
int instruction_unit(const DotArgs& args, Unit& u, std::ostream& err) {
  if (const int rc = resolve_instruction(args, u.ins, err); rc != kExitOk) return rc;
  u.dots.emplace(u.ins->k, std::make_unique<model::Dot>(u.ins->config));
  return kExitOk;
}

// The --algorithm form; the exit code (kExitOk: resolved).
int algorithm_unit(const DotArgs& args, Unit& u, std::ostream& err) {
  DotAlgorithmForm f;
  if (const int rc = resolve_algorithm(args, f, err); rc != kExitOk) return rc;
  u.form = f;
  return kExitOk;
}

// Parses and evaluates lines [begin, end) of a chunk, the first of them line `first_line_no`; stops
// at the first bad line, its message in `errors`.
void evaluate_lines(Unit& u, const std::vector<std::string>& lines, std::size_t begin, std::size_t end,
                    long first_line_no, std::vector<std::uint64_t>& results, std::vector<std::string>& errors) {
  std::vector<std::uint64_t> parsed;
  std::vector<const model::Format*> widths;
  std::map<int, const model::Dot*> cache;
  input::InputError perr{input::kStdinName, 0, "", ""};
  for (std::size_t i = begin; i < end; ++i) {
    const long no = first_line_no + long(i);
    const std::size_t n = count_fields(lines[i]);
    int k = 0, scales = 0;
    if (!u.shape_for(n, k, scales)) {
      errors[i] = u.shape_error(no, n, k, scales);
      return;
    }
    const model::Dot* dot = nullptr;
    if (auto c = cache.find(k); c != cache.end()) {
      dot = c->second;
    } else {
      dot = u.evaluator(k, no, errors[i]);
      if (!dot) return;
      cache.emplace(k, dot);
    }
    const DotConfig& cfg = dot->config();
    widths.assign({cfg.c});
    widths.insert(widths.end(), std::size_t(k), cfg.a);
    widths.insert(widths.end(), std::size_t(k), cfg.b);
    if (scales) widths.insert(widths.end(), std::size_t(2 * scales), cfg.scale);
    if (!parse_hex_line(lines[i], no, widths, n, parsed, perr)) {
      errors[i] = input::error_line(perr.text());
      return;
    }
    const std::uint64_t* p = parsed.data();
    const auto uk = std::size_t(k), us = std::size_t(scales);
    results[i] = (*dot)(p[0], {p + 1, uk}, {p + 1 + uk, uk}, {p + 1 + 2 * uk, us}, {p + 1 + 2 * uk + us, us});
  }
}

// Reads the batch in chunks of lines, each parsed and evaluated on every core, then written in
// order. A worker stops at its first bad line; the first bad line of the chunk ends the run.
int evaluate_batch(Unit& u, unsigned threads, std::istream& in, std::ostream& out, std::ostream& err) {
  constexpr std::size_t kChunk = 1 << 16;
  // Grown as lines come (a short batch allocates little), reused from chunk to chunk.
  std::vector<std::string> lines;
  std::vector<std::uint64_t> results;
  std::vector<std::string> errors;
  std::string buffer;
  long line_no = 0;
  const auto work = [&](std::size_t begin, std::size_t end, long first) {
    evaluate_lines(u, lines, begin, end, first, results, errors);
  };
  bool eof = false, too_long = false;
  while (!eof) {
    std::size_t n = 0;
    for (LineRead got = LineRead::line; n < kChunk; ++n) {
      if (n == lines.size()) lines.emplace_back();
      got = read_line(in, lines[n]);
      eof = got != LineRead::line;
      too_long = got == LineRead::too_long;
      if (eof) break;
    }
    if (n == 0 && !too_long) break;
    results.resize(std::max(results.size(), n));
    errors.resize(std::max(errors.size(), n));
    for (std::size_t i = 0; i < n; ++i) errors[i].clear();
    const long first = line_no + 1;
    line_no += long(n);
    const unsigned t = unsigned(std::min<std::size_t>(threads, std::max<std::size_t>(1, n / 256)));
    if (t <= 1) {
      work(0, n, first);
    } else {
      std::vector<std::thread> pool;
      for (unsigned i = 0; i < t; ++i) pool.emplace_back(work, n * i / t, n * (i + 1) / t, first);
      for (std::thread& th : pool) th.join();
    }
    buffer.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (!errors[i].empty()) {
        out << buffer;
        out.flush();
        err << errors[i];
        return kExitBadInput;
      }
      buffer += format_hex(results[i], u.d_format()->storage_bits);
      buffer += '\n';
    }
    out << buffer;
    if (too_long) {
      out.flush();
      err << line_error(line_no + 1, fmt::format("longer than {} bytes", input::kMaxLineBytes));
      return kExitBadInput;
    }
  }
  out.flush();
  return kExitOk;
}

}  // namespace

int run_model_dot(const DotArgs& args, std::istream& in, std::ostream& out, std::ostream& err) {
  if (args.list) {
    list_instructions(out);
    return 0;
  }
  const bool by_instruction = !args.instruction.empty();
  if (by_instruction == !args.algorithm.empty()) {
    err << "gpuparanoia: model dot needs either --instruction ARCH:NAME or --algorithm A\n";
    return kExitUsage;
  }
  Unit u;
  if (const int rc = by_instruction ? instruction_unit(args, u, err) : algorithm_unit(args, u, err); rc != kExitOk)
    return rc;
  const unsigned threads = args.threads ? args.threads : std::max(1u, std::thread::hardware_concurrency());
  return evaluate_batch(u, threads, in, out, err);
}

void add_dot_unit_options(CLI::App& cmd, DotArgs& args) {
  auto* ins = cmd.add_option("--instruction", args.instruction,
                             "An instruction of MMA-Sim's tables as ARCH:NAME (e.g. hopper:HMMA.16816.F32)");
  auto* alg =
      cmd.add_option("--algorithm", args.algorithm,
                     "sfma gps fda cofda gdfs fdrda cofdrda gfdrda cogfdrda tree ocfda, with the options below");
  ins->excludes(alg);
  cmd.add_option("--a-format", args.a_format, "Format of a");
  cmd.add_option("--b-format", args.b_format, "Format of b");
  cmd.add_option("--c-format", args.c_format, "Format of c");
  cmd.add_option("--d-format", args.d_format, "Format of d");
  for (const model::DotParameter& p : model::dot_parameters()) {
    const std::string option = model::spell(p.name, model::ParameterSpelling::option);
    const std::string doc(p.doc);
    CLI::Option* o =
        std::visit([&](auto field) { return cmd.add_option(option, args.*field, doc); }, arg_field(p.name));
    if (p.type == model::DotParameterType::list) o->delimiter(',');
  }
}

void add_model_dot_command(CLI::App& model, int& exit_code) {
  auto args = std::make_shared<DotArgs>();
  CLI::App* dot = model.add_subcommand(
      "dot", "MMA dot products d = c + sum a_k b_k, one per line of hex fields 'c a0..aK-1 b0..bK-1': d in hex");
  add_dot_unit_options(*dot, *args);
  dot->add_option("--threads", args->threads, "Worker threads (default: every core)");
  dot->add_flag("--list", args->list, "List the instructions and exit");
  dot->callback([args, &exit_code] {
    // Buffered standard streams: synchronised with stdio, every character read takes a lock once
    // the worker threads exist.
    std::ios_base::sync_with_stdio(false);
    if (const auto why = stdin_unreadable(); why && !args->list) {
      std::cerr << *why;
      exit_code = kExitBadInput;
      return;
    }
    exit_code = run_model_dot(*args, std::cin, std::cout, std::cerr);
  });
}

}  // namespace gp::cli
