// The scalar expression IR: one small expression evaluated over n operand
// tuples. Operands are loaded from buffers in a storage format, every node computes in a format,
// and the result is stored in a format; backends compile it to GLSL, OpenCL C or CUDA, and the
// reference device evaluates it with the model. Contraction is controlled: `mul` and `add` are
// separate roundings (GLSL `precise`, FP_CONTRACT OFF), `mad` is a*b+c written as one source
// expression that the compiler may contract, `fma` is the fma() builtin.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/format.hpp"

namespace gp::backends {

enum class Node : std::uint8_t {
  input,  // operand `arg[0]` of the tuple, loaded from its buffer in Expr::input_format
  add,
  sub,
  mul,
  div,
  sqrt,
  fma,  // fma(a, b, c): the builtin
  mad,  // a * b + c as one source expression: contraction is the compiler's (and the unit's) choice
  neg,  // sign flip, exact
  cvt,  // conversion of arg[0] to `format`
};

struct Instr {
  Node op;
  std::uint8_t arg[3] = {0, 0, 0};        // input: operand index; otherwise indices of earlier instructions
  const model::Format* format = nullptr;  // the format the node computes in (cvt: the destination)
};

struct Expr {
  const model::Format* input_format = nullptr;   // buffers of operands
  const model::Format* output_format = nullptr;  // buffer of results; the last instruction is stored
  int inputs = 0;                                // operands per tuple
  std::vector<Instr> code;                       // in evaluation order

  // The formats the expression computes in, for capability checks.
  std::vector<const model::Format*> formats() const;
  // A one-line rendering, "(in0 - in1) + in1 [binary32]", for reports and program caches.
  std::string to_string() const;
  // Why the expression is malformed (an argument that is not an earlier instruction, an input
  // out of range, a missing format, a last node not in the output format), or an empty string.
  [[nodiscard]] std::string check() const;
  // The format instruction i's value is in.
  const model::Format* format_of(std::size_t i) const {
    return code[i].op == Node::input ? input_format : code[i].format;
  }
};

// Arguments a node reads (input reads an operand, not an instruction).
int arity(Node n);

// Builders for the common shapes; each computes in `f`, loads and stores in `f`.
class ExprBuilder {
 public:
  ExprBuilder(const model::Format& f, int inputs);
  int in(int i);
  int op(Node n, int a, int b = 0, int c = 0);
  int cvt(int a, const model::Format& to);
  Expr done(const model::Format* output = nullptr);

 private:
  Expr e_;
  const model::Format* f_;
};

// Single operations: `a op b`, `sqrt(a)`, `fma(a, b, c)`, `a*b+c`, cvt from one format to another.
Expr unary(Node n, const model::Format& f);
Expr binary(Node n, const model::Format& f);
Expr ternary(Node n, const model::Format& f);
Expr conversion(const model::Format& from, const model::Format& to);
// A load and a store with no operation: the transfer of a value through the device.
Expr transfer(const model::Format& f);

}  // namespace gp::backends
