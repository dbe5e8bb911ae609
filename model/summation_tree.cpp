#include "model/summation_tree.hpp"

#include <algorithm>
#include <cctype>
#include <climits>

#include "input/input_error.hpp"
#include "input/limits.hpp"
#include "model/mma_algorithms.hpp"
#include "model/ops.hpp"
#include "model/value.hpp"
#include "model/wide.hpp"

namespace gp::model {

static_assert(input::kMaxTreeDepth >= kMaxDotK + 1, "a chain over the most products must parse");

namespace {

// ---------------------------------------------------------------------------------------------
// Text form: a recursive-descent parser that writes the postfix steps.
class Parser {
 public:
  Parser(std::string_view s, int k) : s_(s), k_(k), seen_(k >= 1 && k <= kMaxDotK ? std::size_t(k) + 1 : 0, false) {}

  TreeParse run() {
    SummationTree t;
    t.k = k_;
    if (k_ < 1 || k_ > kMaxDotK) return fail("K must lie in 1.." + std::to_string(kMaxDotK));
    if (!sum(t, true)) return {std::nullopt, error_};
    skip();
    if (pos_ != s_.size()) return fail("unexpected " + input::quoted(s_.substr(pos_, 1)));
    for (int i = 0; i <= k_; ++i)
      if (!seen_[std::size_t(i)]) return fail((i == k_ ? std::string("c") : "p" + std::to_string(i)) + " is missing");
    return {std::move(t), ""};
  }

 private:
  TreeParse fail(std::string why) {
    return {std::nullopt, why + " at character " + std::to_string(pos_ + 1) + " of " + input::quoted(s_)};
  }
  bool error(std::string why) {
    error_ = fail(std::move(why)).error;
    return false;
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(char ch) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == ch) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string word() {
    skip();
    const std::size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    return std::string(s_.substr(b, pos_ - b));
  }
  // A sum of terms: one node, unless it is a single term in parentheses ("(p0)" is p0).
  bool sum(SummationTree& t, bool root) {
    int terms = 0;
    do {
      if (!term(t)) return false;
      ++terms;
    } while (eat('+'));
    if (terms == 1 && root) return error("the root needs two terms at least");
    if (terms > 1) t.steps.push_back({-1, terms, nullptr, std::nullopt});
    return true;
  }
  bool term(SummationTree& t) {
    if (eat('(')) {
      // Each level recurses once: the depth bounds the parser's stack.
      if (++depth_ > input::kMaxTreeDepth)
        return error("parentheses nested deeper than " + std::to_string(input::kMaxTreeDepth));
      const std::size_t before = t.steps.size();
      if (!sum(t, false)) return false;
      if (!eat(')')) return error("')' expected");
      --depth_;
      if (t.steps.size() == before + 1 && t.steps.back().leaf >= 0) return error("a node needs two terms at least");
    } else {
      const std::string w = word();
      int leaf = -1;
      if (w == "c") {
        leaf = k_;
      } else if (w.size() > 1 && w[0] == 'p' && std::all_of(w.begin() + 1, w.end(), ::isdigit) && w.size() < 7) {
        leaf = std::stoi(w.substr(1));
        if (leaf >= k_) return error(w + " beyond K = " + std::to_string(k_));
      } else {
        return error(w.empty() ? "a product pK, c or '(' expected" : "unknown leaf " + input::quoted(w));
      }
      if (seen_[std::size_t(leaf)]) return error(w + " appears twice");
      seen_[std::size_t(leaf)] = true;
      t.steps.push_back({leaf, 0, nullptr, std::nullopt});
    }
    if (eat('@')) {
      const std::string f = word();
      const auto fmt = find_format(f);
      if (!fmt) return error("unknown format " + input::quoted(f));
      SummationTree::Step& s = t.steps.back();
      if (s.leaf == k_) return error("c takes no annotation (its format is c's)");
      s.format = *fmt;
      if (eat(':')) {
        const std::string r = word();
        const auto mode = find_rounding(r);
        if (!mode) return error("unknown rounding " + input::quoted(r));
        s.rounding = *mode;
      }
    }
    return true;
  }

