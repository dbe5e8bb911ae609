// The detection methods of MMA-Sim (Xie et al., section III): the same computation for every
// element (III-B), the summation tree from X, -X and distinct small y at every pair of positions
// (III-C and FPRev; any tree, rebuilt from the summands lost), the accumulation precision of
// each summand, "1 + e" halving and "-1 + 1 + e"
// for fused sums (III-D), and the rounding mode from tables I and II (III-E), after the output's
// precision. Every input is built for the configuration's formats and K.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <set>

#include "model/ops.hpp"
#include "tests_mma/families.hpp"
#include "tests_mma/tree_shape.hpp"

namespace gp::mma {
namespace {

using nlohmann::json;

constexpr const char* kMmaSim = "MMA-Sim (Xie et al. 2025), section III";

// v = m * 2^e exactly: m, else nullopt.
std::optional<std::int64_t> multiple_of(Exact v, int e) {
  if (v.sig == 0) return 0;
  if (v.exp >= e) {
    if (v.exp - e + model::msb(v.sig) > 60) return std::nullopt;
    const auto m = std::int64_t(v.sig << (v.exp - e));
    return v.neg ? -m : m;
  }
  const int s = e - v.exp;
  if (s >= 64 || (v.sig & ((std::uint64_t{1} << s) - 1))) return std::nullopt;
  const auto m = std::int64_t(v.sig >> s);
  return v.neg ? -m : m;
}

std::string summand_name(int s, int K) { return s == K ? "c" : fmt::format("p{}", s); }

// A tree's shape in words: "binary additions, one after the other from p0, c last".
std::string describe_shape(const model::SummationTree& t) {
  const std::vector<int> order = t.leaf_order();
  if (t.sequential()) {
    const bool in_order =
        std::is_sorted(order.begin(), order.end() - 1) || std::is_sorted(order.begin() + 1, order.end());
    const std::string first = summand_name(order.front(), t.k), last = summand_name(order.back(), t.k);
    return fmt::format("binary additions one after the other{}, from {} to {}", in_order ? "" : " in that order", first,
                       last);
  }
  return t.binary() ? "binary additions" : "fused sums of several terms in some nodes";
}

// The summand positions a probe visits: all of them up to K = 16; beyond, the first eight, every
// fourth, the last four and c (every block boundary of a power-of-two block lies among them).
std::vector<int> positions(int K) {
  std::vector<int> v;
  for (int s = 0; s <= K; ++s)
    if (K <= 16 || s < 8 || s % 4 == 0 || s >= K - 4) v.push_back(s);
  return v;
}

// Of a scan whose outcome changes at `edge`, the cases worth keeping as observations: the first
// and those around the change (the others repeat them).
bool near_edge(int t, int edge) { return t == 0 || std::abs(t - edge) <= 2; }

// Every candidate computes each element of D alike: the model's only answer.
struct ElementsAlike {};
json answer_fields(const ElementsAlike&) { return {{"elements", "alike"}}; }
std::string say_elements(const ElementsAlike&) { return "every element of D computed the same way"; }

MmaQuestion elements_question() {
  return {{"ELEMENTS", "whether every element of D is computed alike", audit::typed(say_elements)},
          [](const MmaConfig&, const DotConfig&) { return audit::Answer(ElementsAlike{}); }};
}

// ---------------------------------------------------------------------------------------------
class ElementsProbe final : public ProbeBase {
 public:
  ElementsProbe()
      : ProbeBase("mma.elements", "The same computation for every element of D", std::string(kMmaSim) + "-B",
                  elements_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext& ctx) const override {
    const int tiles = int(ctx.cases(4, 16, 64));
    const std::size_t M = std::size_t(cfg.m), N = std::size_t(cfg.n), K = std::size_t(cfg.k);
    RandomInputs gen(cfg, ctx.seed ^ 0xE1E3E475ULL);
    std::vector<std::uint64_t> a(tiles * M * K), b(tiles * K * N), c(tiles * M * N);
    std::vector<DotCase> cases(static_cast<std::size_t>(tiles));
    for (std::size_t t = 0; t < std::size_t(tiles); ++t) {
      DotCase& x = cases[t];
      x.a.resize(K);
      x.b.resize(K);
      const Gen g = t % 2 ? Gen::wide : Gen::normal;
      gen.draw(g, x.c, x.a.data(), x.b.data());
      x.note = fmt::format("tile {}: every row of A, column of B and element of C equal ({})", t, name(g));
      for (std::size_t i = 0; i < M; ++i)
        for (std::size_t k = 0; k < K; ++k) a[t * M * K + i * K + k] = x.a[k];
      for (std::size_t k = 0; k < K; ++k)
        for (std::size_t j = 0; j < N; ++j) b[t * K * N + k * N + j] = x.b[k];
      for (std::size_t e = 0; e < M * N; ++e) c[t * M * N + e] = x.c;
    }
    auto d = device.mma({&cfg, a, b, c});
    if (!d) return audit::failed(d.error());
    if (d->size() != c.size()) return audit::failed("the device returned a D of the wrong size");
    audit::Finding f;
    int differing = 0;
    std::string first;
    for (std::size_t t = 0; t < std::size_t(tiles); ++t) {
      const std::uint64_t d00 = (*d)[t * M * N];
      f.observations.push_back(observation(cfg, cases[t], d00));
      for (std::size_t e = 1; e < M * N; ++e) {
        const std::uint64_t x = (*d)[t * M * N + e];
        if (x == d00) continue;
        if (differing++ < 8) {
          audit::Observation o = observation(cfg, cases[t], x);
          o.note = fmt::format("tile {}: element ({},{}) differs from element (0,0)", t, e / N, e % N);
          f.observations.push_back(std::move(o));
        }
        if (first.empty()) first = fmt::format("element ({},{}) of tile {}", e / N, e % N, t);
      }
    }
    f.parameters["uniform"] = differing == 0;
    f.parameters["tiles"] = tiles;
    f.verdict = differing == 0
                    ? fmt::format("ELEMENTS: every element of D computed the same way ({} tiles of {}x{})", tiles, M, N)
                    : fmt::format("ELEMENTS: {} elements differ from element (0,0) on equal inputs, first {}",
                                  differing, first);
    if (differing) f.message = "the identification assumes one dot-add for every element; it may fail";
    return f;
  }
};

// The order of the summation: the accumulation's shape (questions.hpp) in words.
struct SummationOrder {
  Accumulation accumulation;
};

std::string say_order(const SummationOrder& o) {
  const Accumulation& a = o.accumulation;
  switch (a.algorithm) {
    case MmaAlgorithm::sfma: return "sequential FMA chain from c";
    case MmaAlgorithm::gps:
      return fmt::format("pairwise sums of groups of {} products, each group added to the running sum from c", a.group);
    case MmaAlgorithm::tree: return "summation tree " + a.tree->text();
    case MmaAlgorithm::gdfs:
      return fmt::format("exact sums of groups of {} products, then one fused sum with c", a.group);
    default:
      return a.block == a.k ? fmt::format("one fused sum of c and the {} products", a.k)
                            : fmt::format("fused blocks of {} products, each block's result the next one's c", a.block);
  }
}
json answer_fields(const SummationOrder& o) { return {{"order", say_order(o)}}; }

MmaQuestion summation_tree_question() {
  return {{"ORDER", "the order of the summation", audit::typed(say_order)},
          [](const MmaConfig& cfg, const DotConfig& c) { return audit::Answer(SummationOrder{accumulation(cfg, c)}); }};
}

// ---------------------------------------------------------------------------------------------
class TreeProbe final : public ProbeBase {
 public:
  TreeProbe()
      : ProbeBase(std::string(kTreeProbeId),
                  "Summation tree: X, -X and distinct small y at the other positions, for every pair of positions",
                  std::string(kMmaSim) + "-C; FPRev (Xie et al., USENIX ATC 2025)", summation_tree_question()) {}

