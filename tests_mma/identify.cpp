#include "tests_mma/identify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "backends/reference/profile.hpp"
#include "model/mma_instructions.hpp"
#include "model/ops.hpp"
#include "tests_mma/questions.hpp"
#include "tests_mma/support.hpp"
#include "tests_mma/validate.hpp"

namespace gp::mma {

using backends::algorithm_name;
using backends::parameters_json;
using model::MmaNan;
using model::Rounding;

namespace {

using model::effective_block;
using model::unchained;

std::vector<int> blocks_of(int K) {
  std::vector<int> v;
  for (int b = 1; b < K; b *= 2) v.push_back(b);
  v.push_back(K);
  return v;
}

std::vector<int> range(int lo, int hi) {
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

// The exponent of a value's leading binade as the fused algorithms align it (subnormals: emin).
std::optional<int> align_exp(const Format& f, std::uint64_t bits) {
  const model::Unpacked u = model::unpack(f, bits);
  if (!model::is_finite_nonzero(u.cls)) return std::nullopt;
  return u.exp + f.man_bits;
}

// ---------------------------------------------------------------------------------------------
// The observations: inputs and the device's output.
struct Pool {
  std::size_t K = 0;
  std::vector<std::uint64_t> c, a, b, out;
  std::vector<char> safe;  // no alignment floor at or below emin(d) can matter
  std::size_t size() const { return c.size(); }
  std::span<const std::uint64_t> A(std::size_t i) const { return {&a[i * K], K}; }
  std::span<const std::uint64_t> B(std::size_t i) const { return {&b[i * K], K}; }
  DotCase at(std::size_t i) const {
    DotCase x;
    x.c = c[i];
    x.a.assign(A(i).begin(), A(i).end());
    x.b.assign(B(i).begin(), B(i).end());
    return x;
  }
};

bool floor_safe(const MmaConfig& cfg, const DotCase& x) {
  const int limit = cfg.d->emin();
  bool any = false;
  for (std::size_t k = 0; k < x.a.size(); ++k) {
    const auto ca = model::classify(*cfg.a, x.a[k]), cb = model::classify(*cfg.b, x.b[k]);
    if (!model::is_finite_nonzero(ca) && ca != model::Class::zero) return true;  // special: no floor involved
    if (!model::is_finite_nonzero(cb) && cb != model::Class::zero) return true;
    const auto ea = align_exp(*cfg.a, x.a[k]), eb = align_exp(*cfg.b, x.b[k]);
    if (!ea || !eb) continue;
    if (*ea + *eb < limit) return false;
    any = true;
  }
  const auto cc = model::classify(*cfg.c, x.c);
  if (!model::is_finite_nonzero(cc) && cc != model::Class::zero) return true;
  if (const auto ec = align_exp(*cfg.c, x.c)) {
    if (*ec < limit) return false;
    any = true;
  }
  return any;
}

void add_to(Pool& p, const MmaConfig& cfg, const DotCase& x, std::uint64_t out) {
  p.c.push_back(x.c);
  p.a.insert(p.a.end(), x.a.begin(), x.a.end());
  p.b.insert(p.b.end(), x.b.begin(), x.b.end());
  p.out.push_back(out);
  p.safe.push_back(floor_safe(cfg, x));
}

// Checks candidates against (part of) a pool; an observation that rejects a candidate moves to
// the front, so that the next ones meet the most selective observations first.
class Checker {
 public:
  Checker(const Pool& pool, bool safe_only, std::size_t from = 0) : pool_(pool) {
    for (std::size_t i = from; i < pool.size(); ++i)
      if (!safe_only || pool.safe[i]) order_.push_back(i);
  }
  bool fits(const DotConfig& cfg) {
    ++checked_;
    const model::Dot dot(cfg);
    for (std::size_t p = 0; p < order_.size(); ++p) {
      const std::size_t i = order_[p];
      if (!agrees(cfg, dot(pool_.c[i], pool_.A(i), pool_.B(i)), pool_.out[i])) {
        if (p > 0) std::rotate(order_.begin(), order_.begin() + std::ptrdiff_t(p), order_.begin() + std::ptrdiff_t(p) + 1);
        return false;
      }
    }
    return true;
  }
  std::uint64_t checked() const { return checked_; }

 private:
  const Pool& pool_;
  std::vector<std::size_t> order_;
  std::uint64_t checked_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The candidate space.
struct Space {
  bool sfma = true;
  std::vector<int> gps_groups, fda_F, fdrda_F, gdfs_F, blocks, gdfs_groups, out_bits;
  std::vector<Rounding> roundings;
  std::vector<MmaNan> nans;
  // Summation trees (beside the nine): shapes, each with every rounding above and every variant
  // of tree_variants.
  std::vector<model::SummationTree> shapes;
};

// ---------------------------------------------------------------------------------------------
// The summation-tree family: a shape with its sums' format and rounding, its products' rounding
// and its subnormal flushing.
enum Flush { flush_inputs = 1, flush_c = 2, flush_sums = 4 };

DotConfig tree_config(const MmaConfig& cfg, const model::SummationTree& shape, const Format* sums,
                      const Format* products, Rounding r, int flush) {
  auto t = std::make_shared<model::SummationTree>(shape);
  t->sum_format = sums == cfg.d ? nullptr : sums;
  t->sum_rounding = r;
  t->product_format = products;
  t->product_rounding = r;
  t->flush_inputs = flush & flush_inputs;
  t->flush_c = flush & flush_c;
  t->flush_sums = flush & flush_sums;
  DotConfig c = base_config(cfg, MmaAlgorithm::tree);
  c.tree = std::move(t);
  return c;
}

int flush_of(const model::SummationTree& t) {
  return (t.flush_inputs ? flush_inputs : 0) | (t.flush_c ? flush_c : 0) | (t.flush_sums ? flush_sums : 0);
}

// Sums in d's format or in binary32 (a narrow d computed wider); products exact, or rounded to the
// sums' format or to a's.
template <class Fn>
void tree_variants(const MmaConfig& cfg, const model::SummationTree& shape, const std::vector<Rounding>& roundings,
                   Fn&& fn) {
  std::vector<const Format*> sums{cfg.d};
  if (cfg.d != &model::binary32 && cfg.d->precision() < model::binary32.precision()) sums.push_back(&model::binary32);
  for (const Format* sf : sums) {
    std::vector<const Format*> products{nullptr, sf};
    if (cfg.a != sf && cfg.a == cfg.b && cfg.a->precision() <= 53) products.push_back(cfg.a);
    for (const Format* pf : products)
      for (Rounding r : roundings)
        for (int flush = 0; flush < 8; ++flush) fn(tree_config(cfg, shape, sf, pf, r, flush));
  }
}

// The shapes worth trying: the one the summation-tree probe measured, and the two chains (from
// the first product with c last, from c).
std::vector<model::SummationTree> tree_shapes(const MmaConfig& cfg, const std::string& measured) {
  std::vector<model::SummationTree> v;
  std::set<std::string> seen;
  const auto add = [&](model::SummationTree t) {
    if (seen.insert(t.text()).second) v.push_back(std::move(t));
  };
  if (!measured.empty())
    if (auto p = model::parse_summation_tree(measured, cfg.k); p.tree) add(std::move(*p.tree));
  if (cfg.k < 1 || cfg.k > model::kMaxDotK) return v;
  std::vector<int> order;
  for (int i = 0; i <= cfg.k; ++i) order.push_back(i);
  add(model::sequential_tree(cfg.k, order));
  std::rotate(order.rbegin(), order.rbegin() + 1, order.rend());
  add(model::sequential_tree(cfg.k, order));
  return v;
}

Space full_space(const MmaConfig& cfg, const std::string& measured_tree = "") {
  Space s;
  const int K = cfg.k;
  s.gps_groups = blocks_of(K);
  s.fda_F = range(0, model::kMaxF);
  s.fdrda_F = range(0, 31);
  s.gdfs_F = range(0, model::kMaxF);
  s.blocks = blocks_of(K);
  s.gdfs_groups = blocks_of(K);
  s.out_bits = range(0, cfg.d->man_bits);
  s.roundings.assign(std::begin(model::all_roundings), std::end(model::all_roundings));
  s.nans = {MmaNan::nvidia, MmaNan::format};
  s.shapes = tree_shapes(cfg, measured_tree);
  return s;
}

// The summation tree the tree-shape probe rebuilt from its counts ("" when it found none): trees
// cannot be enumerated, so the space holds that shape beside the plain chains.
std::string measured_tree(std::span<const audit::Finding> findings) {
  for (const audit::Finding& f : findings)
    if (f.probe == "mma.summation_tree" && f.status == audit::Status::ok) return f.parameters.value("tree", "");
  return "";
}

// Calls fn for every candidate of the space (alignment floor: none).
template <class Fn>
void for_each_candidate(const MmaConfig& cfg, const Space& s, Fn&& fn) {
  const int K = cfg.k;
  if (s.sfma) {
    const DotConfig c = base_config(cfg, MmaAlgorithm::sfma);
    if (model::check(c).empty()) fn(c);
  }
  for (int g : s.gps_groups) {
    DotConfig c = base_config(cfg, MmaAlgorithm::gps);
    c.group = g;
    if (model::check(c).empty()) fn(c);
  }
  const auto fused_family = [&](MmaAlgorithm alg, const std::vector<int>& Fs, const std::vector<int>& blocks,
                                const std::vector<int>& groups) {
    DotConfig c = base_config(cfg, alg);
    c.align_floor = model::kNoAlignFloor;
    for (int group : groups)
      for (int block : blocks)
        for (int F : Fs)
          for (Rounding r : s.roundings)
            for (int ob : s.out_bits)
              for (MmaNan nan : s.nans)
                for (bool rda : {true, false}) {
                  if (!rda && !model::is_fdrda_family(alg)) continue;
                  c.group = group;
                  c.block = block >= K ? K : block;
                  c.F = F;
                  c.out_rounding = r;
                  c.out_fraction_bits = ob;
                  c.nan = nan;
                  c.round_down_alignment = rda;
                  if (model::check(c).empty()) fn(c);
                }
  };
  fused_family(MmaAlgorithm::fda, s.fda_F, s.blocks, {0});
  fused_family(MmaAlgorithm::fdrda, s.fdrda_F, s.blocks, {0});
  fused_family(MmaAlgorithm::gfdrda, s.fdrda_F, s.blocks, {0});
  DotConfig probe = base_config(cfg, MmaAlgorithm::gdfs);
  if (model::check(probe).empty()) fused_family(MmaAlgorithm::gdfs, s.gdfs_F, {K}, s.gdfs_groups);
  for (const model::SummationTree& shape : s.shapes)
    tree_variants(cfg, shape, s.roundings, [&](const DotConfig& c) {
      if (model::check(c).empty()) fn(c);
    });
}

// Floors that can matter: above the lowest exponent a summand (or a partial result) can have,
// up to emin(d). Lower floors never bind: they are the same as none.
std::vector<int> floor_range(const MmaConfig& cfg) {
  return range(lowest_summand_exponent(cfg) + 1, cfg.d->emin());
}

// ---------------------------------------------------------------------------------------------
// Candidates equal in every parameter that can matter (block and group at most K).
std::array<int, 10> key_of(const DotConfig& c, int K) {
  if (c.algorithm == MmaAlgorithm::tree)
    return {int(c.algorithm), int(std::hash<std::string>{}(parameters_json(c, K).dump()) & 0x7FFFFFFF), 0, 0, 0, 0, 0, 0, 0, 0};
  const bool f = model::is_fused(c.algorithm);
  return {int(unchained(c.algorithm)),
          f ? c.F : 0,
          f ? effective_block(c, K) : 0,
          c.algorithm == MmaAlgorithm::gps || c.algorithm == MmaAlgorithm::gdfs ? std::min(c.group, K) : 0,
          f ? int(c.out_rounding) : 0,
          f ? c.out_fraction_bits : 0,
          f ? c.align_floor : 0,
          f ? int(c.nan) : 0,
          f && model::is_fdrda_family(c.algorithm) ? int(c.round_down_alignment) : 0,
          0};
}

// The candidates that differ from c in one parameter, over its whole range: the first pass
// searches the ranges the probes measured, and these complete the ambiguity it reports.
std::vector<DotConfig> neighbors(const MmaConfig& cfg, const DotConfig& c) {
  std::vector<DotConfig> v;
  const Space full = full_space(cfg);
  const auto vary = [&](auto&& set) {
    DotConfig x = c;
    set(x);
    if (model::check(x).empty()) v.push_back(x);
  };
  if (c.algorithm == MmaAlgorithm::gps)
    for (int g : full.gps_groups) vary([&](DotConfig& x) { x.group = g; });
  if (c.algorithm == MmaAlgorithm::tree) {
    tree_variants(cfg, *c.tree, full.roundings, [&](const DotConfig& x) {
      if (model::check(x).empty()) v.push_back(x);
    });
  }
  if (!model::is_fused(c.algorithm)) return v;
  for (int F : model::is_fdrda_family(c.algorithm) ? full.fdrda_F : full.fda_F) vary([&](DotConfig& x) { x.F = F; });
  for (int b : full.blocks) vary([&](DotConfig& x) { x.block = b; });
  if (c.algorithm == MmaAlgorithm::gdfs)
    for (int g : full.gdfs_groups) vary([&](DotConfig& x) { x.group = g; });
  for (Rounding r : full.roundings) vary([&](DotConfig& x) { x.out_rounding = r; });
  for (int ob : full.out_bits) vary([&](DotConfig& x) { x.out_fraction_bits = ob; });
  for (MmaNan n : full.nans) vary([&](DotConfig& x) { x.nan = n; });
  if (model::is_fdrda_family(c.algorithm)) vary([&](DotConfig& x) { x.round_down_alignment = !x.round_down_alignment; });
  vary([&](DotConfig& x) { x.align_floor = model::kNoAlignFloor; });
  for (int fl : floor_range(cfg)) vary([&](DotConfig& x) { x.align_floor = fl; });
  return v;
}

// ---------------------------------------------------------------------------------------------
// Preference among equivalent candidates: the smallest rank wins.
int family_rank(MmaAlgorithm a) {
  switch (unchained(a)) {
    case MmaAlgorithm::sfma: return 0;
    case MmaAlgorithm::gps: return 1;
    case MmaAlgorithm::fda: return 2;
    case MmaAlgorithm::fdrda: return 3;
    case MmaAlgorithm::gfdrda: return 4;
    case MmaAlgorithm::tree: return 6;
    default: return 5;
  }
}
int rounding_rank(Rounding r) {
  static constexpr Rounding order[] = {Rounding::rz,  Rounding::rne, Rounding::rd,  Rounding::ru,
                                       Rounding::ra,  Rounding::rna, Rounding::rnz, Rounding::rnu,
                                       Rounding::rnd, Rounding::rno, Rounding::ro};
  for (int i = 0; i < 11; ++i)
    if (order[i] == r) return i;
  return 11;
}

// The canonical choice among candidates no input separates: the plainest algorithm, one fused
// block, the smallest F (the claim "at least F bits"), rz then rne, d's own fraction bits, no
// floor (else the floor emin(d) - (F - 18) of the published models, else the lowest),
// NVIDIA's NaN when it matched bit for bit, rounding down in the FDRDA alignment.
std::vector<long> canonical_rank(const MmaConfig& cfg, const DotConfig& c) {
  const int K = cfg.k;
  // Trees: the chains first, no flushing, exact products, sums in d, to nearest (IEEE additions).
  if (c.algorithm == MmaAlgorithm::tree) {
    const model::SummationTree& t = *c.tree;
    const int r = t.sum_rounding == Rounding::rne ? -1 : rounding_rank(t.sum_rounding);
    return {family_rank(c.algorithm), t.sequential() ? 0 : 1, std::popcount(unsigned(flush_of(t))), flush_of(t),
            t.product_format ? 1 : 0, t.sum_format ? 1 : 0, r};
  }
  const bool f = model::is_fused(c.algorithm);
  const long floor_rank = c.align_floor == model::kNoAlignFloor                     ? 0
                          : c.align_floor == cfg.d->emin() - (c.F - 18)              ? 1
                                                                                     : 2 + (c.align_floor + 10000);
  return {family_rank(c.algorithm),
          K / effective_block(c, K),
          c.algorithm == MmaAlgorithm::gps ? -c.group : 0,
          c.algorithm == MmaAlgorithm::gdfs ? -c.group : 0,
          f ? c.F : 0,
          f ? rounding_rank(c.out_rounding) : 0,
          f ? cfg.d->man_bits - c.out_fraction_bits : 0,
          f ? floor_rank : 0,
          f ? int(c.nan) : 0,
          f && !c.round_down_alignment ? 1 : 0};
}

std::string describe(const MmaConfig& cfg, const DotConfig& c) {
  const int K = cfg.k;
  const int block = effective_block(c, K);
  const std::string alg = algorithm_name(c, K);
  std::string up = alg;
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char ch) { return char(std::toupper(ch)); });
  switch (unchained(c.algorithm)) {
    case MmaAlgorithm::sfma: return "SFMA (a chain of IEEE fused multiply-adds in " + std::string(cfg.d->name) + ")";
    case MmaAlgorithm::gps:
      return fmt::format("GPS (G = {}: binary32 products and pairwise sums, subnormals flushed)", c.group);
    case MmaAlgorithm::tree: {
      const model::SummationTree& t = *c.tree;
      std::vector<std::string> flushed;
      if (t.flush_inputs) flushed.push_back("a and b");
      if (t.flush_c) flushed.push_back("c");
      if (t.flush_sums) flushed.push_back("sums");
      return fmt::format("summation tree {} (sums in {} rounded {}, products {}, subnormals {})", t.text(),
                         (t.sum_format ? t.sum_format : cfg.d)->name, model::name(t.sum_rounding),
                         t.product_format ? fmt::format("rounded to {}", t.product_format->name) : "exact",
                         flushed.empty() ? "kept" : "flushed in " + join(flushed, ", ", " and "));
    }
    default: break;
  }
  std::string s = fmt::format("{} (F = {}, {}", up, c.F,
                              block == K ? fmt::format("one fused block of {} products", K)
                                         : fmt::format("fused blocks of {} products", block));
  if (c.algorithm == MmaAlgorithm::gdfs) s += fmt::format(", groups of {}", c.group);
  s += fmt::format(", output rounded {} at {} fraction bits", model::name(c.out_rounding), c.out_fraction_bits);
  if (c.align_floor != model::kNoAlignFloor) s += fmt::format(", alignment floor {}", c.align_floor);
  if (model::is_fdrda_family(c.algorithm)) s += c.round_down_alignment ? ", c and the dot product aligned rounding down" : ", aligned toward zero";
  s += c.nan == MmaNan::nvidia ? ", NVIDIA NaN" : ", quiet NaN";
  return s + ")";
}

// Summary of the values one parameter takes among equivalent candidates.
std::string span_of(std::vector<int> v, std::string_view none_name = "") {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    const auto name = [&](int x) { return x == model::kNoAlignFloor && !none_name.empty() ? std::string(none_name) : std::to_string(x); };
    parts.push_back(i == j ? name(v[i]) : name(v[i]) + ".." + name(v[j]));
    i = j + 1;
  }
  return join(parts, ", ", ", ");
}

}  // namespace

