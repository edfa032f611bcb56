// Errors carry the Python exception type JAX raises, so every front end can re-raise the same type.
#pragma once

#include <stdexcept>
#include <string>

namespace shardscope {

class Error : public std::runtime_error {
 public:
  Error(std::string python_type, const std::string& message)
      : std::runtime_error(message), python_type_(std::move(python_type)) {}

  // The Python class name, e.g. "ValueError" or "IndivisibleError".
  [[nodiscard]] const std::string& python_type() const { return python_type_; }

 private:
  std::string python_type_;
};

[[nodiscard]] inline Error value_error(const std::string& message) { return {"ValueError", message}; }
[[nodiscard]] inline Error type_error(const std::string& message) { return {"TypeError", message}; }
[[nodiscard]] inline Error not_implemented_error(const std::string& message) {
  return {"NotImplementedError", message};
}
[[nodiscard]] inline Error runtime_error(const std::string& message) { return {"RuntimeError", message}; }

}  // namespace shardscope