  // One layout of the experiment: X's exponent, and the y_l of each case at distinct bits
  // 2^(low .. low + width - 1) below X's grid 2^(low + width), `width` summands a case.
  struct Layout {
    const Format* sums;  // the format of the sums assumed
    int ex, low, width;
  };

  // The layout for sums of precision p: X's rounding then moves it by multiples of
  // 2^(ex - p) (one step of the binade below X) whatever the rounding mode, so the y_l below that
  // grid that survive come back bit for bit, beside X's moves; and the whole remainder, at most
  // 2 (K + 1) such steps and the y_l, must be exact in the sums and in d. Sums narrower than
  // assumed leave y_l inexact, wider ones move X by less than the grid: either way the lost sets
  // then describe no tree, and the next layout is tried.
  static std::optional<Layout> layout(const MmaConfig& cfg, const Format& sums) {
    const Format &fa = *cfg.a, &fb = *cfg.b, &fc = *cfg.c, &fd = *cfg.d;
    const ProductRange pr = product_range(cfg);
    const int p = sums.precision();
    const int ex = std::min({pr.max_exp, fd.emax() - 1, fc.emax(), sums.emax() - 1});
    // Every y normal (units that flush subnormals must not lose y for that), in c too.
    const int bottom = std::max({fa.emin() + fb.emin(), fd.emin(), fc.emin(), sums.emin()});
    const int room = std::min(p, fd.precision()) - std::bit_width(unsigned(2 * cfg.k + 3));
    const int width = std::min({ex - p - bottom, room, cfg.k - 1, 62});
    if (width < 1) return std::nullopt;
    return Layout{&sums, ex, ex - p - width, width};
  }

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const int K = cfg.k;
    if (K < 2) return audit::unsupported("K = 1: one product and c, no tree to find");
    if (K > kMaxShapeK)
      return audit::unsupported(fmt::format("K = {}: the probe recovers trees up to K = {}", K, kMaxShapeK));
    // The sums' formats assumed, widest first: d's, c's, binary32, binary16, bfloat16.
    std::vector<const Format*> assumed;
    for (const Format* s : {cfg.d, cfg.c, &model::binary32, &model::binary16, &model::bfloat16})
      if (std::none_of(assumed.begin(), assumed.end(),
                       [&](const Format* x) { return x->precision() == s->precision(); }))
        assumed.push_back(s);
    std::stable_sort(assumed.begin(), assumed.end(),
                     [](const Format* x, const Format* y) { return x->precision() > y->precision(); });
    audit::Finding f;
    std::vector<std::string> tried;
    for (const Format* sums : assumed) {
      const auto lay = layout(cfg, *sums);
      if (!lay) continue;
      // The observations of the layout that describes the tree, else of the first.
      std::vector<audit::Observation> seen;
      auto tree = recover(device, cfg, *lay, seen);
      if (!tree) return audit::failed(tree.error());
      if (f.observations.empty() || *tree) f.observations = std::move(seen);
      tried.push_back(
          fmt::format("X = 2^{}, y_l from 2^{}, {} a case (below the rounding grid of sums of up to {} bits)", lay->ex,
                      lay->low, lay->width, sums->precision()));
      if (!*tree) continue;
      f.parameters["tree"] = (*tree)->text();  // the identification tries it (tests_mma/identify/identify.hpp)
      f.message = fmt::format("X, -X and distinct y_l: {}; the lost y_l describe the tree", tried.back());
      const bool one_sum =
          std::count_if((*tree)->steps.begin(), (*tree)->steps.end(), [](const auto& s) { return s.leaf < 0; }) == 1;
      f.verdict = one_sum ? fmt::format(
                                "ORDER: no y is lost beside X: one fused sum of c and the {} products, or a sum "
                                "wider than X / y",
                                K)
                          : fmt::format("ORDER: the lost summands describe the summation tree {} ({})", (*tree)->text(),
                                        describe_shape(**tree));
      return f;
    }
    if (tried.empty()) return audit::unsupported("the formats cannot make distinct y small beside X");
    f.message = "tried " + join(tried, "; ", "; ");
    f.verdict = "ORDER: the summands lost beside X and -X describe no summation tree";
    return f;
  }