  std::string_view s_;
  int k_;
  std::vector<bool> seen_;
  std::size_t pos_ = 0;
  int depth_ = 0;  // parentheses open at pos_
  std::string error_;
};

std::string annotation(const SummationTree::Step& s) {
  if (!s.format) return "";
  return "@" + std::string(s.format->name) + (s.rounding ? ":" + std::string(name(*s.rounding)) : "");
}

// A node as the renderings show it: a leaf by its name ("p3", "c"), a sum as "+", each with its
// annotation.
void append_label(std::string& out, const SummationTree::Step& s, int k) {
  if (s.leaf < 0)
    out += '+';
  else if (s.leaf == k)
    out += 'c';
  else
    (out += 'p') += std::to_string(s.leaf);
  if (s.format) out += annotation(s);
}

// ---------------------------------------------------------------------------------------------
// Evaluation. A value on the stack: finite (sig may be zero, neg then its sign), infinite or NaN.
struct Term {
  u128 sig;
  int exp;
  bool neg;
  std::uint8_t kind;  // 0 finite, 1 infinite, 2 NaN
};

Term term_of(const Format& f, std::uint64_t bits, bool flush) {
  const Unpacked u = unpack(f, bits, flush);
  if (is_nan(u.cls)) return {0, 0, u.neg, 2};
  if (u.cls == Class::infinite) return {0, 0, u.neg, 1};
  return {u.sig, u.exp, u.neg, 0};
}

// The bits of `count` values at bit offset `at` of a little-endian multiword integer.
std::uint64_t window(const std::uint64_t* w, int words, int at) {
  const int i = at / 64, b = at % 64;
  const std::uint64_t lo = i < words ? w[i] >> b : 0;
  const std::uint64_t hi = b && i + 1 < words ? w[i + 1] << (64 - b) : 0;
  return lo | hi;
}

// The exact sum of n finite terms, rounded once to f.
Result round_sum(const Format& f, const Options& o, const Term* t, int n) {
  // Two nonzero terms of at most 53 bits (a binary node over narrow products): the adder's path.
  if (n == 2 && t[0].sig && t[1].sig && (t[0].sig | t[1].sig) >> 53 == 0)
    return detail::add_nonzero(f, o, {Class::normal, t[0].neg, t[0].exp, std::uint64_t(t[0].sig)},
                               {Class::normal, t[1].neg, t[1].exp, std::uint64_t(t[1].sig)});
  int lo = INT_MAX, hi = INT_MIN;
  bool any_neg = false, any_pos = false;
  for (int i = 0; i < n; ++i) {
    (t[i].neg ? any_neg : any_pos) = true;
    if (t[i].sig == 0) continue;
    lo = std::min(lo, t[i].exp);
    hi = std::max(hi, t[i].exp + msb(t[i].sig));
  }
  // Zeros only: their common sign, else +0 (-0 rounding down), as IEEE 754 6.3 says of two.
  if (lo == INT_MAX) return zero(f, any_pos ? any_neg && o.rounding == Rounding::rd : true);
  // Carries of up to kMaxDotK + 1 terms need 11 bits above the largest, the sign one more.
  const int width = hi - lo + 1 + 12;
  if (width <= 127) {
    __extension__ typedef __int128 i128;
    i128 acc = 0;
    for (int i = 0; i < n; ++i) {
      const i128 v = i128(t[i].sig << (t[i].sig ? t[i].exp - lo : 0));
      acc += t[i].neg ? -v : v;
    }
    if (acc == 0) return zero(f, o.rounding == Rounding::rd);
    const bool neg = acc < 0;
    int exp = lo;
    const std::uint64_t mag = narrow_jam(u128(neg ? -acc : acc), exp);
    return round_pack(f, o, neg, exp, mag);
  }
  // Wide spans (terms far apart): a two's-complement multiword integer from 2^lo up.
  constexpr int kWords = 80;  // binary64 products span 2 * 2098 + 106 bits at most
  const int words = std::min(kWords, width / 64 + 2);
  std::uint64_t w[kWords] = {};
  for (int i = 0; i < n; ++i) {
    if (t[i].sig == 0) continue;
    const int shift = t[i].exp - lo, at = shift / 64, b = shift % 64;
    const auto l = std::uint64_t(t[i].sig), h = std::uint64_t(t[i].sig >> 64);
    const std::uint64_t part[3] = {l << b, (b ? l >> (64 - b) : 0) | (h << b), b ? h >> (64 - b) : 0};
    if (!t[i].neg) {
      unsigned carry = 0;
      for (int j = at; j < words; ++j) {
        const std::uint64_t p = j - at < 3 ? part[j - at] : 0;
        const u128 s = u128(w[j]) + p + carry;
        w[j] = std::uint64_t(s);
        carry = unsigned(s >> 64);
        if (j - at >= 2 && !carry) break;
      }
    } else {
      unsigned borrow = 0;
      for (int j = at; j < words; ++j) {
        const std::uint64_t p = j - at < 3 ? part[j - at] : 0;
        const std::uint64_t x = w[j];
        const std::uint64_t d = x - p - borrow;
        borrow = (x < p) || (x - p < borrow) ? 1 : 0;
        w[j] = d;
        if (j - at >= 2 && !borrow) break;
      }
    }
  }
  const bool neg = (w[words - 1] >> 63) != 0;
  if (neg) {  // two's complement negation
    unsigned carry = 1;
    for (int j = 0; j < words; ++j) {
      const u128 s = u128(~w[j]) + carry;
      w[j] = std::uint64_t(s);
      carry = unsigned(s >> 64);
    }
  }
  int top = words - 1;
  while (top >= 0 && w[top] == 0) --top;
  if (top < 0) return zero(f, o.rounding == Rounding::rd);
  const int p = 64 * top + msb(w[top]);
  if (p <= 61) return round_pack(f, o, neg, lo, w[0]);
  const int from = p - 61;
  std::uint64_t mag = window(w, words, from) & ((std::uint64_t{1} << 62) - 1);
  bool sticky = false;
  for (int j = 0; j < from / 64 && !sticky; ++j) sticky = w[j] != 0;
  if (!sticky && from % 64) sticky = (w[from / 64] & ((std::uint64_t{1} << (from % 64)) - 1)) != 0;
  return round_pack(f, o, neg, lo + from, mag | std::uint64_t(sticky));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
TreeParse parse_summation_tree(std::string_view text, int k) {
  if (k < 0) {  // the products named: one past the largest index after a 'p' that starts a word
    k = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] != 'p' || (i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1])))) continue;
      std::size_t j = i + 1;
      int v = 0;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) && v <= kMaxDotK)
        v = 10 * v + (text[j++] - '0');
      if (j > i + 1) k = std::max(k, v + 1);
    }
  }
  return Parser(text, k).run();
}

