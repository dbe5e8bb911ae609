// The limits every reader of outside input enforces (README "Input limits"). Input beyond them is
// rejected with an error naming where, never truncated and never a crash: they bound the memory a
// line takes and the recursion of whatever walks a parsed document.
#pragma once

#include <cstddef>

namespace gp::input {

// A batch line of `model scalar` / `model dot`: a dot product of the most products (1 + 2 * 1024
// fields with their scale factors, 16 hex digits each) fits many times over.
inline constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;
// A JSON file (result documents, profile files): the committed results take a few MB.
inline constexpr std::size_t kMaxJsonBytes = std::size_t{256} << 20;
// Nesting of JSON arrays and objects: results nest 6 deep. Recursive walks (comparison, dump,
// reports) stay far from the stack's end.
inline constexpr int kMaxJsonDepth = 64;
// Nesting of parentheses in a summation tree: a chain over the most products (model::kMaxDotK)
// nests one level per product.
inline constexpr int kMaxTreeDepth = 1025;

}  // namespace gp::input
