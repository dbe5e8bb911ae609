// Errors cross module boundaries as values: Expected<T> holds a T or an Error with its kind (what a
// caller decides on) and its message (what a person reads). It is [[nodiscard]]: an error dropped
// unread does not compile. A call that only fails returns std::optional<Error>, declared
// [[nodiscard]] where it is.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gp {

// What went wrong, in the terms a caller acts on; the message says it to a person.
enum class ErrorKind {
  failed,       // a driver or device call failed (the default: a failure nothing below names)
  unsupported,  // the device, its driver or this build lacks what was asked for
  lost,         // the device or its context is lost: every later call on it fails too
  invalid,      // an input (a profile, a document, a batch, an argument) is malformed or refused
  io,           // a file or folder could not be read or written
  compile,      // a kernel did not compile or load
};

struct Error {
  // First, and the other members initialised, so that Error{"text"} is a failure with that message.
  std::string message;
  ErrorKind kind = ErrorKind::failed;
  // The input's key at fault, where a caller may leave that key out and retry (unit_from_json: the
  // unit's key, "div"); empty otherwise.
  std::string key = {};

  // The same error told anew, a message that wraps this one's: the kind and key stay.
  Error retold(std::string new_message) const {
    Error e = *this;
    e.message = std::move(new_message);
    return e;
  }
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