std::string set_tree_options(SummationTree& t, const Format& d, std::string_view sums, std::string_view products,
                             std::string_view rounding, const std::vector<std::string>& flush) {
  t.sum_format = nullptr;
  if (!sums.empty()) {
    const auto f = find_format(sums);
    if (!f) return "unknown sums format '" + std::string(sums) + "'";
    if (*f != &d) t.sum_format = *f;
  }
  t.product_format = nullptr;
  if (!products.empty() && products != "exact") {
    const auto f = find_format(products);
    if (!f) return "unknown products format '" + std::string(products) + "' (a format or exact)";
    t.product_format = *f;
  }
  if (!rounding.empty()) {
    const auto r = find_rounding(rounding);
    if (!r) return "unknown rounding '" + std::string(rounding) + "'";
    t.sum_rounding = t.product_rounding = *r;
  }
  t.flush_inputs = t.flush_c = t.flush_sums = false;
  for (const std::string& x : flush) {
    if (x == "inputs")
      t.flush_inputs = true;
    else if (x == "c")
      t.flush_c = true;
    else if (x == "sums")
      t.flush_sums = true;
    else
      return "unknown flush '" + x + "' (inputs, c, sums)";
  }
  return "";
}

std::string SummationTree::text() const {
  std::vector<std::string> stack;
  for (const Step& s : steps) {
    if (s.leaf >= 0) {
      stack.push_back((s.leaf == k ? std::string("c") : "p" + std::to_string(s.leaf)) + annotation(s));
      continue;
    }
    std::string node;
    for (std::size_t i = stack.size() - std::size_t(s.arity); i < stack.size(); ++i)
      node += (node.empty() ? "" : "+") + stack[i];
    stack.resize(stack.size() - std::size_t(s.arity));
    stack.push_back("(" + node + ")" + annotation(s));
  }
  if (stack.size() != 1) return "";
  std::string r = stack.front();
  // The root's parentheses are left out unless it carries an annotation.
  if (!steps.empty() && !steps.back().format && r.size() >= 2) r = r.substr(1, r.size() - 2);
  return r;
}

namespace {

// The graph renderings (Mermaid, Graphviz's DOT): one walk of the postfix steps, each syntax its
// own head, node declaration and edge arrow. Node ids: a leaf by its name, the n-th sum sn; on the
// stack a leaf is its index, sum n is -1 - n. Leaves without an annotation need no declaration:
// both syntaxes label a node by its id. Labels hold names of formats and roundings, digits, "+",
// "@" and ":" alone: nothing either syntax must escape.
std::string render_graph(const SummationTree& t, std::string out, std::string_view arrow, std::string_view tail,
                         void (*declare)(std::string& out, std::string_view id, std::string_view label, bool sum)) {
  const auto id_of = [&](int v) {
    return v < 0 ? "s" + std::to_string(-1 - v) : v == t.k ? std::string("c") : "p" + std::to_string(v);
  };
  std::vector<int> stack;
  int sums = 0;
  for (const SummationTree::Step& s : t.steps) {
    const int id = s.leaf >= 0 ? s.leaf : -1 - sums++;
    if (s.leaf < 0 || s.format) {
      std::string label;
      append_label(label, s, t.k);
      declare(out, id_of(id), label, s.leaf < 0);
    }
    if (s.leaf < 0) {
      if (s.arity < 1 || std::size_t(s.arity) > stack.size()) return "";
      for (std::size_t i = stack.size() - std::size_t(s.arity); i < stack.size(); ++i)
        ((((out += "  ") += id_of(stack[i])) += arrow) += id_of(id)) += '\n';
      stack.resize(stack.size() - std::size_t(s.arity));
    }
    stack.push_back(id);
  }
  return stack.size() == 1 ? out += tail : "";
}

}  // namespace