std::uint64_t validation_tiles(const audit::ProbeContext& ctx) {
  return ctx.validation_tiles ? ctx.validation_tiles : ctx.cases(10000, 100000, 1000000);
}

using audit::failed;
using audit::Finding;
using audit::Observation;
using audit::ProbeContext;
using audit::Tier;
using audit::unsupported;

namespace {

// Where the configuration runs an instruction of MMA-Sim's tables (a CUDA device, a reference
// device): the table's model against the device on random tiles (a tenth of the validation's), the
// first element it mispredicts kept as an observation; and the identified model, where there is one,
// against the table's on random inputs of every generator. Says so in the verdict, or in the message
// of a configuration no model explains.
Expected<bool> compare_with_table(backends::Device& device, const backends::MmaConfig& cfg, const ProbeContext& ctx,
                                  const DotConfig* chosen, Finding& f) {
  const model::MmaInstruction* table = model::find_mma_instruction(cfg.instruction);
  if (!table || table->config.a != cfg.a || table->config.b != cfg.b || table->config.d != cfg.d || table->k != cfg.k)
    return true;
  const int K = cfg.k;
  nlohmann::json t = {{"instruction", table->id()}};
  int drawn = 0, differ = 0;
  if (chosen) {
    const model::Dot ours(*chosen), theirs(table->config);
    RandomInputs gen(cfg, ctx.seed ^ 0x7AB1E3ULL);
    DotCase x;
    x.a.resize(std::size_t(K));
    x.b.resize(std::size_t(K));
    for (Gen g : all_gens)
      for (int i = 0; i < 1000; ++i, ++drawn) {
        gen.draw(g, x.c, x.a.data(), x.b.data());
        const std::uint64_t p = predict(ours, x), q = predict(theirs, x);
        differ += !agrees(*chosen, p, q) && !agrees(table->config, q, p);
      }
    t["inputs"] = drawn;
    t["differences"] = differ;
  }
  auto v = validate(device, cfg, table->config, std::max<std::uint64_t>(100, validation_tiles(ctx) / 10),
                    ctx.seed ^ 0x7AB1E7ULL, 1);
  if (!v) return v.error();
  t["tiles"] = v->tiles;
  t["elements"] = v->elements;
  t["mismatches"] = v->mismatches;
  t["mismatched_tiles"] = v->mismatched_tiles;
  std::string first;
  if (!v->examples.empty()) {
    Observation o = std::move(v->examples.front());
    o.note = fmt::format("the first element MMA-Sim's {} mispredicts ({})", table->id(),
                         o.note.substr(o.note.find(':') == std::string::npos ? 0 : o.note.find(':') + 2));
    for (auto& [label, value] : o.predictions) label = table->id();
    first = fmt::format("{}: the device gives {:#x}, the table {:#x}", o.note, o.output, o.predictions.front().second);
    t["first_difference"] = first;
    f.observations.insert(f.observations.begin(), std::move(o));
  }
  f.parameters["table"] = t;
  const std::string on_device =
      v->mismatches == 0
          ? fmt::format("its model predicts all {} elements of {} random tiles", v->elements, v->tiles)
          : fmt::format("its model mispredicts {} of {} elements ({} of {} random tiles); {}", v->mismatches,
                        v->elements, v->mismatched_tiles, v->tiles, first);
  if (!chosen) {
    f.message += fmt::format("{}MMA-Sim's {}: {}", f.message.empty() ? "" : "; ", table->id(), on_device);
  } else if (differ == 0 && v->mismatches == 0) {
    f.verdict += fmt::format("; the same arithmetic as MMA-Sim's {}", table->id());
  } else {
    f.verdict += fmt::format("; differs from MMA-Sim's {}: on {} of {} random inputs of the two models, and on the device {}",
                             table->id(), differ, drawn, on_device);
  }
  return true;
}

// `per_gen` dot products of K products from every generator in turn, noted "<what> (<generator>)".
std::vector<DotCase> draw_inputs(RandomInputs& gen, int K, int per_gen, std::string_view what) {
  std::vector<DotCase> inputs;
  for (Gen g : all_gens)
    for (int i = 0; i < per_gen; ++i) {
      DotCase x;
      x.a.resize(std::size_t(K));
      x.b.resize(std::size_t(K));
      gen.draw(g, x.c, x.a.data(), x.b.data());
      x.note = fmt::format("{} ({})", what, name(g));
      inputs.push_back(std::move(x));
    }
  return inputs;
}

// The identification's candidate search (see identify.hpp): the model's candidates that reproduce
// every observation of the pool, and the inputs drawn to separate them, run on the device.
struct Search {
  backends::Device& device;
  const MmaConfig& cfg;
  const ProbeContext& ctx;
  Finding& f;  // the identification's finding: inputs run on the device become its observations
  const int K;
  Pool pool = {};
  std::uint64_t checked = 0;               // candidates evaluated
  std::size_t rounds = 0, run_inputs = 0;  // separation rounds, inputs run on the device
  std::vector<DotConfig> closest = {};     // the last candidates standing when the device ruled all out

