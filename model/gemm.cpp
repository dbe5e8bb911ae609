#include "model/gemm.hpp"

#include <algorithm>
#include <thread>
#include <vector>

#include "model/fda_fast.hpp"

namespace gp::model {

namespace {

// Runs rows(r0, r1) over [0, M), split among the worker threads.
template <class Rows>
void split_rows(const GemmOperands& g, unsigned threads, const Rows& rows) {
  const auto t = unsigned(std::min<std::size_t>(threads, std::max<std::size_t>(1, g.m)));
  if (t <= 1 || g.m * g.n * g.k < 4096) {
    rows(0, g.m);
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < t; ++w) pool.emplace_back(rows, g.m * w / t, g.m * (w + 1) / t);
  for (std::thread& th : pool) th.join();
}

// Any configuration: Dot element by element, the first evaluation with c's format, later ones
// with d's.
void gemm_dot(const DotConfig& cfg, const GemmOperands& g, int kstep, std::span<std::uint64_t> d, unsigned threads) {
  DotConfig next_cfg = cfg;
  next_cfg.c = cfg.d;
  const Dot first(cfg), next(next_cfg);
  const auto uk = std::size_t(kstep);
  const auto per_step = std::size_t(scale_count(cfg, kstep));
  const std::size_t S = per_step * (g.k / uk);
  split_rows(g, threads, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t i = r0; i < r1; ++i)
      for (std::size_t j = 0; j < g.n; ++j) {
        std::uint64_t acc = g.c[i * g.n + j];
        for (std::size_t t = 0; t < g.k / uk; ++t) {
          std::span<const std::uint64_t> sa, sb;
          if (cfg.scale && !g.sa.empty()) {
            sa = g.sa.subspan(i * S + t * per_step, per_step);
            sb = g.sbt.subspan(j * S + t * per_step, per_step);
          }
          acc = (t == 0 ? first : next)(acc, g.a.subspan(i * g.k + t * uk, uk), g.bt.subspan(j * g.k + t * uk, uk), sa,
                                        sb);
        }
        d[i * g.n + j] = acc;
      }
  });
}

// The FDA fast path over whole matrices (a and b in format F): A's rows and B's columns decoded
// once (not once per output element), and kLanes output columns evaluated together, the lanes
// being what the compiler vectorizes. Each block is fda_fast_block's steps (model/fda_fast.hpp)
// lane by lane: products and the largest exponent, c and the alignment per lane, the aligned sum,
// the rounding per lane. A lane whose block holds an infinity or NaN, or whose c is not finite,
// takes Dot's block function for that element.
template <const Format& F>
class FdaGemm {
 public:
  static constexpr int kLanes = 16;

  FdaGemm(const DotConfig& cfg, const GemmOperands& g, int kstep)
      : dot_(cfg),
        g_(g),
        kstep_(kstep),
        block_(std::min(effective_block(cfg, kstep), kMaxDotK)),
        lp_(std::max(cfg.F - P::m, 0)),
        tiles_((g.n + kLanes - 1) / kLanes) {
    // B by tiles of kLanes columns: (k, j) at ((j / kLanes) * K + k) * kLanes + j % kLanes, so that
    // a tile's lanes are contiguous. The padding lanes hold +0 (never special, never read back).
    b_.resize(tiles_ * g.k * kLanes);
    b_specials_.assign(tiles_ * (g.k + 1) * kLanes, 0);
    for (std::size_t j = 0; j < g.n; ++j)
      for (std::size_t k = 0; k < g.k; ++k) {
        const fda_fast::Operand o = fda_fast::decode<F>(g.bt[j * g.k + k]);
        b_.set(((j / kLanes) * g.k + k) * kLanes + j % kLanes, o);
        const std::size_t x = ((j / kLanes) * (g.k + 1) + k) * kLanes + j % kLanes;
        b_specials_[x + kLanes] = b_specials_[x] + o.special;
      }
  }

  void rows(std::size_t r0, std::size_t r1, std::span<std::uint64_t> d) const {
    if (r0 >= r1) return;
    Decoded a;
    a.resize((r1 - r0) * g_.k);
    std::vector<std::uint32_t> a_specials((r1 - r0) * (g_.k + 1), 0);
    for (std::size_t r = 0; r < r1 - r0; ++r)
      for (std::size_t k = 0; k < g_.k; ++k) {
        const fda_fast::Operand o = fda_fast::decode<F>(g_.a[(r0 + r) * g_.k + k]);
        a.set(r * g_.k + k, o);
        a_specials[r * (g_.k + 1) + k + 1] = a_specials[r * (g_.k + 1) + k] + o.special;
      }
    // Tile-major: one tile of B (K x kLanes) stays in cache while the rows pass over it.
    for (std::size_t tile = 0; tile < tiles_; ++tile)
      for (std::size_t i = r0; i < r1; ++i)
        element_tile(a, a_specials.data() + (i - r0) * (g_.k + 1), i - r0, i, tile, d);
  }

