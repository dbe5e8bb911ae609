// Errors cross module boundaries as values: Expected<T> holds a T or an Error with its message. It is
// [[nodiscard]]: an error dropped unread does not compile. A call that only fails returns
// std::optional<Error>, declared [[nodiscard]] where it is.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gp {

struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace gp
