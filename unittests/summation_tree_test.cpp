// The summation-tree family (model/summation_tree.hpp) against oracles that are not the model:
// the host FPU for chains of binary32 and binary16 additions and for chains of fmaf, MPFR for one
// fused node over binary64 products far apart (the model's multiword path). Then the text form,
// and the shape's recovery from MMA-Sim's X, -X, y counts (tests_mma/tree_shape.hpp) on random trees.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpfr.h>

#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "model/mma_algorithms.hpp"
#include "tests_mma/tree_shape.hpp"

namespace gp::model {
namespace {

std::vector<int> chain(int k, bool c_first) {
  std::vector<int> v;
  if (c_first) v.push_back(k);
  for (int i = 0; i < k; ++i) v.push_back(i);
  if (!c_first) v.push_back(k);
  return v;
}

DotConfig tree_config(const Format& ab, const Format& c, const Format& d, SummationTree t) {
  DotConfig cfg = default_dot_config(MmaAlgorithm::tree, ab, ab, c, d);
  cfg.tree = std::make_shared<const SummationTree>(std::move(t));
  EXPECT_EQ(check(cfg), "");
  return cfg;
}

bool same_or_both_nan(float x, float y) {
  return std::bit_cast<std::uint32_t>(x) == std::bit_cast<std::uint32_t>(y) || (std::isnan(x) && std::isnan(y));
}

// binary16 bit patterns of every kind: normal, subnormal, zero, inf, NaN.
std::uint16_t half_bits(std::mt19937_64& rng) {
  const std::uint64_t r = rng();
  switch (r % 16) {
    case 0: return std::uint16_t(r >> 8 & 0x83FF);                                                // zero or subnormal
    case 1: return std::uint16_t(0x7C00 | (r >> 8 & 0x8000));                                     // infinity
    default: return std::uint16_t(0x3000 + (r >> 8 & 0x1FFF)) ^ std::uint16_t(r >> 30 & 0x8000);  // around 1
  }
}

TEST(SummationTree, ChainOfBinary32AdditionsIsTheHostFpu) {
  // Lavapipe's f16 x f16 + f32: exact products (22 bits fit binary32), added one after the other
  // from p0, c last.
  constexpr int K = 8;
  const Dot dot(tree_config(binary16, binary32, binary32, sequential_tree(K, chain(K, false))));
  std::mt19937_64 rng(1);
  std::vector<std::uint64_t> a(K), b(K);
  for (int n = 0; n < 200000; ++n) {
    for (int k = 0; k < K; ++k) {
      a[std::size_t(k)] = half_bits(rng);
      b[std::size_t(k)] = half_bits(rng);
    }
    const auto c = std::uint32_t(rng());
    float acc = 0;
    for (int k = 0; k < K; ++k) {
      const float p = float(std::bit_cast<_Float16>(std::uint16_t(a[std::size_t(k)]))) *
                      float(std::bit_cast<_Float16>(std::uint16_t(b[std::size_t(k)])));
      acc = k == 0 ? p : acc + p;
    }
    acc = acc + std::bit_cast<float>(c);
    const float got = std::bit_cast<float>(std::uint32_t(dot(c, a, b)));
    ASSERT_TRUE(same_or_both_nan(got, acc)) << n << ": model " << got << " host " << acc;
  }
}

TEST(SummationTree, ChainOfBinary16RoundedProductsIsTheHostFpu) {
  // Lavapipe's f16 x f16 + f16: products rounded to binary16, binary16 additions (the host's
  // _Float16 operations round each result once: binary32 holds a sum or product of two exactly
  // enough for that).
  constexpr int K = 8;
  SummationTree t = sequential_tree(K, chain(K, false));
  t.product_format = &binary16;
  const Dot dot(tree_config(binary16, binary16, binary16, t));
  std::mt19937_64 rng(2);
  std::vector<std::uint64_t> a(K), b(K);
  for (int n = 0; n < 200000; ++n) {
    for (int k = 0; k < K; ++k) {
      a[std::size_t(k)] = half_bits(rng);
      b[std::size_t(k)] = half_bits(rng);
    }
    const std::uint16_t c = half_bits(rng);
    // Each result stored as binary16 through a volatile: GCC keeps _Float16 values in binary32
    // otherwise (excess precision), even across casts.
    const auto wide = [](std::uint64_t h) { return float(std::bit_cast<_Float16>(std::uint16_t(h))); };
    const auto round16 = [](float x) {
      volatile _Float16 stored = static_cast<_Float16>(x);
      const _Float16 h = stored;
      return std::bit_cast<std::uint16_t>(h);
    };
    std::uint16_t acc = 0;
    for (int k = 0; k < K; ++k) {
      const std::uint16_t p = round16(wide(a[std::size_t(k)]) * wide(b[std::size_t(k)]));
      acc = k == 0 ? p : round16(wide(acc) + wide(p));
    }
    acc = round16(wide(acc) + wide(c));
    const auto got = std::uint16_t(dot(c, a, b));
    const std::uint16_t want = acc;
    const bool nans = (got & 0x7C00) == 0x7C00 && (got & 0x3FF) && (want & 0x7C00) == 0x7C00 && (want & 0x3FF);
    ASSERT_TRUE(got == want || nans) << n << std::hex << ": model " << got << " host " << want;
  }
}

TEST(SummationTree, ChainFromCWithExactProductsIsAnFmaChain) {
  constexpr int K = 4;
  const Dot dot(tree_config(binary32, binary32, binary32, sequential_tree(K, chain(K, true))));
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> a(K), b(K);
  for (int n = 0; n < 200000; ++n) {
    const auto draw = [&] {  // exponents near 1, some far down (subnormal products), signs random
      const std::uint64_t r = rng();
      return std::uint32_t((r % 8 ? 0x3C000000u + (r >> 8 & 0x07FFFFFF) : 0x00800000u + (r >> 8 & 0x0FFFFFFF)) ^
                           (r >> 40 & 1) << 31);
    };
    for (int k = 0; k < K; ++k) {
      a[std::size_t(k)] = draw();
      b[std::size_t(k)] = draw();
    }
    const std::uint32_t c = draw();
    float acc = std::bit_cast<float>(c);
    for (int k = 0; k < K; ++k)
      acc = std::fmaf(std::bit_cast<float>(std::uint32_t(a[std::size_t(k)])),
                      std::bit_cast<float>(std::uint32_t(b[std::size_t(k)])), acc);
    const float got = std::bit_cast<float>(std::uint32_t(dot(c, a, b)));
    ASSERT_TRUE(same_or_both_nan(got, acc)) << n << ": model " << got << " host " << acc;
  }
}

TEST(SummationTree, OneFusedNodeRoundsTheExactSumOfFarApartTermsOnce) {
  // binary64 products 2^-2000 .. 2^2000 apart, cancellations included: the exact sum from MPFR
  // at 4500 bits, rounded to binary64 in four modes (mpfr_get_d rounds subnormals correctly).
  constexpr int K = 4;
  const std::pair<Rounding, mpfr_rnd_t> modes[] = {
      {Rounding::rne, MPFR_RNDN}, {Rounding::rz, MPFR_RNDZ}, {Rounding::ru, MPFR_RNDU}, {Rounding::rd, MPFR_RNDD}};
  std::mt19937_64 rng(4);
  mpfr_t sum, term;
  mpfr_init2(sum, 4500);
  mpfr_init2(term, 120);
  std::vector<std::uint64_t> a(K), b(K);
  for (auto [mode, rnd] : modes) {
    SummationTree t = *parse_summation_tree("p0+p1+p2+p3+c").tree;
    t.sum_rounding = mode;
    const Dot dot(tree_config(binary64, binary64, binary64, t));
    for (int n = 0; n < 20000; ++n) {
      const auto draw = [&] {
        const double m = std::ldexp(double(rng() >> 11), -53) + 0.5;
        return std::ldexp(rng() % 2 ? -m : m, int(rng() % 2000) - 1000);
      };
      for (int k = 0; k < K; ++k) {
        a[std::size_t(k)] = std::bit_cast<std::uint64_t>(draw());
        b[std::size_t(k)] = std::bit_cast<std::uint64_t>(draw());
      }
      if (n % 3 == 0) {  // p1 = -p0: what is left is far below
        a[1] = a[0] ^ (std::uint64_t{1} << 63);
        b[1] = b[0];
      }
      const double c = n % 5 == 0 ? std::ldexp(1.0, -1074) : draw();
      mpfr_set_d(sum, c, MPFR_RNDN);
      for (int k = 0; k < K; ++k) {
        mpfr_set_d(term, std::bit_cast<double>(a[std::size_t(k)]), MPFR_RNDN);
        mpfr_mul_d(term, term, std::bit_cast<double>(b[std::size_t(k)]), MPFR_RNDN);  // exact: 106 bits fit 120
        mpfr_add(sum, sum, term, MPFR_RNDN);                                          // exact at 4500 bits
      }
      const double want = mpfr_zero_p(sum) ? (mode == Rounding::rd ? -0.0 : 0.0) : mpfr_get_d(sum, rnd);
      const double got = std::bit_cast<double>(dot(std::bit_cast<std::uint64_t>(c), a, b));
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(want))
          << name(mode) << " " << n << ": model " << got << " MPFR " << want;
    }
  }
  mpfr_clear(sum);
  mpfr_clear(term);
}

TEST(SummationTree, TextFormRoundTripsAndRefusesMalformedTrees) {
  for (const char* s :
       {"((p0+p1)+p2)+c", "(p0+p1+p2)+c", "(p0+c)+(p1+p2)", "(p0@binary16+p1)@binary32:rz+p2+c", "((p1+p0)+c)+p2"}) {
    const TreeParse p = parse_summation_tree(s);
    ASSERT_TRUE(p.tree) << s << ": " << p.error;
    EXPECT_EQ(p.tree->k, 3) << s;
    EXPECT_EQ(p.tree->text(), s);
    EXPECT_EQ(parse_summation_tree(p.tree->text(), 3).tree->text(), s);
  }
  EXPECT_TRUE(parse_summation_tree("((p0+p1)+p2)+c").tree->sequential());
  EXPECT_FALSE(parse_summation_tree("(p0+c)+(p1+p2)").tree->sequential());
  EXPECT_FALSE(parse_summation_tree("(p0+p1+p2)+c").tree->binary());
  for (const auto& [s, why] :
       std::vector<std::pair<const char*, const char*>>{{"p0+p1", "c is missing"},
                                                        {"p0+p1+p1+c", "appears twice"},
                                                        {"(p0)+p1+c", "two terms"},
                                                        {"p0+p1+c@binary32", "takes no annotation"},
                                                        {"p0+p1@fp99+c", "unknown format"},
                                                        {"p0+p1@binary16:rx+c", "unknown rounding"},
                                                        {"p0+(p1+c", "')' expected"},
                                                        {"p0+q1+c", "unknown leaf"}}) {
    const TreeParse p = parse_summation_tree(s);
    EXPECT_FALSE(p.tree) << s;
    EXPECT_NE(p.error.find(why), std::string::npos) << s << ": " << p.error;
  }
  EXPECT_NE(parse_summation_tree("p0+p3+c", 2).error.find("beyond K"), std::string::npos);
}

// The reports' renderings (audit/report/report.cpp): a chain, a balanced pairwise tree, a fused node, and
// annotations beside the labels.
TEST(SummationTree, MermaidAndIndentedRenderings) {
  const SummationTree chain3 = *parse_summation_tree("((p0+p1)+p2)+c", 3).tree;
  EXPECT_EQ(chain3.mermaid(),
            "graph TD\n"
            "  s0[\"+\"]\n  p0 --> s0\n  p1 --> s0\n"
            "  s1[\"+\"]\n  s0 --> s1\n  p2 --> s1\n"
            "  s2[\"+\"]\n  s1 --> s2\n  c --> s2\n");
  EXPECT_EQ(chain3.indented(), "+\n  +\n    +\n      p0\n      p1\n    p2\n  c\n");
  const SummationTree pairwise = *parse_summation_tree("((p0+p1)+(p2+p3))+c", 4).tree;
  EXPECT_EQ(pairwise.mermaid(),
            "graph TD\n"
            "  s0[\"+\"]\n  p0 --> s0\n  p1 --> s0\n"
            "  s1[\"+\"]\n  p2 --> s1\n  p3 --> s1\n"
            "  s2[\"+\"]\n  s0 --> s2\n  s1 --> s2\n"
            "  s3[\"+\"]\n  s2 --> s3\n  c --> s3\n");
  EXPECT_EQ(pairwise.indented(), "+\n  +\n    +\n      p0\n      p1\n    +\n      p2\n      p3\n  c\n");
  EXPECT_EQ(parse_summation_tree("c+(p0+p1+p2)", 3).tree->indented(), "+\n  c\n  +\n    p0\n    p1\n    p2\n");
  const SummationTree annotated = *parse_summation_tree("(p0@binary16+p1)@binary32:rz+c", 2).tree;
  EXPECT_EQ(annotated.mermaid(),
            "graph TD\n  p0[\"p0@binary16\"]\n"
            "  s0[\"+@binary32:rz\"]\n  p0 --> s0\n  p1 --> s0\n"
            "  s1[\"+\"]\n  s0 --> s1\n  c --> s1\n");
  EXPECT_EQ(annotated.indented(), "+\n  +@binary32:rz\n    p0@binary16\n    p1\n  c\n");
  // The deepest chain renders without recursion: its first product 1024 levels down.
  const std::string deep = sequential_tree(kMaxDotK, chain(kMaxDotK, false)).indented();
  EXPECT_NE(deep.find("\n" + std::string(2 * kMaxDotK, ' ') + "p0\n"), std::string::npos);
}

// Graphviz's DOT beside the Mermaid graph: the same nodes, labels and edges child -> parent, read
// back from the DOT's statements and checked against the tree's postfix steps.
TEST(SummationTree, DotRendering) {
  const SummationTree annotated = *parse_summation_tree("(p0@binary16+p1)@binary32:rz+c", 2).tree;
  EXPECT_EQ(annotated.dot(),
            "digraph summation_tree {\n  rankdir=BT;\n  node [shape=box];\n"
            "  p0 [label=\"p0@binary16\"];\n"
            "  s0 [label=\"+@binary32:rz\", shape=circle];\n  p0 -> s0\n  p1 -> s0\n"
            "  s1 [label=\"+\", shape=circle];\n  s0 -> s1\n  c -> s1\n}\n");
  // A fused node of three children and a chain: every leaf one edge out, every sum `arity` edges in.
  for (const char* text : {"c+(p0+p1+p2)", "((p0+p1)+(p2+p3))+c", "p3+((p1+c)+(p0+p2))"}) {
    const SummationTree t = *parse_summation_tree(text).tree;
    std::map<std::string, int> in, out;
    std::istringstream lines(t.dot());
    for (std::string line; std::getline(lines, line);) {
      const std::size_t arrow = line.find(" -> ");
      if (arrow == std::string::npos) continue;
      ++out[line.substr(2, arrow - 2)];
      ++in[line.substr(arrow + 4)];
    }
    int sum = 0;
    for (const SummationTree::Step& s : t.steps) {
      if (s.leaf >= 0) {
        EXPECT_EQ(out[s.leaf == t.k ? "c" : "p" + std::to_string(s.leaf)], 1) << text;
      } else {
        const std::string id = "s" + std::to_string(sum++);
        EXPECT_EQ(in[id], s.arity) << text << " " << id;
        EXPECT_EQ(out[id], &s == &t.steps.back() ? 0 : 1) << text << " " << id;
      }
    }
  }
}

// A random tree over k products and c: summands in random order, joined two or more at a time
// (two only when `binary`).
SummationTree random_tree(std::mt19937_64& rng, int k, bool binary) {
  std::vector<std::string> items;
  for (int i = 0; i <= k; ++i) items.push_back(i == k ? "c" : fmt::format("p{}", i));
  std::shuffle(items.begin(), items.end(), rng);
  while (items.size() > 1) {
    const std::size_t n = std::min<std::size_t>(items.size(), !binary && rng() % 3 == 0 ? 2 + rng() % 3 : 2);
    const std::size_t at = rng() % (items.size() - n + 1);
    std::string node;
    for (std::size_t i = 0; i < n; ++i) node += (i ? "+" : "") + items[at + i];
    items.erase(items.begin() + std::ptrdiff_t(at), items.begin() + std::ptrdiff_t(at + n));
    items.insert(items.begin() + std::ptrdiff_t(at), "(" + node + ")");
  }
  const std::string s = items.front().substr(1, items.front().size() - 2);
  TreeParse p = parse_summation_tree(s, k);
  EXPECT_TRUE(p.tree) << s << ": " << p.error;
  return *p.tree;
}

TEST(SummationTree, ShapeIsRecoveredFromTheLostSummands) {
  std::mt19937_64 rng(5);
  for (int n = 0; n < 300; ++n) {
    const int k = n < 200 ? 2 + int(rng() % 15) : 16 << (n % 3);  // up to 16, then 16, 32, 64
    const SummationTree truth = random_tree(rng, k, n % 2 == 0);
    const auto found = mma::tree_from_lost(k, [&](int i, int j) { return mma::lost_summands(truth, i, j); });
    ASSERT_TRUE(found) << truth.text();
    // The lost sets tell every tree apart, fused nodes of any width included ((p2+p4)+p1+p9 and
    // (p1+p9)+p2+p4, alike in MMA-Sim's counts, lose p4 and p9 apart when X and -X sit at p2 and p1).
    EXPECT_EQ(mma::tree_nodes(*found), mma::tree_nodes(truth)) << truth.text() << " recovered as " << found->text();
  }
  // A chain: X and -X cancel where they meet, every y that met one of them before is lost.
  const SummationTree chain8 = sequential_tree(8, chain(8, false));
  const auto lost = [&](int i, int j) {
    const mma::Summands s = mma::lost_summands(chain8, i, j);
    std::vector<int> v;
    for (int x = 0; x <= 8; ++x)
      if (s[std::size_t(x)]) v.push_back(x);
    return v;
  };
  EXPECT_EQ(lost(0, 1), std::vector<int>{});
  EXPECT_EQ(lost(0, 2), std::vector<int>{1});
  EXPECT_EQ(lost(0, 8), (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(lost(6, 7), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(mma::tree_from_lost(8, [&](int i, int j) { return mma::lost_summands(chain8, i, j); })->text(),
            "(((((((p0+p1)+p2)+p3)+p4)+p5)+p6)+p7)+c");
  const SummationTree fused = *parse_summation_tree("((p2+p3)+p0+p1)+c", 4).tree;
  EXPECT_EQ(mma::tree_from_lost(4, [&](int i, int j) { return mma::lost_summands(fused, i, j); })->text(),
            "((p2+p3)+p0+p1)+c");
  // Lost sets no tree has: every pair loses the next summand; one lost summand flipped.
  EXPECT_FALSE(mma::tree_from_lost(4, [](int i, int j) {
    mma::Summands s;
    for (int x = 0; x <= 4; ++x)
      if (x != i && x != j && x == (j + 1) % 5) s.set(std::size_t(x));
    return s;
  }));
  EXPECT_FALSE(mma::tree_from_lost(8, [&](int i, int j) {
    mma::Summands s = mma::lost_summands(chain8, i, j);
    if (i == 3 && j == 5) s.flip(0);
    return s;
  }));
}

}  // namespace
}  // namespace gp::model