 private:
  // Runs every pair (i, j) of the layout; the tree their lost sets describe, or nullopt.
  // `observations`: the first case of every pair.
  static Expected<std::optional<model::SummationTree>> recover(backends::Device& device, const MmaConfig& cfg,
                                                               const Layout& lay,
                                                               std::vector<audit::Observation>& observations) {
    const int K = cfg.k;
    struct Case {
      int i, j;
      std::vector<int> ys;
    };
    std::vector<Case> plan;
    std::vector<DotCase> cases;
    for (int i = 0; i <= K; ++i)
      for (int j = i + 1; j <= K; ++j) {
        std::vector<int> others;
        for (int s = 0; s <= K; ++s)
          if (s != i && s != j) others.push_back(s);
        for (std::size_t at = 0; at < others.size(); at += std::size_t(lay.width)) {
          Case x{i,
                 j,
                 {others.begin() + std::ptrdiff_t(at),
                  others.begin() + std::ptrdiff_t(std::min(others.size(), at + std::size_t(lay.width)))}};
          CaseBuilder b(cfg);
          b.set(i, pow2(lay.ex));
          b.set(j, pow2(lay.ex, true));
          for (std::size_t n = 0; n < x.ys.size(); ++n) b.set(x.ys[n], pow2(lay.low + int(n)));
          if (!b.ok()) return std::optional<model::SummationTree>{};
          cases.push_back(b.done(fmt::format("X = 2^{} at {}, -X at {}, 2^{}.. at {}..{}", lay.ex, summand_name(i, K),
                                             summand_name(j, K), lay.low, summand_name(x.ys.front(), K),
                                             summand_name(x.ys.back(), K))));
          plan.push_back(std::move(x));
        }
      }
    auto out = mma::run(device, cfg, cases);
    if (!out) return out.error();
    std::map<std::pair<int, int>, Summands> lost;
    bool readable = true;
    for (std::size_t n = 0; n < cases.size(); ++n) {
      const Case& x = plan[n];
      if (n == 0 || plan[n - 1].i != x.i || plan[n - 1].j != x.j)
        observations.push_back(observation(cfg, cases[n], (*out)[n]));
      // d = m 2^(low + width) + the surviving y_l: the bits below the grid name them.
      const model::Class cls = model::classify(*cfg.d, (*out)[n]);
      const auto m = multiple_of(decode(*cfg.d, (*out)[n]), lay.low);
      Summands& l = lost[{x.i, x.j}];
      if (!m || !(model::is_finite_nonzero(cls) || cls == model::Class::zero)) {
        readable = false;
        continue;
      }
      const std::uint64_t kept = std::uint64_t(*m) & ((std::uint64_t{1} << lay.width) - 1);
      if (kept >> x.ys.size()) readable = false;
      for (std::size_t y = 0; y < x.ys.size(); ++y)
        if (!(kept >> y & 1)) l.set(std::size_t(x.ys[y]));
    }
    if (!readable) return std::optional<model::SummationTree>{};
    return tree_from_lost(K, [&](int i, int j) { return lost.at({i, j}); });
  }
};

// ---------------------------------------------------------------------------------------------
class PrecisionProbe final : public ProbeBase {
 public:
  PrecisionProbe()
      : ProbeBase("mma.accumulation_precision",
                  "Accumulation precision of each summand: -X + X + 2^-t X (fused) and 1 + 2^-t (binary)",
                  std::string(kMmaSim) + "-D; Fasi et al. 3.1.4 (extra alignment bits)",
                  kept_bits_question("ACCUMULATION")) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    std::vector<DotCase> cases;
    std::vector<Series> series;
    add_fused_series(cfg, cases, series);
    const std::size_t part_b = series.size();
    add_binary_series(cfg, cases, series);
    if (cases.empty()) return audit::unsupported("the formats cannot express the precision cases");
    auto out = mma::run(device, cfg, cases);
    if (!out) return audit::failed(out.error());
    audit::Finding f;
    const Reading r = read(cfg, cases, series, part_b, *out, f.observations);
    f.parameters["per_summand"] = r.per;
    f.parameters["one_plus_e"] = r.binary;
    judge(r, int(part_b), f);
    return f;
  }

