// The shape of a summation tree from which summands a cancellation loses, after MMA-Sim's
// summation-order experiment (section III-C) and FPRev (Xie et al., USENIX ATC 2025): X at summand
// i, -X at summand j, small positive y_l at others. Every node rounds, so a y_l that meets X (or
// -X) in a node below the one where X and -X cancel is lost into X's rounding; the others come
// back exactly. The lost ones are
//
//   lost(i, j) = C_j(i) + C_i(j) - {i, j}
//
// with C_j(i) the child, holding i, of the lowest node holding both i and j. Unlike the count
// |lost(i, j)| of MMA-Sim, the sets tell every tree apart, fused nodes of any width included.
// Leaves 0..K-1 are the products, K is c.
#pragma once

#include <bitset>
#include <functional>
#include <optional>
#include <set>
#include <string_view>

#include "model/summation_tree.hpp"

namespace gp::mma {

// The probe that rebuilds the tree (mmasim.cpp); its finding's parameters.tree is the tree's text,
// which the identification's candidates take as their shape.
inline constexpr std::string_view kTreeProbeId = "mma.summation_tree";

// Summands 0..K as bits, for the K <= kMaxShapeK whose shapes the probe can recover.
inline constexpr int kMaxShapeK = 127;
using Summands = std::bitset<kMaxShapeK + 1>;

// The nodes of a tree as the sets of summands below them: trees with the same nodes are one tree,
// whatever order each node's children are written in.
std::set<std::set<int>> tree_nodes(const model::SummationTree& t);

// The summands a tree loses when X at i and -X at j cancel (i != j).
Summands lost_summands(const model::SummationTree& t, int i, int j);

// The tree that loses `lost(i, j)` for every pair i < j of 0..K (K <= kMaxShapeK), or nullopt when
// no tree does. Children are ordered largest first, then by first summand, so a chain reads
// "((p0+p1)+p2)+c".
std::optional<model::SummationTree> tree_from_lost(int k, const std::function<Summands(int, int)>& lost);

}  // namespace gp::mma
