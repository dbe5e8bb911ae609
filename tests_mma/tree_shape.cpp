#include "tests_mma/tree_shape.hpp"

#include <algorithm>
#include <vector>

namespace gp::mma {

namespace {

// A tree as parent links: items 0..K are the summands, the nodes follow, each with its summands.
struct Links {
  std::vector<int> parent;
  std::vector<Summands> under;
};

Links links_of(const model::SummationTree& t) {
  Links l;
  for (int s = 0; s <= t.k; ++s) {
    l.parent.push_back(-1);
    l.under.emplace_back().set(std::size_t(s));
  }
  std::vector<int> stack;
  for (const model::SummationTree::Step& s : t.steps) {
    if (s.leaf >= 0) {
      stack.push_back(s.leaf);
      continue;
    }
    const int node = int(l.parent.size());
    l.parent.push_back(-1);
    l.under.emplace_back();
    for (int c = 0; c < s.arity; ++c) {
      const int child = stack.back();
      stack.pop_back();
      l.parent[std::size_t(child)] = node;
      l.under[std::size_t(node)] |= l.under[std::size_t(child)];
    }
    stack.push_back(node);
  }
  return l;
}

Summands lost_of(const Links& l, int i, int j) {
  std::vector<int> up_i;
  for (int x = i; x >= 0; x = l.parent[std::size_t(x)]) up_i.push_back(x);
  int prev_j = j;
  for (int x = l.parent[std::size_t(j)]; x >= 0; prev_j = x, x = l.parent[std::size_t(x)]) {
    const auto it = std::find(up_i.begin(), up_i.end(), x);
    if (it == up_i.end()) continue;
    // up_i starts at i, so the common node is never its first entry.
    Summands lost = l.under[std::size_t(*(it - 1))] | l.under[std::size_t(prev_j)];
    lost.reset(std::size_t(i));
    lost.reset(std::size_t(j));
    return lost;
  }
  return {};
}

std::size_t first_of(const Summands& s) { return s._Find_first(); }

}  // namespace

std::set<std::set<int>> tree_nodes(const model::SummationTree& t) {
  std::set<std::set<int>> out;
  for (const Summands& u : links_of(t).under) {
    if (u.count() < 2) continue;
    std::set<int> node;
    for (int s = 0; s <= t.k; ++s)
      if (u[std::size_t(s)]) node.insert(s);
    out.insert(std::move(node));
  }
  return out;
}

Summands lost_summands(const model::SummationTree& t, int i, int j) { return lost_of(links_of(t), i, j); }

std::optional<model::SummationTree> tree_from_lost(int k, const std::function<Summands(int, int)>& lost) {
  if (k < 1 || k > kMaxShapeK) return std::nullopt;
  const int n = k + 1;
  const std::vector<Summands> row(std::size_t(n), Summands{});
  std::vector<std::vector<Summands>> L(std::size_t(n), row);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) L[std::size_t(i)][std::size_t(j)] = L[std::size_t(j)][std::size_t(i)] = lost(i, j);
  // A lost summand l lies on i's side (in C_j(i)) exactly when the pair (l, j) loses i: l in
  // C_j(i) shares that child with i, while l in C_i(j) meets j below the node that holds i. So
  // {i} and its side of lost(i, j) is a node of the tree, and every node but the root is one.
  std::vector<Summands> nodes;
  Summands all;
  for (int s = 0; s < n; ++s) all.set(std::size_t(s));
  nodes.push_back(all);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      Summands side;
      side.set(std::size_t(i));
      for (int l = 0; l < n; ++l)
        if (L[std::size_t(i)][std::size_t(j)][std::size_t(l)] && L[std::size_t(l)][std::size_t(j)][std::size_t(i)])
          side.set(std::size_t(l));
      if (side.count() < 2 || std::find(nodes.begin(), nodes.end(), side) != nodes.end()) continue;
      nodes.push_back(side);
      if (int(nodes.size()) >= n) return std::nullopt;  // more nodes than a tree over n summands has
    }
  for (const Summands& x : nodes)
    for (const Summands& y : nodes) {
      const Summands both = x & y;
      if (both.any() && both != x && both != y) return std::nullopt;  // not nested: no tree
    }
  // Each node's children: its largest proper subsets among the nodes, then the summands left.
  model::SummationTree t;
  t.k = k;
  const std::function<void(const Summands&)> emit = [&](const Summands& x) {
    if (x.count() == 1) {
      t.steps.push_back({int(first_of(x)), 0, nullptr, std::nullopt});
      return;
    }
    std::vector<Summands> inside, children;
    for (const Summands& y : nodes)
      if (y != x && (y & x) == y) inside.push_back(y);
    std::sort(inside.begin(), inside.end(), [](const Summands& a, const Summands& b) { return a.count() > b.count(); });
    Summands covered;
    for (const Summands& y : inside)
      if ((y & covered).none()) {
        children.push_back(y);
        covered |= y;
      }
    for (int s = 0; s < n; ++s)
      if (x[std::size_t(s)] && !covered[std::size_t(s)]) children.emplace_back().set(std::size_t(s));
    std::sort(children.begin(), children.end(), [](const Summands& a, const Summands& b) {
      return a.count() != b.count() ? a.count() > b.count() : first_of(a) < first_of(b);
    });
    for (const Summands& c : children) emit(c);
    t.steps.push_back({-1, int(children.size()), nullptr, std::nullopt});
  };
  emit(all);
  const Links built = links_of(t);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (lost_of(built, i, j) != L[std::size_t(i)][std::size_t(j)]) return std::nullopt;
  return t;
}

}  // namespace gp::mma