  bool rank_less(const DotConfig& x, const DotConfig& y) const { return canonical_rank(cfg, x) < canonical_rank(cfg, y); }
  auto by_rank() const {
    return [this](const DotConfig& x, const DotConfig& y) { return rank_less(x, y); };
  }

  // Passes 1 and 2: the candidates of a space that predict every observation.
  std::vector<DotConfig> survivors_of(const Space& space) {
    Checker safe(pool, true);
    std::vector<DotConfig> first;
    for_each_candidate(cfg, space, [&](const DotConfig& c) {
      if (safe.fits(c)) first.push_back(c);
    });
    checked += safe.checked();
    Checker all(pool, false);
    std::vector<DotConfig> out;
    const std::vector<int> floors = floor_range(cfg);
    for (const DotConfig& c : first) {
      if (all.fits(c)) out.push_back(c);
      if (!model::is_fused(c.algorithm)) continue;
      DotConfig x = c;
      for (int fl : floors) {
        x.align_floor = fl;
        if (all.fits(x)) out.push_back(x);
      }
    }
    checked += all.checked();
    return out;
  }

  // The candidates that fit the observations added to the pool from index `from` on.
  std::vector<DotConfig> fitting(const std::vector<DotConfig>& s, std::size_t from) {
    Checker fresh(pool, false, from);
    std::vector<DotConfig> kept;
    for (const DotConfig& c : s)
      if (fresh.fits(c)) kept.push_back(c);
    return kept;
  }

