// SystemCall: turns a failed system call's errno into an exception that says what was attempted.
#pragma once

#include <cerrno>
#include <string>
#include <system_error>

namespace lp {

// Thrown for a failed system call; what() reads "connect to site-b:7000: Connection refused".
class SystemError : public std::system_error {
 public:
  SystemError(const std::string& what, int error) : std::system_error(error, std::generic_category(), what) {}
};

// Returns ret unless it is negative, in which case it throws with errno and the context `what`.
template <typename T>
T SystemCall(const std::string& what, T ret) {
  if (ret < 0) throw SystemError(what, errno);
  return ret;
}

}  // namespace lp
