// The summation-tree family, beside MMA-Sim's nine algorithms: any tree over the K products and c,
// each node the exact sum of its children rounded once to its own format and mode. A binary node
// is one floating-point addition, a node of t children a t-term fused sum (MMA-Sim section III-C,
// figure 1), a product leaf is exact or rounded to a format first. It models units that the nine
// do not: a chain of IEEE additions that starts from the first product and adds c last (Mesa's
// lavapipe), pairwise sums in the products' own format, and so on.
//
// Text form (the `tree` parameter of profiles and of `gpuparanoia model dot --tree`):
//   tree  := term ('+' term)*                       the root node (its parentheses left out)
//   term  := ('p' INDEX | 'c' | '(' tree ')') ('@' FORMAT (':' ROUNDING)?)?
// "((p0+p1)+p2)+c" sums p0 and p1, then p2, then c. An annotation gives one node its own format
// and mode ("(p0+p1)@binary32:rz"), or rounds one product ("p0@binary16"); the others take the
// tree's defaults: sums in `sum_format` (d when unset) rounded `sum_rounding`, products exact
// unless `product_format` is set. Every product 0..K-1 and c appear exactly once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/format.hpp"
#include "model/rounding.hpp"

namespace gp::model {

struct DotConfig;

struct SummationTree {
  // The tree in postfix order: a leaf pushes product `leaf` (0..k-1) or c (leaf == k); a node
  // (leaf < 0) replaces the `arity` values on top of the stack with their rounded exact sum.
  struct Step {
    int leaf = -1;
    int arity = 0;
    const Format* format = nullptr;    // annotation: the node's format, or the format a product is rounded to
    std::optional<Rounding> rounding;  // annotation: its rounding
  };
  int k = 0;
  std::vector<Step> steps;
  const Format* sum_format = nullptr;  // nullptr: d's format
  Rounding sum_rounding = Rounding::rne;
  const Format* product_format = nullptr;  // nullptr: exact products
  Rounding product_rounding = Rounding::rne;
  bool flush_inputs = false;  // subnormal a and b read as zeros
  bool flush_c = false;       // a subnormal c reads as zero
  bool flush_sums = false;    // subnormal node results (and rounded products) become zeros

  // The flushing as set_tree_options names it: "inputs", "c", "sums".
  std::vector<std::string> flushed() const;
  // The text form, canonical: the parse of text() is the same tree.
  std::string text() const;
  // Products and c in the order the leaves appear, and whether every node is binary: a chain
  // "((p0+p1)+p2)+c" gives {0, 1, 2, k} and true.
  std::vector<int> leaf_order() const;
  bool binary() const;
  // Whether the tree is a chain: every node's first child the previous node, the second a leaf.
  bool sequential() const;
  // Renderings for the reports, annotations kept beside "+" and leaf names. mermaid(): a Mermaid
  // flowchart, "graph TD", sums s0, s1 ... in postfix order labelled "+", an edge from each child
  // to its parent ("p0 --> s0"). indented(): the tree from the root, one node a line, two spaces
  // a level: "+\n  +\n    p0\n    p1\n  c\n" for "(p0+p1)+c". dot(): the Mermaid graph in Graphviz's
  // DOT, "digraph summation_tree", the root on top (rankdir=BT), sums circles labelled "+", leaves
  // boxes ("p0 -> s0;"), for `dot -Tsvg`.
  std::string mermaid() const;
  std::string dot() const;
  std::string indented() const;
};

struct TreeParse {
  std::optional<SummationTree> tree;
  std::string error;  // why the text is not a tree over k products and c
};
// k < 0: K is the number of products the text names (p0..pK-1).
TreeParse parse_summation_tree(std::string_view text, int k = -1);

// The tree-wide settings by the names profiles and the command line use: sums "binary16" (empty:
// d's format), products "exact" or a format, rounding "rne" ..., flush a list of "inputs", "c",
// "sums". An empty string, or why a name is not known.
std::string set_tree_options(SummationTree& t, const Format& d, std::string_view sums, std::string_view products,
                             std::string_view rounding, const std::vector<std::string>& flush);

// The chain of additions over the leaves in the given order (products 0..k-1, c as k).
SummationTree sequential_tree(int k, const std::vector<int>& order);

// Why a tree cannot be evaluated for k products with these formats, or an empty string.
std::string check_tree(const SummationTree& t, const DotConfig& cfg);

// d for one dot product (K = t.k = n): the algorithm `tree` of model::Dot.
std::uint64_t evaluate_tree(const SummationTree& t, const DotConfig& cfg, const Format& cf, std::uint64_t c,
                            const std::uint64_t* a, const std::uint64_t* b, int n);

}  // namespace gp::model