  // Inputs drawn to separate the candidates; those where they disagree go to the device.
  Expected<bool> separate(std::vector<DotConfig>& s) {
    int quiet = 0;  // rounds in a row whose inputs found one behaviour only
    for (int round = 0; round < 12 && s.size() > 1 && quiet < 2; ++round) {
      ++rounds;
      RandomInputs gen(cfg, ctx.seed * 7919 + std::uint64_t(round) * 104729 + pool.size());
      const std::vector<DotCase> inputs = draw_inputs(gen, K, 80, "separating input");
      // Behaviour classes: the candidates' predictions on these inputs.
      std::vector<std::vector<std::uint64_t>> pred(s.size());
      std::map<std::vector<std::uint64_t>, std::size_t> classes;
      std::vector<std::size_t> rep;
      for (std::size_t i = 0; i < s.size(); ++i) {
        const model::Dot dot(s[i]);
        for (const DotCase& x : inputs) pred[i].push_back(predict(dot, x));
        if (classes.emplace(pred[i], rep.size()).second) rep.push_back(i);
      }
      if (rep.size() <= 1) {
        ++quiet;
        continue;
      }
      quiet = 0;
      // For each class, an input where it differs from the first class; then the inputs that
      // split the most classes.
      std::set<std::size_t> chosen;
      for (std::size_t r = 1; r < rep.size() && chosen.size() < 256; ++r)
        for (std::size_t n = 0; n < inputs.size(); ++n)
          if (pred[rep[r]][n] != pred[rep[0]][n]) {
            chosen.insert(n);
            break;
          }
      for (std::size_t n = 0; n < inputs.size() && chosen.size() < 64; ++n) {
        std::set<std::uint64_t> values;
        for (std::size_t r : rep) values.insert(pred[r][n]);
        if (values.size() > 1) chosen.insert(n);
      }
      std::vector<DotCase> cases;
      for (std::size_t n : chosen) cases.push_back(inputs[n]);
      auto out = mma::run(device, cfg, cases);
      if (!out) return out.error();
      run_inputs += cases.size();
      const std::size_t from = pool.size();
      for (std::size_t i = 0; i < cases.size(); ++i) {
        add_to(pool, cfg, cases[i], (*out)[i]);
        std::vector<std::pair<std::string, std::uint64_t>> p;
        for (std::size_t r = 0; r < rep.size() && r < 6; ++r) {
          const std::size_t n = *std::next(chosen.begin(), std::ptrdiff_t(i));
          p.emplace_back(algorithm_name(s[rep[r]], K) + " " + parameters_json(s[rep[r]], K).dump(), pred[rep[r]][n]);
        }
        if (f.observations.size() < 200) f.observations.push_back(observation(cfg, cases[i], (*out)[i], std::move(p)));
      }
      std::vector<DotConfig> kept = fitting(s, from);
      if (kept.empty()) {
        closest = s;
        s.clear();
        break;
      }
      const bool progress = kept.size() < s.size();
      s = std::move(kept);
      if (!progress) ++quiet;
    }
    return true;
  }

