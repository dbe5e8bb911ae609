#include "tests_mma/tree_shape.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>
#include <vector>

namespace gp::mma {

namespace {

// A tree as parent links: items 0..K are the summands, the nodes follow.
struct Links {
  std::vector<int> parent, size;
};

Links links_of(const model::SummationTree& t) {
  Links l;
  l.parent.assign(std::size_t(t.k) + 1, -1);
  l.size.assign(std::size_t(t.k) + 1, 1);
  std::vector<int> stack;
  for (const model::SummationTree::Step& s : t.steps) {
    if (s.leaf >= 0) {
      stack.push_back(s.leaf);
      continue;
    }
    const int node = int(l.parent.size());
    l.parent.push_back(-1);
    l.size.push_back(0);
    for (int c = 0; c < s.arity; ++c) {
      const int child = stack.back();
      stack.pop_back();
      l.parent[std::size_t(child)] = node;
      l.size[std::size_t(node)] += l.size[std::size_t(child)];
    }
    stack.push_back(node);
  }
  return l;
}

// The summands' count formula on parent links.
int count_of(const Links& l, int k, int i, int j) {
  std::vector<int> up_i;
  for (int x = i; x >= 0; x = l.parent[std::size_t(x)]) up_i.push_back(x);
  int prev_j = j;
  for (int x = l.parent[std::size_t(j)]; x >= 0; prev_j = x, x = l.parent[std::size_t(x)]) {
    const auto it = std::find(up_i.begin(), up_i.end(), x);
    if (it == up_i.end()) continue;
    const int child_i = *(it - 1);  // up_i starts at i, so the node is never its first entry
    return k + 1 - l.size[std::size_t(child_i)] - l.size[std::size_t(prev_j)];
  }
  return -1;
}

}  // namespace

std::set<std::set<int>> tree_nodes(const model::SummationTree& t) {
  std::set<std::set<int>> out;
  std::vector<std::set<int>> stack;
  for (const model::SummationTree::Step& s : t.steps) {
    if (s.leaf >= 0) {
      stack.push_back({s.leaf});
      continue;
    }
    std::set<int> node;
    for (int i = 0; i < s.arity; ++i, stack.pop_back()) node.insert(stack.back().begin(), stack.back().end());
    out.insert(node);
    stack.push_back(std::move(node));
  }
  return out;
}

int tree_count(const model::SummationTree& t, int i, int j) { return count_of(links_of(t), t.k, i, j); }

std::optional<model::SummationTree> tree_from_counts(int k, const std::function<int(int, int)>& count) {
  if (k < 1 || k > 62) return std::nullopt;
  using Set = std::uint64_t;  // summands 0..k as bits
  const int n = k + 1;
  // v(i, j) = |C(i)| + |C(j)|. Every node T holding i is {i} and the j with v(i, j) <= |T|: the
  // j inside have both C within T, those outside have C(i) holding all of T. So the nodes are
  // among the sets A of size t = {i} + {j : v(i, j) <= t} that every member of A sees alike.
  std::vector<std::vector<int>> v(std::size_t(n), std::vector<int>(std::size_t(n), 0));
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) v[std::size_t(i)][std::size_t(j)] = v[std::size_t(j)][std::size_t(i)] = k + 1 - count(i, j);
  const auto seen_from = [&](int i, int t) {
    Set a = Set{1} << i;
    for (int j = 0; j < n; ++j)
      if (j != i && v[std::size_t(i)][std::size_t(j)] <= t) a |= Set{1} << j;
    return a;
  };
  std::set<Set> nodes;
  for (int i = 0; i < n; ++i)
    for (int t = 2; t <= n; ++t) {
      const Set a = seen_from(i, t);
      if (std::popcount(a) != t) continue;
      bool alike = true;
      for (int m = 0; m < n && alike; ++m)
        if (a >> m & 1) alike = seen_from(m, t) == a;
      // A node meets every summand outside it in one place: v(., j) is one value on it.
      for (int j = 0; j < n && alike; ++j)
        for (int m = 0; m < n && alike && !(a >> j & 1); ++m)
          if (a >> m & 1) alike = v[std::size_t(m)][std::size_t(j)] == v[std::size_t(i)][std::size_t(j)];
      if (alike) nodes.insert(a);
    }
  nodes.insert((Set{1} << n) - 1);
  for (Set x : nodes)
    for (Set y : nodes)
      if ((x & y) && (x & y) != x && (x & y) != y) return std::nullopt;  // not a tree
  // The tree of a family of nested sets: each node's children are its largest proper subsets
  // in the family and the summands no such subset holds.
  const auto children_of = [&](const std::set<Set>& family, Set x) {
    std::vector<Set> inside, children;
    for (Set y : family)
      if (y != x && (y & x) == y) inside.push_back(y);
    std::sort(inside.begin(), inside.end(), [](Set a, Set b) { return std::popcount(a) > std::popcount(b); });
    Set covered = 0;
    for (Set y : inside)
      if (!(y & covered)) {
        children.push_back(y);
        covered |= y;
      }
    for (int i = 0; i < n; ++i)
      if ((x >> i & 1) && !(covered >> i & 1)) children.push_back(Set{1} << i);
    // The largest child first, then by first summand: a chain reads "((p0+p1)+p2)+c".
    std::sort(children.begin(), children.end(), [](Set a, Set b) {
      return std::popcount(a) != std::popcount(b) ? std::popcount(a) > std::popcount(b) : std::countr_zero(a) < std::countr_zero(b);
    });
    return children;
  };
  const auto build = [&](const std::set<Set>& family) {
    model::SummationTree t;
    t.k = k;
    const std::function<void(Set)> emit = [&](Set x) {
      if (std::popcount(x) == 1) {
        t.steps.push_back({std::countr_zero(x), 0, nullptr, std::nullopt});
        return;
      }
      const std::vector<Set> children = children_of(family, x);
      for (Set c : children) emit(c);
      t.steps.push_back({-1, int(children.size()), nullptr, std::nullopt});
    };
    emit((Set{1} << n) - 1);
    return t;
  };
  const auto mismatches = [&](const model::SummationTree& t) {
    const Links l = links_of(t);
    int bad = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) bad += count_of(l, k, i, j) != count(i, j);
    return bad;
  };
  // A set also passes when it unites siblings of one size s whose other siblings are all larger
  // than s (its members then meet the others alike): the sets whose children all have one size
  // are suspects, and the fewest of them that
  // leave a tree with the measured counts are dropped.
  const model::SummationTree all = build(nodes);
  if (mismatches(all) == 0) return all;
  std::vector<Set> suspects;
  for (Set x : nodes) {
    if (x == (Set{1} << n) - 1) continue;
    std::set<int> sizes;
    for (Set c : children_of(nodes, x)) sizes.insert(std::popcount(c));
    if (sizes.size() == 1) suspects.push_back(x);
  }
  if (suspects.size() > 12) return std::nullopt;
  for (int drop = 1; drop <= int(suspects.size()); ++drop)
    for (unsigned m = 1; m < 1u << suspects.size(); ++m) {
      if (std::popcount(m) != drop) continue;
      std::set<Set> less = nodes;
      for (std::size_t i = 0; i < suspects.size(); ++i)
        if (m >> i & 1) less.erase(suspects[i]);
      const model::SummationTree t = build(less);
      if (mismatches(t) == 0) return t;
    }
  return std::nullopt;
}

}  // namespace gp::mma