std::string SummationTree::mermaid() const {
  return render_graph(*this, "graph TD\n", " --> ", "",
                      [](std::string& out, std::string_view id, std::string_view label, bool) {
                        ((((out += "  ") += id) += "[\"") += label) += "\"]\n";
                      });
}

std::string SummationTree::dot() const {
  return render_graph(*this, "digraph summation_tree {\n  rankdir=BT;\n  node [shape=box];\n", " -> ", "}\n",
                      [](std::string& out, std::string_view id, std::string_view label, bool sum) {
                        ((((out += "  ") += id) += " [label=\"") += label) += sum ? "\", shape=circle];\n" : "\"];\n";
                      });
}

std::string SummationTree::indented() const {
  // A node's subtree is the run of postfix steps that ends at it; start[i] is where step i's begins.
  const int n = int(steps.size());
  std::vector<int> start(steps.size()), stack;
  for (int i = 0; i < n; ++i) {
    const Step& s = steps[std::size_t(i)];
    start[std::size_t(i)] = i;
    if (s.leaf < 0) {
      if (s.arity < 1 || std::size_t(s.arity) > stack.size()) return "";
      start[std::size_t(i)] = start[std::size_t(stack[stack.size() - std::size_t(s.arity)])];
      stack.resize(stack.size() - std::size_t(s.arity));
    }
    stack.push_back(i);
  }
  if (stack.size() != 1) return "";
  // Preorder without recursion (a chain of 1024 products is 1025 levels deep). A node's last child
  // ends just before it, each earlier child just before the next one's run: pushed in that order,
  // the first child is written next.
  std::string out;
  std::vector<std::pair<int, int>> todo = {{n - 1, 0}};  // step, depth
  while (!todo.empty()) {
    const auto [i, depth] = todo.back();
    todo.pop_back();
    const Step& s = steps[std::size_t(i)];
    out.append(2 * std::size_t(depth), ' ');
    append_label(out, s, k);
    out += '\n';
    for (int c = i - 1, left = s.leaf < 0 ? s.arity : 0; left > 0; c = start[std::size_t(c)] - 1, --left)
      todo.push_back({c, depth + 1});
  }
  return out;
}

std::vector<std::string> SummationTree::flushed() const {
  std::vector<std::string> v;
  if (flush_inputs) v.push_back("inputs");
  if (flush_c) v.push_back("c");
  if (flush_sums) v.push_back("sums");
  return v;
}

std::vector<int> SummationTree::leaf_order() const {
  std::vector<int> v;
  for (const Step& s : steps)
    if (s.leaf >= 0) v.push_back(s.leaf);
  return v;
}

bool SummationTree::binary() const {
  return std::all_of(steps.begin(), steps.end(), [](const Step& s) { return s.leaf >= 0 || s.arity == 2; });
}

bool SummationTree::sequential() const {
  // Postfix of a chain: leaf, leaf, node, then (leaf, node) pairs.
  if (steps.size() < 3 || steps[0].leaf < 0 || steps[1].leaf < 0) return false;
  for (std::size_t i = 2; i < steps.size(); ++i) {
    const bool node_turn = i % 2 == 0;
    if (node_turn != (steps[i].leaf < 0)) return false;
    if (node_turn && steps[i].arity != 2) return false;
  }
  return steps.size() % 2 == 1;
}

SummationTree sequential_tree(int k, const std::vector<int>& order) {
  SummationTree t;
  t.k = k;
  for (std::size_t i = 0; i < order.size(); ++i) {
    t.steps.push_back({order[i], 0, nullptr, std::nullopt});
    if (i > 0) t.steps.push_back({-1, 2, nullptr, std::nullopt});
  }
  return t;
}