  // Completes the candidates with their neighbours along every parameter (two steps).
  void expand(std::vector<DotConfig>& s) {
    std::set<std::array<int, 10>> seen;
    for (const DotConfig& c : s) seen.insert(key_of(c, K));
    Checker all(pool, false);
    std::vector<DotConfig> frontier = s;
    for (int step = 0; step < 2 && !frontier.empty(); ++step) {
      std::sort(frontier.begin(), frontier.end(), by_rank());
      if (frontier.size() > 24) frontier.resize(24);
      std::vector<DotConfig> next;
      for (const DotConfig& c : frontier)
        for (const DotConfig& n : neighbors(cfg, c))
          if (seen.insert(key_of(n, K)).second && all.fits(n)) next.push_back(n);
      s.insert(s.end(), next.begin(), next.end());
      frontier = std::move(next);
    }
    checked += all.checked();
  }

  // The chosen candidate against the others: many random inputs (every generator), and those where
  // they disagree are run on the device, until none is found. Differences between close
  // candidates can be rare (a rounding mode seen only through carries, a floor only through the
  // sign of a tiny zero): the separation's samples are small, this one is not.
  Expected<bool> challenge(std::vector<DotConfig>& s) {
    // Generators weighted toward the structured ones; two empty rounds in a row end it.
    static constexpr Gen weighted[] = {Gen::cancel, Gen::cancel, Gen::cancel, Gen::cancel, Gen::tie,
                                       Gen::tie,    Gen::tiny,   Gen::tiny,   Gen::carry,  Gen::carry,
                                       Gen::normal, Gen::bits,   Gen::wide,   Gen::special, Gen::overflow};
    int empty = 0;
    for (int round = 0; round < 10 && s.size() > 1 && empty < 2; ++round) {
      std::sort(s.begin(), s.end(), by_rank());
      const std::size_t m = std::min<std::size_t>(s.size(), 16);
      std::vector<model::Dot> dots;
      for (std::size_t i = 0; i < m; ++i) dots.emplace_back(s[i]);
      RandomInputs gen(cfg, ctx.seed * 31337 + std::uint64_t(round) * 7 + pool.size());
      std::vector<DotCase> found;
      DotCase x;
      x.a.resize(std::size_t(K));
      x.b.resize(std::size_t(K));
      for (int n = 0; n < 16000 && found.size() < 128; ++n) {
        const Gen g = weighted[std::size_t(n) % std::size(weighted)];
        gen.draw(g, x.c, x.a.data(), x.b.data());
        const std::uint64_t p0 = predict(dots[0], x);
        for (std::size_t i = 1; i < m; ++i) {
          const std::uint64_t pi = predict(dots[i], x);
          if (agrees(s[0], p0, pi) || agrees(s[i], pi, p0)) continue;
          x.note = fmt::format("challenging input ({})", name(g));
          found.push_back(x);
          break;
        }
      }
      ++rounds;
      if (found.empty()) {
        ++empty;
        continue;
      }
      empty = 0;
      auto out = mma::run(device, cfg, found);
      if (!out) return out.error();
      run_inputs += found.size();
      const std::size_t from = pool.size();
      for (std::size_t i = 0; i < found.size(); ++i) {
        add_to(pool, cfg, found[i], (*out)[i]);
        if (f.observations.size() < 200)
          f.observations.push_back(observation(cfg, found[i], (*out)[i],
                                               {{algorithm_name(s[0], K) + " " + parameters_json(s[0], K).dump(),
                                                 predict(dots[0], found[i])}}));
      }
      std::vector<DotConfig> kept = fitting(s, from);
      if (kept.empty()) {
        closest = s;
        s.clear();
        break;
      }
      s = std::move(kept);
    }
    return true;
  }

