#include "tests_mma/layout.hpp"

#include <fmt/format.h>

#include <optional>
#include <random>
#include <vector>

#include "tests_mma/support.hpp"

namespace gp::mma {

namespace {

// f's bits for v when v is a normal number of f (no unit flushes it, none rounds it).
std::optional<std::uint64_t> normal_bits(const Format& f, Exact v) {
  if (v.zero() || lead(v) < 1 - f.bias) return std::nullopt;
  return encode(f, v);
}

Exact times(Exact x, Exact y) { return {x.neg != y.neg, x.sig * y.sig, x.exp + y.exp}; }

// The values a check tile draws from: ±2^e near 1. Powers of two alone, so that a product is exact
// even in a unit that rounds its output to fewer fraction bits than d has (Ada's 13; the model's
// units, as few as none).
struct Letters {
  std::vector<Exact> a, b, c;  // every a * b normal in d, every c normal in c and d
};

std::vector<Exact> letters(int range, bool signs) {
  std::vector<Exact> v;
  for (int e = -range; e <= range; ++e)
    for (const bool n : {false, true})
      if (signs || !n) v.push_back(pow2(e, n));
  return v;
}

std::vector<Exact> normal_in(const std::vector<Exact>& v, const Format& f, const Format* also = nullptr) {
  std::vector<Exact> out;
  for (const Exact& x : v)
    if (normal_bits(f, x) && (!also || normal_bits(*also, x))) out.push_back(x);
  return out;
}

// The widest range of exponents the formats hold.
std::optional<Letters> choose_letters(const MmaConfig& cfg) {
  const bool signs = cfg.a->has_sign() && cfg.b->has_sign() && cfg.c->has_sign() && cfg.d->has_sign();
  for (int range = 3; range >= 0; --range) {
    const std::vector<Exact> all = letters(range, signs);
    Letters l{normal_in(all, *cfg.a), normal_in(all, *cfg.b), normal_in(all, *cfg.c, cfg.d)};
    if (l.a.empty() || l.b.empty() || l.c.empty()) continue;
    bool products = true;
    for (const Exact& x : l.a)
      for (const Exact& y : l.b) products = products && normal_bits(*cfg.d, times(x, y)).has_value();
    if (products) return l;
  }
  return std::nullopt;
}

// The check's tiles: per round, K tiles of one product per element of D (row i of A takes its
// product from column (i + round step) mod K) and one tile of C alone; what each element of D
// should be, and why.
struct LayoutTiles {
  static constexpr std::size_t kRounds = 2;
  std::size_t tiles = 0;
  std::vector<std::uint64_t> a, b, c;
  std::vector<Exact> expected;
  std::vector<std::string> why;  // what each output element is, for a failure
};

LayoutTiles build_layout_tiles(const MmaConfig& cfg, const Letters& letters, std::uint64_t seed) {
  const std::size_t M = std::size_t(cfg.m), N = std::size_t(cfg.n), K = std::size_t(cfg.k);
  LayoutTiles l;
  l.tiles = LayoutTiles::kRounds * (K + 1);  // per round: K one-product tiles, one C tile
  const std::uint64_t za = model::zero(*cfg.a, false).bits, zb = model::zero(*cfg.b, false).bits,
                      zc = model::zero(*cfg.c, false).bits;
  l.a.assign(l.tiles * M * K, za);
  l.b.assign(l.tiles * K * N, zb);
  l.c.assign(l.tiles * M * N, zc);
  l.expected.resize(l.tiles * M * N);
  l.why.resize(l.tiles * M * N);
  std::mt19937_64 rng(seed ^ 0x1A7017C8ECULL);
  auto draw = [&](const std::vector<Exact>& from) { return from[rng() % from.size()]; };
  for (std::size_t t = 0; t < l.tiles; ++t) {
    const std::size_t A0 = t * M * K, B0 = t * K * N, C0 = t * M * N, step = t % (K + 1);
    if (step == K) {
      for (std::size_t e = 0; e < M * N; ++e) {
        const Exact v = draw(letters.c);
        l.c[C0 + e] = *encode(*cfg.c, v);
        l.expected[C0 + e] = v;
        l.why[C0 + e] = fmt::format("C[{}][{}] = {}", e / N, e % N, show(v));
      }
      continue;
    }
    std::vector<Exact> bv(K * N);
    for (std::size_t e = 0; e < K * N; ++e) {
      bv[e] = draw(letters.b);
      l.b[B0 + e] = *encode(*cfg.b, bv[e]);
    }
    for (std::size_t i = 0; i < M; ++i) {
      const std::size_t k = (i + step) % K;
      const Exact x = draw(letters.a);
      l.a[A0 + i * K + k] = *encode(*cfg.a, x);
      for (std::size_t j = 0; j < N; ++j) {
        l.expected[C0 + i * N + j] = times(x, bv[k * N + j]);
        // C is a zero of the product's sign: a unit that frames its sum by c's sign (AMD's
        // one's-complement adder, ocfda) would otherwise invert a lone negative product inexactly.
        l.c[C0 + i * N + j] = model::zero(*cfg.c, l.expected[C0 + i * N + j].neg && cfg.c->has_negative_zero()).bits;
        l.why[C0 + i * N + j] =
            fmt::format("A[{}][{}] * B[{}][{}] = {} * {}", i, k, k, j, show(x), show(bv[k * N + j]));
      }
    }
  }
  return l;
}

// Element e of tile t of D that is not `want`, as the dot product it is: row i of A, column j of
// B, C[i][j].
audit::Observation layout_observation(const MmaConfig& cfg, const LayoutTiles& l, std::size_t t, std::size_t e,
                                      std::uint64_t output, std::uint64_t want) {
  const std::size_t M = std::size_t(cfg.m), N = std::size_t(cfg.n), K = std::size_t(cfg.k);
  const std::size_t at = t * M * N + e;
  const std::size_t i = e / N, j = e % N;
  DotCase x;
  x.c = l.c[at];
  for (std::size_t k = 0; k < K; ++k) {
    x.a.push_back(l.a[t * M * K + i * K + k]);
    x.b.push_back(l.b[t * K * N + k * N + j]);
  }
  audit::Observation o = observation(cfg, x, output, {{"layout", want}});
  o.note = fmt::format("tile {}: D[{}][{}] should be {}", t, i, j, l.why[at]);
  return o;
}

// The finding of D as the device returned it for the tiles.
audit::Finding judge_layout(const MmaConfig& cfg, const LayoutTiles& l, const std::vector<std::uint64_t>& d) {
  const std::size_t M = std::size_t(cfg.m), N = std::size_t(cfg.n);
  audit::Finding f;
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t t = 0; t < l.tiles; ++t)
    for (std::size_t e = 0; e < M * N; ++e) {
      const std::size_t at = t * M * N + e;
      const std::uint64_t want = *encode(*cfg.d, l.expected[at]);
      if (d[at] == want) continue;
      if (wrong++ == 0)
        first = fmt::format("tile {}, D[{}][{}] is {}, expected {} ({})", t, e / N, e % N, show(*cfg.d, d[at]),
                            show(l.expected[at]), l.why[at]);
      if (f.observations.size() < 8) f.observations.push_back(layout_observation(cfg, l, t, e, d[at], want));
    }
  f.parameters = {{"tiles", l.tiles}, {"wrong", wrong}, {"elements", l.c.size()}};
  if (wrong > 0) {
    f.status = audit::Status::error;
    f.verdict = "error: layout check failed";
    f.message = fmt::format("layout check failed: {} ({} of {} elements wrong)", first, wrong, l.c.size());
    return f;
  }
  f.verdict = "A, B, C and D are where the backend puts them";
  f.message = fmt::format(
      "{} tiles of exact values (one product or C alone per element of D) came back bit for bit: every element of "
      "A, B and C reached the unit, and D was read back, in the intended layout",
      l.tiles);
  return f;
}

}  // namespace

audit::Finding LayoutCheck::run(backends::Device& device, const MmaConfig& cfg, const audit::ProbeContext& ctx) const {
  if (!usable(cfg)) return audit::unsupported("the layout check needs formats the model knows");
  if (!cfg.a->has_zero() || !cfg.b->has_zero()) return audit::unsupported("A or B has no zero to leave elements empty");
  const std::optional<Letters> letters = choose_letters(cfg);
  if (!letters) return audit::unsupported("the formats hold no exact products to check the layout with");
  const LayoutTiles l = build_layout_tiles(cfg, *letters, ctx.seed);
  auto d = device.mma({&cfg, l.a, l.b, l.c});
  if (!d) return audit::failed(d.error().retold("the layout check could not run: " + d.error().message));
  if (d->size() != l.c.size())
    return audit::failed(fmt::format("layout check failed: the device returned {} elements for {} tiles of {}x{}",
                                     d->size(), l.tiles, cfg.m, cfg.n));
  return judge_layout(cfg, l, *d);
}

}  // namespace gp::mma