 private:
  // The cases [first, first + count) of one summand's scan over t, and the output each would give
  // with 2^-t kept.
  struct Series {
    std::string label;
    std::size_t first;
    int count;
    std::vector<std::uint64_t> expect;
  };

  // What the scans tell: the kept bits of each fused summand test and of each 1 + 2^-t.
  struct Reading {
    std::map<int, int> finite;  // t* -> how many summands
    int exact = 0;
    nlohmann::json per = nlohmann::json::object(), binary = nlohmann::json::object();
    int one_plus_e = -1;
  };

  // Keeps a scan that shows a change (two cases at least), else drops its cases.
  static void keep(Series&& s, std::vector<DotCase>& cases, std::vector<Series>& series) {
    if (s.count > 1)
      series.push_back(std::move(s));
    else
      cases.resize(s.first);
  }

  // Part A: X and -X at a pair of positions, 2^-t X at each other one.
  static void add_fused_series(const MmaConfig& cfg, std::vector<DotCase>& cases, std::vector<Series>& series) {
    const int K = cfg.k;
    const Format &fc = *cfg.c, &fd = *cfg.d;
    const ProductRange pr = product_range(cfg);
    std::vector<std::pair<int, int>> pairs;
    if (K >= 3)
      pairs.emplace_back(0, 1);
    else if (K == 2)
      pairs.emplace_back(K, 0);
    if (K >= 4) pairs.emplace_back(K - 2, K - 1);
    const int dbottom = fd.has_subnormals() ? fd.quantum_min() : fd.emin();
    for (auto [i, j] : pairs) {
      int ex = std::min(pr.max_exp, fd.emax() - 1);
      if (i == K || j == K) ex = std::min(ex, fc.emax());
      for (int k : positions(K)) {
        if (k == i || k == j) continue;
        // Normal factors and a normal c only: a unit that flushes subnormals must not lose y for that.
        const int bottom = std::max(dbottom, k == K ? fc.emin() : cfg.a->emin() + cfg.b->emin());
        const int T = std::min(48, ex - bottom);
        Series s{
            fmt::format("X at {}, -X at {}, 2^-t X at {}", summand_name(i, K), summand_name(j, K), summand_name(k, K)),
            cases.size(),
            0,
            {}};
        for (int t = 0; t <= T; ++t) {
          CaseBuilder b(cfg);
          b.set(i, pow2(ex));
          b.set(j, pow2(ex, true));
          b.set(k, pow2(ex - t));
          const auto y = encode(fd, pow2(ex - t));
          if (!b.ok() || !y) break;
          cases.push_back(b.done(fmt::format("{}, t = {}, X = 2^{}", s.label, t, ex)));
          s.expect.push_back(*y);
          ++s.count;
        }
        keep(std::move(s), cases, series);
      }
    }
  }

  // Part B: c = 1 and 2^-t at each product.
  static void add_binary_series(const MmaConfig& cfg, std::vector<DotCase>& cases, std::vector<Series>& series) {
    const Format& fd = *cfg.d;
    for (int k : positions(cfg.k)) {
      if (k == cfg.k) continue;
      Series s{fmt::format("1 at c, 2^-t at p{}", k), cases.size(), 0, {}};
      for (int t = 1; t <= fd.man_bits + 2; ++t) {
        CaseBuilder b(cfg);
        b.c(pow2(0));
        b.product(k, pow2(-t));
        const auto y = encode(fd, add(pow2(0), pow2(-t)));
        if (!b.ok()) break;
        cases.push_back(b.done(fmt::format("{}, t = {}", s.label, t)));
        s.expect.push_back(y ? *y : ~std::uint64_t{0});
        ++s.count;
      }
      keep(std::move(s), cases, series);
    }
  }

  // Each scan's first t that loses 2^-t; the cases around it go to `observations`.
  static Reading read(const MmaConfig& cfg, const std::vector<DotCase>& cases, const std::vector<Series>& series,
                      std::size_t part_b, const std::vector<std::uint64_t>& out,
                      std::vector<audit::Observation>& observations) {
    Reading r;
    for (std::size_t s = 0; s < series.size(); ++s) {
      const Series& x = series[s];
      int first_lost = -1;
      for (int t = 0; t < x.count; ++t) {
        const std::size_t n = x.first + std::size_t(t);
        if (out[n] != x.expect[std::size_t(t)] && first_lost < 0) first_lost = t;
      }
      for (int t = 0; t < x.count; ++t) {
        const std::size_t n = x.first + std::size_t(t);
        if (near_edge(t, first_lost < 0 ? x.count - 1 : first_lost))
          observations.push_back(observation(cfg, cases[n], out[n], {{"kept", x.expect[std::size_t(t)]}}));
      }
      if (s < part_b) {
        if (first_lost < 0) {
          r.per[x.label] = "exact";
          ++r.exact;
        } else {
          r.per[x.label] = first_lost - 1;
          if (first_lost > 0) ++r.finite[first_lost - 1];
        }
      } else {
        const int kept = first_lost < 0 ? x.count : first_lost;  // t runs from 1
        r.binary[x.label] = kept;
        r.one_plus_e = std::max(r.one_plus_e, kept);
      }
    }
    return r;
  }

