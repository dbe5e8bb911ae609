// A candidate's answer to a probe's question, held in the question's own type: the model's types
// (an adder's AdderParams with its register format, a NaN policy, the F of a fused sum), so that a
// probe states and words its answer without reading it back from text. What the judgement
// (verdict.hpp) needs of an answer, its type T provides through one function found by ADL,
//   nlohmann::json answer_fields(const T&);
// its named values as a finding's parameters write them ({"guard_bits": 2, "rounding": "chop"}):
// the one edge where an answer becomes JSON. Answers are alike when their fields are: two
// candidates that differ only where the question does not look answer alike.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <typeinfo>
#include <utility>

namespace gp::audit {

class Answer {
 public:
  // No answer: the question does not apply to the candidate (the carry-out bits of an FMA chain).
  Answer() = default;
  template <class T>
  explicit Answer(T value) {
    auto held = std::make_shared<const Held<T>>(std::move(value));
    fields_ = answer_fields(held->value);
    held_ = std::move(held);
  }

  bool applies() const { return held_ != nullptr; }
  // The value in the question's type; the question's own functions call it with their T.
  template <class T>
  const T& as() const {
    const auto* held = dynamic_cast<const Held<T>*>(held_.get());
    if (!held) throw std::bad_cast();
    return held->value;
  }
  // The named values (null where the question does not apply).
  const nlohmann::json& fields() const { return fields_; }
  // The same text for answers alike (equal fields): what candidates are grouped by.
  std::string key() const { return fields_.dump(); }

 private:
  struct Base {
    virtual ~Base() = default;
  };
  template <class T>
  struct Held final : Base {
    explicit Held(T v) : value(std::move(v)) {}
    T value;
  };

  std::shared_ptr<const Base> held_;
  nlohmann::json fields_;
};

// A question's function of its own answer type as one of answers: say, a profile fragment.
template <class T, class R>
std::function<R(const Answer&)> typed(R (*f)(const T&)) {
  return [f](const Answer& a) { return f(a.as<T>()); };
}

}  // namespace gp::audit