 private:
  using P = fda_fast::Pair<F, F>;

  // Decoded operands, one array per field, every field 32 bits wide: the loops over lanes then
  // vectorize at the full vector width (narrower fields made GCC pick quarter-width vectors).
  // Specials are counted apart, as running counts along K (one more entry than K per row or
  // lane): a block holds one when the counts at its ends differ.
  struct Decoded {
    std::vector<std::uint32_t> sig, neg;
    std::vector<std::int32_t> exp;
    void resize(std::size_t n) {
      sig.assign(n, 0);
      exp.assign(n, 1);
      neg.assign(n, 0);
    }
    void set(std::size_t x, const fda_fast::Operand& o) {
      sig[x] = o.sig;
      exp[x] = o.exp;
      neg[x] = o.neg;
    }
  };

  // Output row i (decoded row ia of a), columns of `tile`, over all of K.
  void element_tile(const Decoded& a, const std::uint32_t* a_specials, std::size_t ia, std::size_t i, std::size_t tile,
                    std::span<std::uint64_t> d) const {
    const std::size_t j0 = tile * kLanes;
    const int lanes = int(std::min<std::size_t>(kLanes, g_.n - j0));
    std::uint64_t acc[kLanes] = {};
    for (int l = 0; l < lanes; ++l) acc[l] = g_.c[i * g_.n + j0 + std::size_t(l)];
    const Format* cf = dot_.config().c;
    for (std::size_t k0 = 0; k0 < g_.k; k0 += std::size_t(kstep_))
      for (int b0 = 0; b0 < kstep_; b0 += block_) {
        const int n = std::min(block_, kstep_ - b0);
        block(*cf, a, a_specials, ia, i, tile, k0 + std::size_t(b0), n, lanes, acc);
        cf = dot_.config().d;
      }
    for (int l = 0; l < lanes; ++l) d[i * g_.n + j0 + std::size_t(l)] = acc[l];
  }

  // One block of n products, from k, for the tile's lanes; acc: c in, d out.
  void block(const Format& cf, const Decoded& a, const std::uint32_t* a_specials, std::size_t ia, std::size_t i,
             std::size_t tile, std::size_t k, int n, int lanes, std::uint64_t* acc) const {
    const std::size_t ak = ia * g_.k + k, bk = (tile * g_.k + k) * kLanes;
    // Products: the largest biased exponent of the nonzero ones.
    alignas(64) std::int32_t pmax[kLanes];
    std::fill_n(pmax, kLanes, fda_fast::kNoProduct);
    for (int kk = 0; kk < n; ++kk) {
      const std::uint32_t as = a.sig[ak + kk];
      const std::int32_t ae = a.exp[ak + kk];
      const std::size_t x = bk + std::size_t(kk) * kLanes;
      for (int l = 0; l < kLanes; ++l) {
        // (the exponent loaded whatever p: a load under the condition does not vectorize)
        const std::uint32_t p = as * b_.sig[x + l];
        const std::int32_t e = ae + b_.exp[x + l];
        pmax[l] = std::max(pmax[l], p != 0 ? e : fda_fast::kNoProduct);
      }
    }
    const std::uint32_t a_special = a_specials[k + std::size_t(n)] != a_specials[k];
    const std::uint32_t* bs = b_specials_.data() + (tile * (g_.k + 1) + k) * kLanes;
    // c and the alignment, lane by lane (padding lanes too: their results are not read).
    alignas(64) std::int32_t top[kLanes];
    alignas(64) std::int64_t sum[kLanes], q[kLanes];
    alignas(64) std::uint64_t slow[kLanes], empty[kLanes], c_neg[kLanes];
    const fda_fast::AddendFormat cfa(cf);
    for (int l = 0; l < kLanes; ++l) {
      const fda_fast::Addend c = fda_fast::decode_addend(cfa, acc[l]);
      const fda_fast::Alignment al = fda_fast::alignment<P>(dot_.config(), c, pmax[l]);
      slow[l] = a_special | std::uint64_t(bs[std::size_t(n) * kLanes + l] != bs[l]) | c.special;
      empty[l] = (pmax[l] == fda_fast::kNoProduct) & c.zero;
      c_neg[l] = c.neg;
      top[l] = al.top;
      q[l] = al.q;
      sum[l] = fda_fast::c_term(c, al);
    }
    if (P::template fits<std::uint32_t>(lp_, n))
      add_products<std::uint32_t>(a, ak, bk, n, top, sum);
    else
      add_products<std::uint64_t>(a, ak, bk, n, top, sum);
    // The rounding's common case lane by lane, then the lanes it leaves (rare) one by one.
    alignas(64) std::uint64_t out[kLanes], rounded[kLanes];
    std::uint64_t all_rounded = 1;  // every lane read back rounded here
    for (int l = 0; l < kLanes; ++l) {
      const std::uint64_t neg = std::uint64_t(sum[l]) >> 63, mag = std::uint64_t(sum[l] < 0 ? -sum[l] : sum[l]);
      rounded[l] = fast_rounding_.round(neg, mag, q[l], out[l]);
      all_rounded &= (rounded[l] & (slow[l] ^ 1) & (empty[l] ^ 1)) | std::uint64_t(l >= lanes);
    }
    if (all_rounded) {
      std::copy_n(out, kLanes, acc);
      return;
    }
    for (int l = 0; l < lanes; ++l) {
      if (slow[l]) [[unlikely]] {
        const std::size_t j = tile * kLanes + std::size_t(l);
        acc[l] = dot_.block(cf, acc[l], g_.a.data() + i * g_.k + k, g_.bt.data() + j * g_.k + k, n);
      } else if (empty[l]) {
        acc[l] = fda_fast::zero_result(dot_, c_neg[l], every_product_negative(a, ak, bk, n, l));
      } else {
        acc[l] = rounded[l] ? out[l] : fda_fast::result(dot_, fast_rounding_, sum[l], int(q[l]));
      }
    }
  }

