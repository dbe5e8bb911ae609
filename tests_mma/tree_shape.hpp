// The shape of a summation tree from MMA-Sim's summation-order experiment (section III-C): X at
// summand i, -X at summand j, a small y at the K - 1 others. Every node rounds, so a y that meets
// X (or -X) in a node below the one where X and -X cancel is lost; the others are counted:
//
//   count(i, j) = K + 1 - |C(i)| - |C(j)|
//
// with C(x) the child, holding x, of the lowest node holding both (|C| its summands). Leaves
// 0..K-1 are the products, K is c.
#pragma once

#include <functional>
#include <optional>
#include <set>

#include "model/summation_tree.hpp"

namespace gp::mma {

// The nodes of a tree as the sets of summands below them: trees with the same nodes are one tree,
// whatever order each node's children are written in.
std::set<std::set<int>> tree_nodes(const model::SummationTree& t);

// The count the formula predicts for a tree.
int tree_count(const model::SummationTree& t, int i, int j);

// The tree whose counts are `count(i, j)` for every pair i < j of 0..K (K <= 62), or nullopt
// when no tree has them. Children are ordered by their first summand, so a chain reads "((p0+p1)+p2)+c".
std::optional<model::SummationTree> tree_from_counts(int k, const std::function<int(int, int)>& count);

}  // namespace gp::mma