  // F: the kept bits most fused summand tests agree on; `total` such tests ran.
  static void judge(const Reading& r, int total, audit::Finding& f) {
    int F = -1, most = 0;
    for (auto [t, n] : r.finite)
      if (n > most) F = t, most = n;
    if (F >= 0)
      f.parameters["F"] = F;
    else
      f.parameters["F"] = nullptr;
    if (total == 0) {
      f.verdict = fmt::format("ACCUMULATION: 1 + 2^-t keeps 2^-t down to t = {} (no fused test fits these formats)",
                              r.one_plus_e);
    } else if (F >= 0 && most == total) {
      f.verdict = fmt::format(
          "ACCUMULATION: X + (-X) + 2^-t X keeps 2^-t X down to t = {} for every summand: {} "
          "fraction bits kept below the largest exponent (F = {})",
          F, F, F);
    } else if (F < 0) {
      f.verdict =
          "ACCUMULATION: X + (-X) + 2^-t X is exact at every position tested: no bits lost beside X "
          "(the cancelling pair is summed first, or the sum is exact)";
    } else {
      std::vector<std::string> parts;
      for (auto [t, n] : r.finite) parts.push_back(fmt::format("{} summand tests keep {} bits", n, t));
      if (r.exact) parts.push_back(fmt::format("{} are exact (summed apart from X)", r.exact));
      f.verdict =
          fmt::format("ACCUMULATION: mostly F = {} fraction bits below the largest exponent ({})", F, join(parts));
    }
    f.message = fmt::format(
        "1 + 2^-t (binary addition test) keeps 2^-t down to t = {} (bounded by the output's "
        "precision)",
        r.one_plus_e);
  }
};

// ---------------------------------------------------------------------------------------------
// The alignment floor (MMA-Sim IV-C step 3 leaves it open): when every
// summand is tiny, are they aligned to the largest of them, or to a fixed lowest exponent? A
// leading summand 2^e (or a tie just above it) meets 2^(e-t) on either side; the largest t whose
// summand still changes the output is F while e lies above the floor, and F - (floor - e) below.
// The floor a fused sum aligns to, none where it never binds (at or below every summand).
struct AlignmentFloor {
  std::optional<int> floor;
};
json answer_fields(const AlignmentFloor& a) { return {{"align_floor", a.floor ? json(*a.floor) : json(nullptr)}}; }
std::string say_floor(const AlignmentFloor& a) {
  return a.floor ? fmt::format("summands are aligned to 2^{} at the lowest", *a.floor)
                 : std::string("none: tiny sums keep F bits below their own largest summand");
}

MmaQuestion alignment_floor_question() {
  return {{"ALIGNMENT FLOOR", "the lowest exponent a fused sum aligns to", audit::typed(say_floor)},
          [](const MmaConfig& cfg, const DotConfig& c) {
            const bool binds = c.align_floor > lowest_summand_exponent(cfg);
            return fused_only(c, AlignmentFloor{binds ? std::optional(c.align_floor) : std::nullopt});
          }};
}

class FloorProbe final : public ProbeBase {
 public:
  FloorProbe()
      : ProbeBase("mma.alignment_floor", "Alignment floor: kept bits of sums whose summands are all tiny",
                  "MMA-Sim (Xie et al. 2025), section IV-C, step 3; Khattak, Mikaitis 2025 (alignment floor)",
                  alignment_floor_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const Format& fd = *cfg.d;
    if (!fd.has_subnormals()) return audit::unsupported("d has no subnormals");
    std::vector<DotCase> cases;
    std::vector<Series> series;
    plan(cfg, cases, series);
    if (series.empty())
      return audit::unsupported(fmt::format("the products cannot reach d's smallest numbers (2^{})", fd.quantum_min()));
    auto out = mma::run(device, cfg, cases);
    if (!out) return audit::failed(out.error());
    audit::Finding f;
    judge(read_reach(cfg, cases, series, *out, f.observations), f);
    return f;
  }

 private:
  // One scan over t: the reference case at `first` (the leading summand alone), then `count`
  // cases with the small summand 2^(e-t).
  struct Series {
    int e, variant;
    std::size_t first;
    int count;
    std::uint64_t reference;
  };

  // The leading summand at product 0, the small one at product 1, else in c.
  static void place(const MmaConfig& cfg, CaseBuilder& b, Exact lead_value, Exact small) {
    b.product(0, lead_value);
    if (small.sig == 0) return;
    if (cfg.k >= 2)
      b.product(1, small);
    else
      b.c(small);
  }