std::string check_tree(const SummationTree& t, const DotConfig& cfg) {
  if (t.k < 1 || t.k > kMaxDotK) return "the tree's K must lie in 1.." + std::to_string(kMaxDotK);
  const auto ieee = [](const Format& f) { return f.has_sign() && f.has_subnormals() && f.nan == NanStyle::ieee; };
  if (!ieee(*cfg.d)) return "a summation tree needs an IEEE-style d format";
  int depth = 0, leaves = 0, nodes = 0;
  for (const SummationTree::Step& s : t.steps) {
    if (s.format && (!ieee(*s.format) || s.format->precision() > 53))
      return "tree annotations need IEEE-style formats of at most 53 bits";
    if (s.leaf >= 0) {
      ++depth;
      ++leaves;
      continue;
    }
    if (s.arity < 2 || s.arity > depth) return "a malformed tree";
    depth -= s.arity - 1;
    ++nodes;
  }
  if (depth != 1 || leaves != t.k + 1 || nodes == 0) return "the tree must join the K products and c in one root";
  if (t.sum_format && (!ieee(*t.sum_format) || t.sum_format->precision() > 53))
    return "the tree's sums need an IEEE-style format of at most 53 bits";
  if (t.product_format && (!ieee(*t.product_format) || t.product_format->precision() > 53))
    return "the tree's products need an IEEE-style format of at most 53 bits";
  if (cfg.a->precision() + cfg.b->precision() > 110) return "a and b products must fit 110 bits";
  if (cfg.scale) return "a summation tree takes no scale factors";
  return "";
}

std::uint64_t evaluate_tree(const SummationTree& t, const DotConfig& cfg, const Format& cf, std::uint64_t c,
                            const std::uint64_t* a, const std::uint64_t* b, int n) {
  const Format& d = *cfg.d;
  if (n != t.k) return canonical_nan(d);
  Term stack[kMaxDotK + 2];
  int top = 0;
  const Format* last = &d;
  std::uint64_t last_bits = 0;
  const Format& sums = t.sum_format ? *t.sum_format : d;
  for (const SummationTree::Step& s : t.steps) {
    if (s.leaf == t.k) {
      stack[top++] = term_of(cf, c, t.flush_c);
      continue;
    }
    if (s.leaf >= 0) {
      const Term x = term_of(*cfg.a, a[s.leaf], t.flush_inputs), y = term_of(*cfg.b, b[s.leaf], t.flush_inputs);
      Term p{0, 0, x.neg != y.neg, 0};
      if (x.kind == 2 || y.kind == 2)
        p.kind = 2;
      else if (x.kind == 1 || y.kind == 1)
        p.kind = (x.kind == 0 && x.sig == 0) || (y.kind == 0 && y.sig == 0) ? 2 : 1;
      else
        p = {u128(x.sig) * y.sig, x.exp + y.exp, x.neg != y.neg, 0};
      const Format* pf = s.format ? s.format : t.product_format;
      if (pf && p.kind == 0) {
        Options o;
        o.rounding = s.rounding.value_or(t.product_rounding);
        o.ftz_out = t.flush_sums;
        int exp = p.exp;
        const std::uint64_t mag = narrow_jam(p.sig, exp);
        p = term_of(*pf, round_pack(*pf, o, p.neg, exp, mag).bits, false);
      }
      stack[top++] = p;
      continue;
    }
    Term* in = stack + top - s.arity;
    const Format& f = s.format ? *s.format : sums;
    bool nan = false, pos_inf = false, neg_inf = false;
    for (int i = 0; i < s.arity; ++i) {
      nan |= in[i].kind == 2;
      if (in[i].kind == 1) (in[i].neg ? neg_inf : pos_inf) = true;
    }
    top -= s.arity;
    last = &f;
    if (nan || (pos_inf && neg_inf)) {
      last_bits = canonical_nan(f);
      stack[top++] = {0, 0, false, 2};
      continue;
    }
    if (pos_inf || neg_inf) {
      last_bits = infinity(f, Options{}, neg_inf).bits;
      stack[top++] = {0, 0, neg_inf, 1};
      continue;
    }
    Options o;
    o.rounding = s.rounding.value_or(t.sum_rounding);
    o.ftz_out = t.flush_sums;
    last_bits = round_sum(f, o, in, s.arity).bits;
    stack[top++] = term_of(f, last_bits, false);
  }
  if (top != 1) return canonical_nan(d);  // not a tree: check_tree refuses it
  if (stack[top - 1].kind == 2) return canonical_nan(d);
  if (last == &d) return last_bits;
  Options o;
  o.rounding = t.sum_rounding;
  o.ftz_out = t.flush_sums;
  return cvt(d, *last, o, last_bits).bits;
}

}  // namespace gp::model
