#include "backends/expr.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace gp::backends {

namespace {
constexpr std::array<std::string_view, 10> infix = {"", " + ", " - ", " * ", " / ", "sqrt", "fma", "mad", "-", "cvt"};
}

std::vector<const model::Format*> Expr::formats() const {
  std::vector<const model::Format*> v = {input_format, output_format};
  for (const Instr& i : code)
    if (i.format) v.push_back(i.format);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string Expr::to_string() const {
  std::vector<std::string> s;
  for (const Instr& i : code) {
    const auto a = [&](int k) -> const std::string& { return s.at(i.arg[k]); };
    switch (i.op) {
      case Node::input: s.push_back(fmt::format("in{}", i.arg[0])); break;
      case Node::add:
      case Node::sub:
      case Node::mul:
      case Node::div: s.push_back(fmt::format("({}{}{})", a(0), infix[std::size_t(i.op)], a(1))); break;
      case Node::sqrt: s.push_back(fmt::format("sqrt({})", a(0))); break;
      case Node::fma: s.push_back(fmt::format("fma({}, {}, {})", a(0), a(1), a(2))); break;
      case Node::mad: s.push_back(fmt::format("({} * {} + {})", a(0), a(1), a(2))); break;
      case Node::neg: s.push_back(fmt::format("-{}", a(0))); break;
      case Node::cvt: s.push_back(fmt::format("{}({})", i.format->name, a(0))); break;
    }
  }
  std::string_view out = s.empty() ? std::string_view() : std::string_view(s.back());
  if (out.size() > 1 && out.front() == '(' && out.back() == ')') out = out.substr(1, out.size() - 2);
  return fmt::format("{} [{} -> {}]", out, input_format->name, output_format->name);
}

int arity(Node n) {
  switch (n) {
    case Node::input: return 0;
    case Node::sqrt:
    case Node::neg:
    case Node::cvt: return 1;
    case Node::fma:
    case Node::mad: return 3;
    default: return 2;
  }
}

std::string Expr::check() const {
  if (code.empty()) return "empty expression";
  if (!input_format || !output_format) return "the expression has no input or output format";
  for (std::size_t i = 0; i < code.size(); ++i) {
    const Instr& in = code[i];
    if (in.op == Node::input) {
      if (in.arg[0] >= inputs) return fmt::format("an input reads operand {} of {}", in.arg[0], inputs);
      continue;
    }
    if (!in.format) return fmt::format("instruction {} has no format", i);
    for (int k = 0; k < arity(in.op); ++k)
      if (in.arg[k] >= i) return fmt::format("instruction {} reads a later one", i);
  }
  if (format_of(code.size() - 1) != output_format) return "the last instruction is not in the output format";
  return "";
}

ExprBuilder::ExprBuilder(const model::Format& f, int inputs) : f_(&f) {
  e_.input_format = &f;
  e_.output_format = &f;
  e_.inputs = inputs;
}

int ExprBuilder::in(int i) {
  e_.code.push_back({Node::input, {std::uint8_t(i), 0, 0}, e_.input_format});
  return int(e_.code.size()) - 1;
}

int ExprBuilder::op(Node n, int a, int b, int c) {
  e_.code.push_back({n, {std::uint8_t(a), std::uint8_t(b), std::uint8_t(c)}, f_});
  return int(e_.code.size()) - 1;
}

int ExprBuilder::cvt(int a, const model::Format& to) {
  e_.code.push_back({Node::cvt, {std::uint8_t(a), 0, 0}, &to});
  return int(e_.code.size()) - 1;
}

Expr ExprBuilder::done(const model::Format* output) {
  if (output) e_.output_format = output;
  return e_;
}

Expr unary(Node n, const model::Format& f) {
  ExprBuilder b(f, 1);
  b.op(n, b.in(0));
  return b.done();
}

Expr binary(Node n, const model::Format& f) {
  ExprBuilder b(f, 2);
  const int x = b.in(0), y = b.in(1);
  b.op(n, x, y);
  return b.done();
}

Expr ternary(Node n, const model::Format& f) {
  ExprBuilder b(f, 3);
  const int x = b.in(0), y = b.in(1), z = b.in(2);
  b.op(n, x, y, z);
  return b.done();
}

Expr conversion(const model::Format& from, const model::Format& to) {
  ExprBuilder b(from, 1);
  b.cvt(b.in(0), to);
  return b.done(&to);
}

Expr transfer(const model::Format& f) {
  ExprBuilder b(f, 1);
  b.in(0);
  return b.done();
}

}  // namespace gp::backends