  // Every scan, for e from just below d's smallest quantum to just above its smallest normal.
  static void plan(const MmaConfig& cfg, std::vector<DotCase>& cases, std::vector<Series>& series) {
    const Format& fd = *cfg.d;
    const int q = fd.quantum_min();
    // Variants: 2^e - 2^(e-t), 2^e + 2^(e-t), tie + 2^(e-t), tie - 2^(e-t): one of them shows
    // the small summand whatever the output rounding.
    static constexpr const char* names[] = {"2^e - 2^(e-t)", "2^e + 2^(e-t)", "tie + 2^(e-t)", "tie - 2^(e-t)"};
    for (int e = q - 1; e <= fd.emin() + 1; ++e)
      for (int variant = 0; variant < 4; ++variant) {
        // The tie: halfway between 2^e and the next output above it.
        const int ulp = std::max(q, e - fd.man_bits);
        const Exact lead_value = variant < 2 ? pow2(e) : e < q ? pow2(q - 1) : add(pow2(e), pow2(ulp - 1));
        if (e < q - 1) continue;
        if (variant < 2 && e < q) continue;
        CaseBuilder r(cfg);
        place(cfg, r, lead_value, Exact{});
        if (!r.ok()) continue;
        Series s{e, variant, cases.size(), 0, 0};
        cases.push_back(r.done(fmt::format("{} without the small summand, e = {}", names[variant], e)));
        for (int t = 1; t <= 44; ++t) {
          CaseBuilder b(cfg);
          place(cfg, b, lead_value, pow2(e - t, variant == 0 || variant == 3));
          if (!b.ok()) break;
          cases.push_back(b.done(fmt::format("{}, e = {}, t = {}", names[variant], e, t)));
          ++s.count;
        }
        if (s.count >= 4)
          series.push_back(s);
        else
          cases.resize(s.first);
      }
  }

  // e -> the largest t whose summand changed the output (before the first t that did not); the
  // reference and the cases around that t go to `observations`.
  static std::map<int, int> read_reach(const MmaConfig& cfg, const std::vector<DotCase>& cases,
                                       const std::vector<Series>& series, const std::vector<std::uint64_t>& out,
                                       std::vector<audit::Observation>& observations) {
    std::map<int, int> reach;
    for (const Series& s : series) {
      const std::uint64_t ref = out[s.first];
      observations.push_back(observation(cfg, cases[s.first], ref));
      int last = 0;
      bool gap = false;
      for (int t = 1; t <= s.count; ++t) {
        const bool changed = out[s.first + std::size_t(t)] != ref;
        if (changed && !gap) last = t;
        if (!changed && last > 0) gap = true;
      }
      for (int t = 1; t <= s.count; ++t) {
        const std::size_t n = s.first + std::size_t(t);
        if (near_edge(t, last)) observations.push_back(observation(cfg, cases[n], out[n]));
      }
      reach[s.e] = std::max(reach[s.e], last);
    }
    return reach;
  }

  static void judge(const std::map<int, int>& reach, audit::Finding& f) {
    nlohmann::json per = nlohmann::json::object();
    for (auto [e, t] : reach) per[std::to_string(e)] = t;
    f.parameters["reach"] = per;
    f.parameters["lowest_exponent"] = reach.begin()->first;
    // The reach alone misleads where the output's own quantum hides small summands: the floor is
    // the identification's candidates' answer (tests_mma/questions.cpp), the reach what was measured.
    const int top = reach.rbegin()->second;
    std::vector<std::string> at;
    for (auto [e, t] : reach) at.push_back(fmt::format("2^{}: {}", e, t));
    f.verdict = fmt::format(
        "ALIGNMENT FLOOR: bits kept below a tiny leading summand at 2^e (the largest t whose 2^(e-t) "
        "changes the output): {}; {} at 2^{}",
        join(at, ", ", ", "), top, reach.rbegin()->first);
  }
};

// ---------------------------------------------------------------------------------------------
// MMA-Sim section VI-C: on CDNA3, c is aligned to the dot product rounding down, so that
// 2048 * 2048 - 2048 * 2048 - 0.000001 gives -0.25; the FP8 instructions round c toward zero
// when it lies more than 25 binades below. Here: X - X + c for c of both signs and a full
// significand, from just below X's kept bits to far below.
std::string say_c_alignment(const CAlignmentAnswer& a) { return "c is " + std::string(describe(a.how)); }

MmaQuestion c_alignment_question() {
  return {{"C ALIGNMENT", "how c is aligned in a fused sum", audit::typed(say_c_alignment)},
          [](const MmaConfig&, const DotConfig& c) { return fused_only(c, c_alignment_answer(c)); }};
}