  // Whether the products of lane l all have a negative sign (for a block whose products are all
  // zeros: whether they are all -0).
  bool every_product_negative(const Decoded& a, std::size_t ak, std::size_t bk, int n, int l) const {
    for (int kk = 0; kk < n; ++kk)
      if ((a.neg[ak + kk] ^ b_.neg[bk + std::size_t(kk) * kLanes + l]) == 0) return false;
    return true;
  }

  // The aligned products' exact sum, added to sum lane by lane.
  template <class T>
  void add_products(const Decoded& a, std::size_t ak, std::size_t bk, int n, const std::int32_t* top,
                    std::int64_t* sum) const {
    alignas(64) T pos[kLanes] = {}, neg[kLanes] = {};
    for (int kk = 0; kk < n; ++kk) {
      const std::uint32_t as = a.sig[ak + kk], an = a.neg[ak + kk];
      const std::int32_t ae = a.exp[ak + kk];
      const std::size_t x = bk + std::size_t(kk) * kLanes;
      for (int l = 0; l < kLanes; ++l) {
        const T v = fda_fast::aligned<T>(as * b_.sig[x + l], ae + b_.exp[x + l], top[l], lp_);
        const T m = T(0) - T(an ^ b_.neg[x + l]);
        pos[l] += v & ~m;
        neg[l] += v & m;
      }
    }
    for (int l = 0; l < kLanes; ++l) sum[l] += std::int64_t(pos[l]) - std::int64_t(neg[l]);
  }

  Dot dot_;
  fda_fast::FastRounding fast_rounding_{dot_};
  const GemmOperands& g_;
  int kstep_, block_, lp_;
  std::size_t tiles_;
  Decoded b_;
  std::vector<std::uint32_t> b_specials_;  // by tiles as b_, K + 1 running counts per lane
};

}  // namespace

void gemm(const DotConfig& cfg, const GemmOperands& g, std::span<std::uint64_t> d, unsigned threads) {
  const int kstep = g.kstep > 0 ? g.kstep : int(g.k);
  const bool fast = g.k > 0 && fda_fast::with_format(cfg, [&]<const Format & F>() {
                      const FdaGemm<F> kernel(cfg, g, kstep);
                      split_rows(g, threads, [&](std::size_t r0, std::size_t r1) { kernel.rows(r0, r1, d); });
                    });
  if (!fast) gemm_dot(cfg, g, kstep, d, threads);
}

}  // namespace gp::model