  // Mismatches of random tiles join the observations: the candidates they refute go, and the
  // search resumes with the candidates left.
  Expected<bool> resume(std::vector<DotConfig>& s, const std::vector<Observation>& examples) {
    const std::size_t from = pool.size();
    for (const Observation& o : examples)
      if (const auto c = case_of(cfg, o)) add_to(pool, cfg, *c, o.output);
    s = fitting(s, from);
    if (auto sep = separate(s); !sep) return sep.error();
    return challenge(s);
  }
};

}  // namespace

Finding identify_mma(backends::Device& device, const backends::MmaConfig& cfg, std::span<Finding> findings,
                     const ProbeContext& ctx, nlohmann::json& profile_entry) {
  if (!usable(cfg)) return unsupported("the configuration's formats are not floating-point formats the model knows");
  Finding f;
  f.title = "Identification of the algorithm and its parameters, random validation";
  f.source = "MMA-Sim (Xie et al. 2025), sections III, IV and V";
  const int K = cfg.k;
  Search search{device, cfg, ctx, f, K};
  Pool& pool = search.pool;
  pool.K = std::size_t(K);
  for (const Finding& x : findings)
    for (const Observation& o : x.observations)
      if (const auto c = case_of(cfg, o)) add_to(pool, cfg, *c, o.output);
  const std::size_t probe_observations = pool.size();
  // Random inputs of every generator join the probes' cases: the search never starts blind (a
  // run of `--probe mma.identify` alone has no probe observations at all).
  {
    RandomInputs gen(cfg, ctx.seed ^ 0x1DE7u);
    const std::vector<DotCase> seeds = draw_inputs(gen, K, 48, "random input");
    auto out = mma::run(device, cfg, seeds);
    if (!out) return failed(out.error().message);
    for (std::size_t i = 0; i < seeds.size(); ++i) add_to(pool, cfg, seeds[i], (*out)[i]);
  }
  const std::string tree = measured_tree(findings);
  // Every candidate of the model: a verdict is a claim about all of them, so the search never
  // narrows the space to the ranges the probes measured (the probes' cases are observations).
  std::vector<DotConfig> survivors = search.survivors_of(full_space(cfg, tree));
  search.expand(survivors);
  if (auto sep = search.separate(survivors); !sep) return failed(sep.error().message);
  if (auto ch = search.challenge(survivors); !ch) return failed(ch.error().message);
  // A first look at random tiles: a choice that fails there is not the unit; its mismatches join
  // the observations, and the search goes on.
  for (int attempt = 0; attempt < 4 && !survivors.empty(); ++attempt) {
    std::sort(survivors.begin(), survivors.end(), search.by_rank());
    auto look = validate(device, cfg, survivors.front(), 64u << (2 * attempt), ctx.seed ^ (0x5EED + std::uint64_t(attempt)), 32);
    if (!look) return failed(look.error().message);
    if (!look->mismatches) break;
    if (auto r = search.resume(survivors, look->examples); !r) return failed(r.error().message);
  }
  // Validation on random tiles. A mismatch is an observation like the others: the search resumes
  // with it, twice at most.
  std::optional<Validation> val;
  const std::uint64_t tiles = validation_tiles(ctx);
  for (int attempt = 0; !survivors.empty(); ++attempt) {
    // Where a model reproduces the outputs bit for bit (NaN payloads included), models that only
    // match them up to the NaN encoding are dropped.
    if (survivors.size() > 1) {
      std::vector<DotConfig> exact;
      for (const DotConfig& c : survivors) {
        const model::Dot dot(c);
        bool all = true;
        for (std::size_t i = 0; i < pool.size() && all; ++i) all = dot(pool.c[i], pool.A(i), pool.B(i)) == pool.out[i];
        if (all) exact.push_back(c);
      }
      if (!exact.empty() && exact.size() < survivors.size()) survivors = std::move(exact);
    }
    std::sort(survivors.begin(), survivors.end(), search.by_rank());
    auto run_v = validate(device, cfg, survivors.front(), tiles, (ctx.seed ^ 0x7A11DA7EULL) + std::uint64_t(attempt), 16);
    if (!run_v) return failed(run_v.error().message);
    val = std::move(*run_v);
    if (!val->mismatches || attempt == 2) break;
    if (auto r = search.resume(survivors, val->examples); !r) return failed(r.error().message);
  }
  f.parameters["observations"] = {{"probes", probe_observations}, {"random", 48 * std::size(all_gens)}, {"separating_inputs", search.run_inputs},
                                  {"separation_rounds", search.rounds}};
  f.parameters["candidates_checked"] = search.checked;
  // Every probe's verdict follows from the candidates left (tests_mma/questions.hpp).
  std::vector<DotConfig>& closest = search.closest;
  judge_findings(cfg, survivors, closest, findings);
  if (survivors.empty()) {
    f.verdict = fmt::format("MODEL: none of the nine algorithms, nor a summation tree, predicts every observation ({} checked)",
                            search.checked);
    if (!closest.empty()) {
      std::sort(closest.begin(), closest.end(), search.by_rank());
      f.message = "the last candidates standing before the device ruled them out: " + describe(cfg, closest.front());
    }
    if (auto t = compare_with_table(device, cfg, ctx, nullptr, f); !t) return failed(t.error().message);
    return f;
  }
  std::sort(survivors.begin(), survivors.end(), search.by_rank());
  const DotConfig chosen = survivors.front();
  // Ambiguity: what the equivalent candidates leave open.
  {
    std::set<std::string> algs;
    std::vector<int> Fs, blocks, floors, bits, groups;
    std::set<std::string> rounds_seen, nans, rdas;
    std::map<std::string, std::set<std::string>> tree_params;  // "tree", "sums", "products", "flush"
    for (const DotConfig& c : survivors) {
      algs.insert(algorithm_name(c, K));
      if (c.algorithm == MmaAlgorithm::tree) {
        const nlohmann::json p = parameters_json(c, K);
        rounds_seen.insert(p["rounding"].get<std::string>());
        for (const char* key : {"tree", "sums", "products", "flush"})
          tree_params[key].insert(p[key].is_string() ? p[key].get<std::string>() : p[key].dump());
      }
      if (model::is_fused(c.algorithm)) {
        Fs.push_back(c.F);
        blocks.push_back(effective_block(c, K));
        floors.push_back(c.align_floor);
        bits.push_back(c.out_fraction_bits);
        rounds_seen.insert(std::string(model::name(c.out_rounding)));
        nans.insert(c.nan == MmaNan::nvidia ? "nvidia" : "format");
        if (model::is_fdrda_family(c.algorithm)) rdas.insert(c.round_down_alignment ? "true" : "false");
        if (c.algorithm == MmaAlgorithm::gdfs) groups.push_back(std::min(c.group, K));
      } else if (c.algorithm == MmaAlgorithm::gps) {
        groups.push_back(std::min(c.group, K));
      }
    }
    nlohmann::json amb = nlohmann::json::object();
    const auto note = [&](const char* key, const std::vector<int>& v, std::string_view none = "") {
      std::vector<int> u = v;
      std::sort(u.begin(), u.end());
      u.erase(std::unique(u.begin(), u.end()), u.end());
      if (u.size() > 1) amb[key] = span_of(u, none);
    };
    if (algs.size() > 1) amb["algorithm"] = join({algs.begin(), algs.end()}, ", ", ", ");
    note("F", Fs);
    note("block", blocks);
    note("align_floor", floors, "none");
    note("out_fraction_bits", bits);
    note("group", groups);
    if (rounds_seen.size() > 1) amb["out_rounding"] = join({rounds_seen.begin(), rounds_seen.end()}, ", ", ", ");
    if (nans.size() > 1) amb["nan"] = join({nans.begin(), nans.end()}, ", ", ", ");
    if (rdas.size() > 1) amb["round_down_alignment"] = "true, false";
    for (const auto& [key, values] : tree_params)
      if (values.size() > 1) amb[key] = join({values.begin(), values.end()}, "; ", "; ");
    f.parameters["consistent_candidates"] = survivors.size();
    f.parameters["ambiguous"] = amb;
    if (!amb.empty()) {
      std::vector<std::string> parts;
      for (const auto& [k, v] : amb.items()) parts.push_back(k + " " + v.get<std::string>());
      f.message = "no input separates these, all predict every observation: " + join(parts, "; ", "; ") +
                  " (canonical choice reported)";
    }
  }
  f.parameters["algorithm"] = algorithm_name(chosen, K);
  f.parameters["parameters"] = parameters_json(chosen, K);
  for (Observation& o : val->examples) f.observations.push_back(std::move(o));
  f.parameters["validation"] = {{"tiles", val->tiles},           {"elements", val->elements},
                                {"mismatches", val->mismatches}, {"mismatched_tiles", val->mismatched_tiles},
                                {"seconds", val->seconds}};
  DotConfig named = chosen;
  if (const auto a = model::find_mma_algorithm(algorithm_name(chosen, K))) named.algorithm = *a;
  profile_entry = {{"config", cfg.name()},
                   {"algorithm", algorithm_name(chosen, K)},
                   {"parameters", parameters_json(chosen, K)},
                   {"validation", {{"tiles", val->tiles}, {"mismatches", val->mismatches}, {"elements", val->elements}}}};
  if (!cfg.instruction.empty()) profile_entry["instruction"] = cfg.instruction;
  f.verdict = fmt::format("MODEL: {} predicts all {} observations{}; {} random tiles, {} mismatches", describe(cfg, named),
                          pool.size(), survivors.size() > 1 ? fmt::format(" ({} equivalent candidates)", survivors.size()) : "",
                          val->tiles, val->mismatches);
  if (auto t = compare_with_table(device, cfg, ctx, &chosen, f); !t) return failed(t.error().message);
  return f;
}

}  // namespace gp::mma
