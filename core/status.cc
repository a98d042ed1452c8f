#include "core/status.h"

namespace trailmap {

std::string Status::ToString() const {
  const char* name = "ok";
  switch (code_) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      name = "invalid argument";
      break;
    case Code::kCorruption:
      name = "corruption";
      break;
    case Code::kNotFound:
      name = "not found";
      break;
    case Code::kUnavailable:
      name = "unavailable";
      break;
    case Code::kResourceExhausted:
      name = "resource exhausted";
      break;
    case Code::kIOError:
      name = "I/O error";
      break;
    case Code::kPermissionDenied:
      name = "permission denied";
      break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace trailmap