class CAlignmentProbe final : public ProbeBase {
 public:
  CAlignmentProbe()
      : ProbeBase("mma.c_alignment", "Alignment of c beside a cancelled dot product: X - X + c (asymmetric rounding)",
                  "MMA-Sim section VI-C; section IV-F step 6, IV-H step 8", c_alignment_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const Format &fc = *cfg.c, &fd = *cfg.d;
    if (cfg.k < 2) return audit::unsupported("K = 1: no cancelling pair of products");
    auto cal = measure_kept_bits(device, cfg);
    if (!cal) return audit::failed(cal.error());
    const int F = cal->F ? *cal->F : fd.man_bits;
    const ProductRange pr = product_range(cfg);
    const int ex = std::min(pr.max_exp, fd.emax() - 1);
    const int pc = std::min(fc.precision(), 12);
    std::vector<DotCase> cases;
    for (int g = std::max(1, F - 4); g <= F + 34; ++g)
      for (bool negative : {true, false}) {
        // c = +-(1 + 2^-(pc-1)) 2^(e(X) - g): a low bit that alignment must drop.
        const Exact c = {negative, (std::uint64_t{1} << (pc - 1)) + 1, ex - g - (pc - 1)};
        CaseBuilder b(cfg);
        b.product(0, pow2(ex));
        b.product(1, pow2(ex, true));
        if (!b.c(c) || !b.ok()) continue;
        cases.push_back(b.done(fmt::format("2^{0} - 2^{0} + ({1})", ex, show(c))));
      }
    if (cases.empty()) return audit::unsupported("c cannot lie far below the products in these formats");
    audit::Finding f;
    auto out = observe(device, cfg, cases, f);
    if (!out) return audit::failed(out.error());
    // Rounded down: a negative c comes back larger in magnitude than it is.
    int down = 0, toward_zero = 0;
    std::string example;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Exact c = decode(fc, cases[i].c), o = decode(fd, (*out)[i]);
      if (!c.neg || model::is_nan(model::classify(fd, (*out)[i]))) continue;
      const Exact diff = add(o, neg(c));  // output - c
      if (diff.sig != 0 && diff.neg) {
        ++down;
        if (example.empty()) example = cases[i].note + " gives " + show(fd, (*out)[i]);
      } else if (diff.sig != 0) {
        ++toward_zero;
      }
    }
    f.parameters["negative_c_rounded_down"] = down;
    f.parameters["negative_c_toward_zero"] = toward_zero;
    f.verdict = down ? "C ALIGNMENT: a negative c far below the dot product is rounded down (asymmetric): " + example
                : toward_zero ? "C ALIGNMENT: c's dropped bits are truncated toward zero on both signs"
                              : "C ALIGNMENT: c comes back exactly at every distance tried";
    return f;
  }
};

// ---------------------------------------------------------------------------------------------
std::string describe(model::Rounding r) {
  using model::Rounding;
  switch (r) {
    case Rounding::rne: return "to nearest, ties to even";
    case Rounding::rna: return "to nearest, ties away from zero";
    case Rounding::rnz: return "to nearest, ties toward zero";
    case Rounding::rnu: return "to nearest, ties up";
    case Rounding::rnd: return "to nearest, ties down";
    case Rounding::rno: return "to nearest, ties to odd";
    case Rounding::rz: return "toward zero";
    case Rounding::ru: return "up";
    case Rounding::rd: return "down";
    case Rounding::ra: return "away from zero";
    case Rounding::ro: return "to odd";
  }
  return "?";
}

std::string say_output_precision(const RoundingAnswer& a) {
  return fmt::format("{} fraction bits, rounded {}", a.fraction_bits, model::name(a.rounding));
}

MmaQuestion output_precision_question() {
  return {{"ROUNDING", "the precision and rounding of the output", audit::typed(say_output_precision)},
          [](const MmaConfig& cfg, const DotConfig& c) { return audit::Answer(rounding_answer(cfg, c)); }};
}

class RoundingProbe final : public ProbeBase {
 public:
  RoundingProbe()
      : ProbeBase("mma.rounding", "Precision and rounding of the output: tables I and II",
                  std::string(kMmaSim) + "-E, tables I and II", output_precision_question()) {}

