#include "tests_mma/identify/candidates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <map>
#include <optional>
#include <functional>
#include <set>
#include <thread>
#include <unordered_map>

#include "backends/reference/profile.hpp"
#include "model/dot_parameters.hpp"
#include "model/ops.hpp"
#include "tests_mma/tree_shape.hpp"

namespace gp::mma {

using backends::algorithm_name;
using backends::parameters_json;
using model::effective_block;
using model::MmaNan;
using model::Rounding;
using model::unchained;

namespace {

// Workers wanted, 0 meaning one per core.
std::size_t worker_count(unsigned wanted) {
  return wanted ? wanted : std::max(1u, std::thread::hardware_concurrency());
}

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

// The fewest carry-out bits that can never wrap a sum of `block` products and c (1 + block
// summands, each below 2^(E+1)): every count from there on keeps every carry, the same as 0.
int carry_limit(int block) { return int(std::bit_width(unsigned(std::max(block, 1)))); }

// The exponent of a value's leading binade as the fused algorithms align it (subnormals: emin).
std::optional<int> align_exp(const Format& f, std::uint64_t bits) {
  const model::Unpacked u = model::unpack(f, bits);
  if (!model::is_finite_nonzero(u.cls)) return std::nullopt;
  return u.exp + f.man_bits;
}

}  // namespace

DotCase Pool::at(std::size_t i) const {
  DotCase x;
  x.c = c[i];
  x.a.assign(A(i).begin(), A(i).end());
  x.b.assign(B(i).begin(), B(i).end());
  x.sa.assign(SA(i).begin(), SA(i).end());
  x.sb.assign(SB(i).begin(), SB(i).end());
  return x;
}

Pool make_pool(const MmaConfig& cfg, const Format* scale, int scale_block) {
  Pool p;
  p.K = std::size_t(cfg.k);
  p.scale = scale;
  p.scale_block = scale_block;
  p.S = scale ? std::size_t((cfg.k + scale_block - 1) / scale_block) : 0;
  return p;
}

namespace {

// Whether no alignment floor at or below emin(d) can change the output: every nonzero summand
// (a scaled product, c) lies at or above emin(d), or a special operand decides it.
bool floor_safe(const MmaConfig& cfg, const Pool& p, const DotCase& x) {
  const int limit = cfg.d->emin();
  bool any = false;
  // A scale factor moves a block's products by its exponent (2^(e - bias) for ue8m0).
  // nullopt: a NaN scale (the output is NaN); INT_MIN / 2: a zero scale (the product is zero).
  const auto scale_exp = [&](const std::vector<std::uint64_t>& s, std::size_t k) -> std::optional<int> {
    if (!p.scale || s.empty()) return 0;
    const std::uint64_t bits = s[k / std::size_t(p.scale_block)];
    if (model::is_nan(model::classify(*p.scale, bits))) return std::nullopt;
    return align_exp(*p.scale, bits).value_or(INT_MIN / 2);
  };
  for (std::size_t k = 0; k < x.a.size(); ++k) {
    const auto ca = model::classify(*cfg.a, x.a[k]), cb = model::classify(*cfg.b, x.b[k]);
    if (!model::is_finite_nonzero(ca) && ca != model::Class::zero) return true;  // special: no floor involved
    if (!model::is_finite_nonzero(cb) && cb != model::Class::zero) return true;
    const auto ea = align_exp(*cfg.a, x.a[k]), eb = align_exp(*cfg.b, x.b[k]);
    if (!ea || !eb) continue;
    const auto sa = scale_exp(x.sa, k), sb = scale_exp(x.sb, k);
    if (!sa || !sb) return true;
    if (*sa == INT_MIN / 2 || *sb == INT_MIN / 2) continue;
    if (*ea + *eb + *sa + *sb < limit) return false;
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

}  // namespace

void add_to(Pool& p, const MmaConfig& cfg, const DotCase& x, std::uint64_t out) {
  p.c.push_back(x.c);
  p.a.insert(p.a.end(), x.a.begin(), x.a.end());
  p.b.insert(p.b.end(), x.b.begin(), x.b.end());
  // A case without scale factors (a probe's, a random draw) takes unit scales.
  const std::uint64_t one = p.scale ? encode(*p.scale, pow2(0)).value_or(0) : 0;
  for (std::size_t s = 0; s < p.S; ++s) {
    p.sa.push_back(s < x.sa.size() ? x.sa[s] : one);
    p.sb.push_back(s < x.sb.size() ? x.sb[s] : one);
  }
  p.out.push_back(out);
  p.safe.push_back(floor_safe(cfg, p, x));
}

Checker::Checker(const Pool& pool, bool safe_only, std::size_t from) : pool_(pool) {
  for (std::size_t i = from; i < pool.size(); ++i)
    if (!safe_only || pool.safe[i]) order_.push_back(i);
}

bool Checker::fits(const DotConfig& cfg) {
  ++checked_;
  const model::Dot dot(cfg);
  for (std::size_t p = 0; p < order_.size(); ++p) {
    const std::size_t i = order_[p];
    if (!agrees(cfg, pool_.predict(dot, i), pool_.out[i])) {
      if (p > 0)
        std::rotate(order_.begin(), order_.begin() + std::ptrdiff_t(p), order_.begin() + std::ptrdiff_t(p) + 1);
      return false;
    }
  }
  return true;
}

Checker::Misses Checker::misses(const DotConfig& cfg, std::size_t limit) {
  ++checked_;
  const model::Dot dot(cfg);
  Misses m;
  for (std::size_t p = 0; p < order_.size(); ++p) {
    const std::size_t i = order_[p];
    if (agrees(cfg, pool_.predict(dot, i), pool_.out[i])) continue;
    m.first = std::min(m.first, i);
    // As in fits(): the observations that miss come first for the next candidates.
    std::rotate(order_.begin() + std::ptrdiff_t(m.count), order_.begin() + std::ptrdiff_t(p),
                order_.begin() + std::ptrdiff_t(p) + 1);
    if (++m.count > limit) break;
  }
  return m;
}

namespace {

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

// Sums in d's format, c's, binary32, binary16, bfloat16 or tf32 (a unit computing wider or narrower
// than it stores); products exact, or rounded to the sums' format or to a's.
template <class Fn>
void tree_variants(const MmaConfig& cfg, const model::SummationTree& shape, const std::vector<Rounding>& roundings,
                   Fn&& fn) {
  std::vector<const Format*> sums;
  for (const Format* f : {cfg.d, cfg.c, &model::binary32, &model::binary16, &model::bfloat16, &model::tf32})
    if (std::find(sums.begin(), sums.end(), f) == sums.end()) sums.push_back(f);
  for (const Format* sf : sums) {
    std::vector<const Format*> products{nullptr, sf};
    if (cfg.a != sf && cfg.a == cfg.b && cfg.a->precision() <= 53) products.push_back(cfg.a);
    for (const Format* pf : products)
      for (Rounding r : roundings)
        for (int flush = 0; flush < 8; ++flush) fn(tree_config(cfg, shape, sf, pf, r, flush));
  }
}

// Products lo..hi-1 summed pairwise, halves first, onto the steps of t.
void pairwise(model::SummationTree& t, int lo, int hi) {
  if (hi - lo == 1) {
    t.steps.push_back({lo, 0, nullptr, std::nullopt});
    return;
  }
  const int mid = lo + (hi - lo + 1) / 2;
  pairwise(t, lo, mid);
  pairwise(t, mid, hi);
  t.steps.push_back({-1, 2, nullptr, std::nullopt});
}

// Blocks of `block` products summed pairwise, the blocks added in order to a running sum that
// starts from c (c_first) or from the first block, c added last.
model::SummationTree blocked_tree(int K, int block, bool c_first) {
  model::SummationTree t;
  t.k = K;
  const auto join = [&] { t.steps.push_back({-1, 2, nullptr, std::nullopt}); };
  if (c_first) t.steps.push_back({K, 0, nullptr, std::nullopt});
  for (int lo = 0; lo < K; lo += block) {
    pairwise(t, lo, std::min(K, lo + block));
    if (c_first || lo > 0) join();
  }
  if (!c_first) {
    t.steps.push_back({K, 0, nullptr, std::nullopt});
    join();
  }
  return t;
}

// Groups of `group` products, each summed exactly with the running sum (c for the first) and
// rounded once: "(p0+p1+p2+p3+c)+p4+p5+p6+p7" (CDNA1's fp16 MFMA).
model::SummationTree fused_groups_tree(int K, int group) {
  model::SummationTree t;
  t.k = K;
  for (int lo = 0; lo < K; lo += group) {
    const int hi = std::min(K, lo + group);
    for (int j = lo; j < hi; ++j) t.steps.push_back({j, 0, nullptr, std::nullopt});
    if (lo == 0) t.steps.push_back({K, 0, nullptr, std::nullopt});
    t.steps.push_back({-1, hi - lo + 1, nullptr, std::nullopt});
  }
  return t;
}

// The shapes worth trying: the one the summation-tree probe measured, the two chains (from the
// first product with c last, from c), the blocked pairwise trees and the chains of fused groups;
// each once (trees with the same nodes are one tree).
std::vector<model::SummationTree> tree_shapes(const MmaConfig& cfg, const std::string& measured) {
  std::vector<model::SummationTree> v;
  std::set<std::set<std::set<int>>> seen;
  const auto add = [&](model::SummationTree t) {
    if (seen.insert(tree_nodes(t)).second) v.push_back(std::move(t));
  };
  if (!measured.empty())
    if (auto p = model::parse_summation_tree(measured, cfg.k); p.tree) add(std::move(*p.tree));
  if (cfg.k < 1 || cfg.k > model::kMaxDotK) return v;
  std::vector<int> order;
  for (int i = 0; i <= cfg.k; ++i) order.push_back(i);
  add(model::sequential_tree(cfg.k, order));
  std::rotate(order.rbegin(), order.rbegin() + 1, order.rend());
  add(model::sequential_tree(cfg.k, order));
  for (int block : blocks_of(cfg.k)) {
    for (bool c_first : {true, false}) add(blocked_tree(cfg.k, block, c_first));
    add(fused_groups_tree(cfg.k, block));
  }
  return v;
}

}  // namespace

Space full_space(const MmaConfig& cfg, const std::string& measured_tree) {
  Space s;
  const int K = cfg.k;
  // F and the output's fraction bits over the model's whole ranges (model/dot_parameters.hpp).
  const model::DotParameter& F = *model::find_dot_parameter("F");
  s.gps_groups = blocks_of(K);
  s.fda_F = range(F.min, F.max_for(MmaAlgorithm::fda));
  s.fdrda_F = range(F.min, F.max_for(MmaAlgorithm::fdrda));
  s.gdfs_F = range(F.min, F.max_for(MmaAlgorithm::gdfs));
  s.blocks = blocks_of(K);
  s.gdfs_groups = blocks_of(K);
  s.out_bits = range(model::find_dot_parameter("out_fraction_bits")->min, cfg.d->man_bits);
  s.roundings.assign(std::begin(model::all_roundings), std::end(model::all_roundings));
  s.nans = {MmaNan::nvidia, MmaNan::format};
  s.shapes = tree_shapes(cfg, measured_tree);
  s.ocfda_F = range(16, 32);  // around the 24 of RDNA 3.5 (model/mma_instructions.cpp)
  return s;
}

void for_each_candidate(const MmaConfig& cfg, const Space& s, const std::function<void(const DotConfig&)>& fn) {
  const int K = cfg.k;
  const auto base = [&](MmaAlgorithm alg) {
    DotConfig c = base_config(cfg, alg);
    c.scale = s.scale;
    c.scale_block = s.scale_block;
    return c;
  };
  if (s.sfma) {
    const DotConfig c = base(MmaAlgorithm::sfma);
    if (model::check(c).empty()) fn(c);
  }
  for (int g : s.gps_groups) {
    DotConfig c = base(MmaAlgorithm::gps);
    c.group = g;
    if (model::check(c).empty()) fn(c);
  }
  const auto fused_family = [&](MmaAlgorithm alg, const std::vector<int>& Fs, const std::vector<int>& blocks,
                                const std::vector<int>& groups) {
    DotConfig c = base(alg);
    c.align_floor = model::kNoAlignFloor;
    const std::vector<int> no_carry = {0};
    const std::vector<int>& carries = unchained(alg) == MmaAlgorithm::fda ? s.carries : no_carry;
    for (int group : groups)
      for (int block : blocks)
        for (int carry : carries) {
          if (carry >= carry_limit(std::min(block, K))) continue;  // cannot wrap: the same as 0
          for (int F : Fs)
            for (Rounding r : s.roundings)
              for (int ob : s.out_bits)
                for (MmaNan nan : s.nans)
                  for (bool rda : {true, false}) {
                    if (!rda && !model::is_fdrda_family(alg)) continue;
                    c.group = group;
                    c.block = block >= K ? K : block;
                    c.carry_bits = carry;
                    c.F = F;
                    c.out_rounding = r;
                    c.out_fraction_bits = ob;
                    c.nan = nan;
                    c.round_down_alignment = rda;
                    if (model::check(c).empty()) fn(c);
                  }
        }
  };
  fused_family(MmaAlgorithm::fda, s.fda_F, s.blocks, {0});
  fused_family(MmaAlgorithm::fdrda, s.fdrda_F, s.blocks, {0});
  fused_family(MmaAlgorithm::gfdrda, s.fdrda_F, s.blocks, {0});
  const DotConfig probe = base(MmaAlgorithm::gdfs);
  if (model::check(probe).empty()) fused_family(MmaAlgorithm::gdfs, s.gdfs_F, {K}, s.gdfs_groups);
  for (int F : s.ocfda_F)
    for (int block : s.blocks)
      for (Rounding r : s.roundings)
        for (bool flush : {false, true}) {
          DotConfig c = base(MmaAlgorithm::ocfda);
          c.F = F;
          c.block = block >= K ? K : block;
          c.out_rounding = r;
          c.flush_inputs = flush;
          if (model::check(c).empty()) fn(c);
        }
  for (const model::SummationTree& shape : s.shapes)
    tree_variants(cfg, shape, s.roundings, [&](DotConfig c) {
      c.scale = s.scale;
      c.scale_block = s.scale_block;
      if (model::check(c).empty()) fn(c);
    });
}

// Floors that can matter: above the lowest exponent a summand (or a partial result) can have,
// up to emin(d). Lower floors never bind: they are the same as none.
std::vector<int> floor_range(const MmaConfig& cfg) { return range(lowest_summand_exponent(cfg) + 1, cfg.d->emin()); }

std::array<int, 10> key_of(const DotConfig& c, int K) {
  if (c.algorithm == MmaAlgorithm::tree)
    return {int(c.algorithm),
            int(std::hash<std::string>{}(parameters_json(c, K).dump()) & 0x7FFFFFFF),
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0};
  const bool f = model::is_fused(c.algorithm);
  return {int(unchained(c.algorithm)),
          f ? c.F : 0,
          f ? effective_block(c, K) : 0,
          c.algorithm == MmaAlgorithm::gps || c.algorithm == MmaAlgorithm::gdfs ? std::min(c.group, K) : 0,
          f ? int(c.out_rounding) : 0,
          f ? c.out_fraction_bits : 0,
          f ? c.align_floor : 0,
          f ? int(c.nan) : 0,
          f && model::is_fdrda_family(c.algorithm) ? int(c.round_down_alignment) : int(c.flush_inputs),
          c.carry_bits};
}

std::vector<int> carry_range(int K) { return range(0, carry_limit(K) - 1); }

namespace {

// The candidates that differ from c in one parameter, over its whole range.
std::vector<DotConfig> neighbors(const MmaConfig& cfg, const DotConfig& c) {
  std::vector<DotConfig> v;
  const Space full = full_space(cfg);
  const auto vary = [&](auto&& set) {
    DotConfig x = c;
    set(x);
    // Carry-out bits that cannot wrap the block's sum are every carry kept (for_each_candidate).
    if (x.carry_bits >= carry_limit(effective_block(x, cfg.k))) x.carry_bits = 0;
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
  if (model::is_fdrda_family(c.algorithm))
    vary([&](DotConfig& x) { x.round_down_alignment = !x.round_down_alignment; });
  vary([&](DotConfig& x) { x.align_floor = model::kNoAlignFloor; });
  for (int fl : floor_range(cfg)) vary([&](DotConfig& x) { x.align_floor = fl; });
  if (unchained(c.algorithm) == MmaAlgorithm::fda)
    for (int carry : carry_range(cfg.k)) vary([&](DotConfig& x) { x.carry_bits = carry; });
  if (c.algorithm == MmaAlgorithm::ocfda) vary([&](DotConfig& x) { x.flush_inputs = !x.flush_inputs; });
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

std::vector<long> canonical_rank(const MmaConfig& cfg, const DotConfig& c) {
  const int K = cfg.k;
  // Trees: the chains first, no flushing, exact products, sums in d, to nearest (IEEE additions).
  if (c.algorithm == MmaAlgorithm::tree) {
    const model::SummationTree& t = *c.tree;
    const int r = t.sum_rounding == Rounding::rne ? -1 : rounding_rank(t.sum_rounding);
    return {family_rank(c.algorithm),
            t.sequential() ? 0 : 1,
            std::popcount(unsigned(flush_of(t))),
            flush_of(t),
            t.product_format ? 1 : 0,
            t.sum_format ? 1 : 0,
            r};
  }
  const bool f = model::is_fused(c.algorithm);
  const long floor_rank = c.align_floor == model::kNoAlignFloor         ? 0
                          : c.align_floor == cfg.d->emin() - (c.F - 18) ? 1
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
          f && !c.round_down_alignment ? 1 : 0,
          c.carry_bits == 0 ? 0 : 100 - c.carry_bits,  // every carry kept, else the most bits
          c.flush_inputs ? 1 : 0};
}

}  // namespace

bool rank_less(const MmaConfig& cfg, const DotConfig& x, const DotConfig& y) {
  return canonical_rank(cfg, x) < canonical_rank(cfg, y);
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
  if (c.carry_bits) s += fmt::format(", {} carry-out bits (larger sums wrap around)", c.carry_bits);
  if (model::is_fdrda_family(c.algorithm))
    s += c.round_down_alignment ? ", c and the dot product aligned rounding down" : ", aligned toward zero";
  if (c.algorithm == MmaAlgorithm::ocfda)
    s += fmt::format(", summands opposing c's sign in one's complement, subnormal a and b {}",
                     c.flush_inputs ? "flushed" : "kept");
  s += c.nan == MmaNan::nvidia ? ", NVIDIA NaN" : ", quiet NaN";
  return s + ")";
}

std::vector<DotConfig> survivors_of(const MmaConfig& cfg, const Space& space, const Pool& pool, std::uint64_t& checked,
                                    Bounds* bounds) {
  Bounds none;
  Bounds& b = bounds ? *bounds : none;
  const bool timed = b.deadline != std::chrono::steady_clock::time_point::max();
  const auto late = [&] { return timed && std::chrono::steady_clock::now() > b.deadline; };
  Checker safe(pool, true);
  std::vector<DotConfig> first;
  bool stop = false;
  for_each_candidate(cfg, space, [&](const DotConfig& c) {
    if (stop || (stop = b.out_of_time = late())) return;
    if (!safe.fits(c)) return;
    if (first.size() == b.max_survivors) {
      stop = b.too_many = true;
      return;
    }
    first.push_back(c);
  });
  checked += safe.checked();
  // Every observation for each of them, with every floor: on every core (candidate j by worker
  // j mod n), the results kept in the candidates' order.
  const std::vector<int> floors = floor_range(cfg);
  std::vector<std::vector<DotConfig>> kept(first.size());
  std::vector<std::uint64_t> counts;
  std::atomic<std::size_t> total{0};
  std::atomic<bool> cut{false};
  const auto work = [&](std::size_t from, std::size_t step, std::uint64_t& count) {
    Checker all(pool, false);
    for (std::size_t j = from; j < first.size() && !cut; j += step) {
      if (late()) {
        cut = b.out_of_time = true;
        break;
      }
      const DotConfig& c = first[j];
      if (all.fits(c)) kept[j].push_back(c);
      if (model::is_fused(c.algorithm)) {
        DotConfig x = c;
        for (int fl : floors) {
          x.align_floor = fl;
          if (all.fits(x)) kept[j].push_back(x);
        }
      }
      if ((total += kept[j].size()) > b.max_survivors) cut = b.too_many = true;
    }
    count = all.checked();
  };
  const std::size_t threads = std::min<std::size_t>(worker_count(b.threads), first.size() / 16 + 1);
  counts.assign(threads, 0);
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(work, t, threads, std::ref(counts[t]));
  work(0, threads, counts[0]);
  for (std::thread& w : workers) w.join();
  std::vector<DotConfig> out;
  for (auto& v : kept) out.insert(out.end(), v.begin(), v.end());
  if (out.size() > b.max_survivors) out.resize(b.max_survivors);
  for (std::uint64_t n : counts) checked += n;
  if (out.empty() && !b.out_of_time && !b.too_many && space.carries == std::vector<int>{0}) {
    Space wrapping = space;  // the FDA family alone, with every carry count that can wrap
    wrapping.sfma = false;
    wrapping.gps_groups.clear();
    wrapping.fdrda_F.clear();
    wrapping.gdfs_groups.clear();
    wrapping.shapes.clear();
    wrapping.carries = carry_range(cfg.k);
    wrapping.carries.erase(wrapping.carries.begin());
    if (!wrapping.carries.empty()) return survivors_of(cfg, wrapping, pool, checked, bounds);
  }
  return out;
}

std::vector<Near> closest_candidates(const MmaConfig& cfg, const Space& space, const Pool& pool, std::size_t n,
                                     unsigned threads) {
  if (n == 0 || pool.size() == 0) return {};
  Pool sample = make_pool(cfg, space.scale, space.scale_block);
  const std::size_t step = std::max<std::size_t>(1, pool.size() / 256);
  for (std::size_t i = 0; i < pool.size(); i += step) add_to(sample, cfg, pool.at(i), pool.out[i]);
  Pool head = make_pool(cfg, space.scale, space.scale_block);
  for (std::size_t i = 0; i < sample.size() && i < 32; ++i) add_to(head, cfg, sample.at(i), sample.out[i]);
  struct Ranked {
    std::size_t misses, index;  // on the pass's observations; the candidate's place in the space
    DotConfig c;
  };
  const auto before = [](const Ranked& x, const Ranked& y) {
    return x.misses != y.misses ? x.misses < y.misses : x.index < y.index;
  };
  const std::size_t workers = worker_count(threads);
  const std::size_t ranked = std::max<std::size_t>(16, n);  // ranked on the sample, then counted on all
  std::vector<Ranked> best;
  // A pass: every candidate on `on`, kept when it misses at most `bound` (then at most as many as
  // the n-th best of its worker: the n best of all are among the workers' n best).
  const auto pass = [&](const Pool& on, std::size_t bound) {
    std::vector<std::vector<Ranked>> kept(workers);
    std::vector<Checker> checkers;
    for (std::size_t w = 0; w < workers; ++w) checkers.emplace_back(on, false);
    std::vector<std::size_t> limit(workers, bound);
    std::vector<DotConfig> chunk;
    std::size_t index = 0;
    const auto run_chunk = [&] {
      const auto work = [&](std::size_t w) {
        for (std::size_t j = w; j < chunk.size(); j += workers) {
          const std::size_t m = checkers[w].misses(chunk[j], limit[w]).count;
          if (m > limit[w]) continue;
          std::vector<Ranked>& k = kept[w];
          k.insert(std::upper_bound(k.begin(), k.end(), Ranked{m, index + j, {}}, before),
                   Ranked{m, index + j, chunk[j]});
          if (k.size() > ranked) k.pop_back();
          if (k.size() == ranked) limit[w] = k.back().misses;
        }
      };
      std::vector<std::thread> others;
      for (std::size_t w = 1; w < workers; ++w) others.emplace_back(work, w);
      work(0);
      for (std::thread& t : others) t.join();
      index += chunk.size();
      chunk.clear();
    };
    for_each_candidate(cfg, space, [&](const DotConfig& c) {
      chunk.push_back(c);
      if (chunk.size() == 4096) run_chunk();
    });
    run_chunk();
    std::vector<Ranked> all;
    for (auto& k : kept) all.insert(all.end(), std::make_move_iterator(k.begin()), std::make_move_iterator(k.end()));
    std::sort(all.begin(), all.end(), before);
    if (all.size() > ranked) all.resize(ranked);
    return all;
  };
  for (std::size_t bound : {std::size_t{4}, std::size_t{16}})
    if (best.empty()) best = pass(sample, bound);
  if (best.empty()) best = pass(head, head.size());
  Checker on_all(pool, false);
  std::vector<Near> near;
  for (const Ranked& r : best) near.push_back({on_all.misses(r.c, SIZE_MAX - 1).count, r.c});
  std::stable_sort(near.begin(), near.end(), [&](const Near& x, const Near& y) {
    return x.misses != y.misses ? x.misses < y.misses : rank_less(cfg, x.c, y.c);
  });
  if (near.size() > n) near.resize(n);
  return near;
}

void keep_nan_exact(const MmaConfig& cfg, const Pool& pool, std::vector<DotConfig>& survivors) {
  std::vector<std::size_t> nan_lines;
  for (std::size_t i = 0; i < pool.size(); ++i)
    if (is_nan(*cfg.d, pool.out[i])) nan_lines.push_back(i);
  std::vector<DotConfig> exact;
  for (const DotConfig& c : survivors) {
    const model::Dot dot(c);
    bool all = true;
    for (std::size_t i : nan_lines) all = all && pool.predict(dot, i) == pool.out[i];
    if (all) exact.push_back(c);
  }
  if (!exact.empty() && exact.size() < survivors.size()) survivors = std::move(exact);
}

std::vector<DotConfig> fitting(const Pool& pool, const std::vector<DotConfig>& s, std::size_t from) {
  Checker fresh(pool, false, from);
  std::vector<DotConfig> kept;
  for (const DotConfig& c : s)
    if (fresh.fits(c)) kept.push_back(c);
  return kept;
}

void expand(const MmaConfig& cfg, const Pool& pool, std::vector<DotConfig>& s, std::uint64_t& checked) {
  const int K = cfg.k;
  std::set<std::array<int, 10>> seen;
  for (const DotConfig& c : s) seen.insert(key_of(c, K));
  Checker all(pool, false);
  std::vector<DotConfig> frontier = s;
  const auto by_rank = [&](const DotConfig& x, const DotConfig& y) { return rank_less(cfg, x, y); };
  for (int step = 0; step < 2 && !frontier.empty(); ++step) {
    std::sort(frontier.begin(), frontier.end(), by_rank);
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

Classes behaviour_classes(const std::vector<DotConfig>& s, const std::vector<DotCase>& inputs, std::size_t max_first,
                          std::size_t max_total, unsigned workers_wanted) {
  Classes k;
  k.pred.resize(s.size());
  const auto outputs = [&](std::size_t i) {
    const model::Dot dot(s[i]);
    std::vector<std::uint64_t> p;
    p.reserve(inputs.size());
    for (const DotCase& x : inputs) p.push_back(predict(dot, x));
    return p;
  };
  // The hash of each candidate's outputs on every core (candidate i by worker i mod n), then the
  // classes in order, then the outputs of each class's first.
  std::vector<std::uint64_t> hash(s.size());
  const auto work = [&](std::size_t first, std::size_t step) {
    for (std::size_t i = first; i < s.size(); i += step) {
      std::uint64_t h = 0x9E3779B97F4A7C15ULL;
      for (std::uint64_t v : outputs(i)) h = (h ^ v) * 0x100000001B3ULL + (h >> 29);
      hash[i] = h;
    }
  };
  const std::size_t threads = std::min<std::size_t>(worker_count(workers_wanted), s.size() / 16 + 1);
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(work, t, threads);
  work(0, threads);
  for (std::thread& w : workers) w.join();
  std::unordered_map<std::uint64_t, std::size_t> classes;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto [it, fresh] = classes.emplace(hash[i], k.rep.size());
    if (fresh) k.rep.push_back(i);
    k.class_of.push_back(it->second);
  }
  for (std::size_t r : k.rep) k.pred[r] = outputs(r);
  if (k.rep.size() <= 1) return k;
  // For each class, an input where it differs from the first class; then any input where two
  // classes differ.
  std::set<std::size_t> chosen;
  for (std::size_t r = 1; r < k.rep.size() && chosen.size() < max_first; ++r)
    for (std::size_t n = 0; n < inputs.size(); ++n)
      if (k.pred[k.rep[r]][n] != k.pred[k.rep[0]][n]) {
        chosen.insert(n);
        break;
      }
  for (std::size_t n = 0; n < inputs.size() && chosen.size() < max_total; ++n) {
    std::set<std::uint64_t> values;
    for (std::size_t r : k.rep) values.insert(k.pred[r][n]);
    if (values.size() > 1) chosen.insert(n);
  }
  k.splitting.assign(chosen.begin(), chosen.end());
  return k;
}

namespace {

// Summary of the values one parameter takes among equivalent candidates.
std::string span_of(std::vector<int> v, std::string_view none_name = "") {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    const auto name = [&](int x) {
      return x == model::kNoAlignFloor && !none_name.empty() ? std::string(none_name) : std::to_string(x);
    };
    parts.push_back(i == j ? name(v[i]) : name(v[i]) + ".." + name(v[j]));
    i = j + 1;
  }
  return join(parts, ", ", ", ");
}

}  // namespace

nlohmann::json ambiguity(int K, const std::vector<DotConfig>& survivors) {
  std::set<std::string> algs;
  std::vector<int> Fs, blocks, floors, bits, groups, carries;
  std::set<std::string> rounds_seen, nans, rdas, flushes;
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
      if (unchained(c.algorithm) == MmaAlgorithm::fda) carries.push_back(c.carry_bits);
      if (c.algorithm == MmaAlgorithm::ocfda) flushes.insert(c.flush_inputs ? "true" : "false");
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
  note("carry_bits", carries);
  if (rounds_seen.size() > 1) amb["out_rounding"] = join({rounds_seen.begin(), rounds_seen.end()}, ", ", ", ");
  if (nans.size() > 1) amb["nan"] = join({nans.begin(), nans.end()}, ", ", ", ");
  if (rdas.size() > 1) amb["round_down_alignment"] = "true, false";
  if (flushes.size() > 1) amb["flush_inputs"] = "false, true";
  for (const auto& [key, values] : tree_params)
    if (values.size() > 1) amb[key] = join({values.begin(), values.end()}, "; ", "; ");
  return amb;
}

std::vector<DotCase> draw_inputs(RandomInputs& gen, int K, int per_gen, std::string_view what,
                                 std::span<const Gen> gens) {
  std::vector<DotCase> inputs;
  for (Gen g : gens)
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

}  // namespace gp::mma