  audit::Finding run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext&) const override {
    const int K = cfg.k;
    audit::Finding f;
    auto cal = measure_kept_bits(device, cfg, &f.observations);
    if (!cal) return audit::failed(cal.error());
    const Scan scan = output_scan(cfg);
    if (scan.cases.empty()) return audit::unsupported("the formats cannot express 1 + 2^-j");
    auto out = mma::run(device, cfg, scan.cases);
    if (!out) return audit::failed(out.error());
    const auto [ob, ob_n] = output_bits(cfg, scan, *out, f.observations);
    f.parameters["out_fraction_bits"] = ob;
    if (ob == 0) {
      f.verdict = "ROUNDING: the output does not show 1 + 2^-1 exactly; the output precision is unknown";
      return f;
    }
    // Tables I and II at u = ulp(n): n large enough that 0.25u lies within the kept bits.
    int n = 1;
    if (cal->F)
      while (n * 2 <= K && model::msb(std::uint64_t(n)) < ob + 2 - *cal->F) n *= 2;
    std::vector<DotCase> cases;
    std::vector<Exact> exact;
    table_cases(cfg, n, ob, cases, exact);
    if (cases.size() < 8) {
      f.verdict =
          fmt::format("ROUNDING: output keeps {} fraction bits; tables I and II cannot be built in these formats", ob);
      return f;
    }
    auto outs = observe(device, cfg, cases, f);
    if (!outs) return audit::failed(outs.error());
    judge(cfg, n, ob, ob_n, cases, exact, *outs, f);
    return f;
  }

 private:
  // The output precision scan: its cases, the (n, j) of each and the exact output of each.
  struct Scan {
    std::vector<DotCase> cases;
    std::vector<std::pair<int, int>> at;  // (n, j)
    std::vector<std::uint64_t> expect;
  };

  // n ones (n a power of two) and a small summand: c when it can hold it, else product n.
  static void build(const MmaConfig& cfg, int n, Exact small, bool negative, CaseBuilder& b) {
    const int K = cfg.k;
    const int ones_in_products = std::min(n, K);
    for (int k = 0; k < ones_in_products; ++k) b.product(k, pow2(0, negative));
    const bool c_free = ones_in_products == n;
    if (!c_free) b.c(pow2(0, negative));  // n = K + 1 is never asked: n is a power of two <= K
    if (small.sig == 0) return;
    small.neg = negative;
    if (c_free && encode(*cfg.c, small))
      b.c(small);
    else if (ones_in_products < K)
      b.product(ones_in_products, small);
    else
      b.set(-1, small);  // no room: spoil the case
  }

  // Output precision: n + 2^(L - j) exact for j up to the output's fraction bits.
  static Scan output_scan(const MmaConfig& cfg) {
    const Format& fd = *cfg.d;
    Scan scan;
    for (int n = 1; n <= cfg.k; n *= 2) {
      const int L = model::msb(std::uint64_t(n));
      for (int j = 1; j <= fd.man_bits; ++j) {
        CaseBuilder b(cfg);
        build(cfg, n, pow2(L - j), false, b);
        const auto e = encode(fd, add(pow2(L), pow2(L - j)));
        if (!b.ok() || !e) break;
        scan.cases.push_back(b.done(fmt::format("{} ones + 2^{}", n, L - j)));
        scan.at.emplace_back(n, j);
        scan.expect.push_back(*e);
      }
    }
    return scan;
  }

  // The output's fraction bits (the largest j exact from j = 1 on, over every n) and the n that
  // showed them; every case goes to `observations`.
  static std::pair<int, int> output_bits(const MmaConfig& cfg, const Scan& scan, const std::vector<std::uint64_t>& out,
                                         std::vector<audit::Observation>& observations) {
    std::map<int, int> kept;  // n -> largest j exact (from j = 1 on)
    std::map<int, bool> broken;
    for (std::size_t i = 0; i < scan.cases.size(); ++i) {
      observations.push_back(observation(cfg, scan.cases[i], out[i], {{"exact", scan.expect[i]}}));
      const auto [n, j] = scan.at[i];
      if (broken[n]) continue;
      if (out[i] == scan.expect[i])
        kept[n] = j;
      else
        broken[n] = true;
    }
    int ob = 0, ob_n = 1;
    for (auto [n, j] : kept)
      if (j > ob) ob = j, ob_n = n;
    return {ob, ob_n};
  }

  // Tables I and II: +-(n + r u) for r u of 0.75u, 0.25u, 0.5u and 1.5u, u = 2^(L - ob).
  static void table_cases(const MmaConfig& cfg, int n, int ob, std::vector<DotCase>& cases, std::vector<Exact>& exact) {
    const int L = model::msb(std::uint64_t(n));
    struct Entry {
      const char* text;
      std::uint64_t r;  // r * 2^(L - ob - 2): 1 = 0.25u, 2 = 0.5u, 3 = 0.75u, 6 = 1.5u
    };
    static constexpr Entry entries[] = {{"0.75u", 3}, {"0.25u", 1}, {"0.5u", 2}, {"1.5u", 6}};
    for (const Entry& e : entries)
      for (bool negative : {false, true}) {
        CaseBuilder b(cfg);
        build(cfg, n, Exact{false, e.r, L - ob - 2}, negative, b);
        if (!b.ok()) continue;
        const Exact v = add(Exact{negative, std::uint64_t(n), 0}, Exact{negative, e.r, L - ob - 2});
        cases.push_back(b.done(fmt::format("{}({} + {})", negative ? "-" : "", n, e.text)));
        exact.push_back(v);
      }
  }

  // The rounding modes whose outputs of the exact values match the device's.
  static void judge(const MmaConfig& cfg, int n, int ob, int ob_n, const std::vector<DotCase>& cases,
                    const std::vector<Exact>& exact, const std::vector<std::uint64_t>& outs, audit::Finding& f) {
    const Format& fd = *cfg.d;
    const int L = model::msb(std::uint64_t(n));
    std::vector<Reference> refs;
    for (model::Rounding r : model::all_roundings) {
      Reference ref{std::string(model::name(r)), {}};
      for (const Exact& v : exact) ref.outputs.push_back(round_to(fd, ob, r, v));
      refs.push_back(std::move(ref));
    }
    const std::vector<std::string> modes = matching(outs, refs);
    f.parameters["rounding"] = modes;
    f.parameters["ones"] = n;
    std::vector<std::string> rows;
    for (std::size_t i = 0; i < cases.size(); ++i) rows.push_back(cases[i].note + " -> " + show(fd, outs[i]));
    f.message = fmt::format("u = 2^{} (the output keeps {} fraction bits{}); {}", L - ob, ob,
                            ob_n > 1 ? fmt::format(", seen on sums of {} ones", ob_n) : "", join(rows, "; ", "; "));
    if (modes.empty()) {
      f.verdict = fmt::format("ROUNDING: no rounding mode of tables I and II gives the output (u = 2^{})", L - ob);
      return;
    }
    f.verdict = fmt::format("ROUNDING: the output keeps {} fraction bits, rounded {}", ob,
                            describe(*model::find_rounding(modes.front())));
    if (modes.size() > 1) f.verdict += " (these cases do not tell apart " + join(modes, ", ", " or ") + ")";
  }
};

}  // namespace

void add_mmasim_probes(std::vector<const audit::MmaProbe*>& out) {
  static const ElementsProbe elements;
  static const TreeProbe tree;
  static const PrecisionProbe precision;
  static const RoundingProbe rounding;
  static const FloorProbe floor;
  static const CAlignmentProbe c_alignment;
  out.push_back(&elements);
  out.push_back(&tree);
  out.push_back(&precision);
  out.push_back(&rounding);
  out.push_back(&floor);
  out.push_back(&c_alignment);
}

}  // namespace gp::mma
