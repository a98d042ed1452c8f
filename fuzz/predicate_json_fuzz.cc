// A predicate in the JSON form (core/predicate_json.cc through Predicate::Parse): the input
// with a '{' in front, so every input takes the JSON path. Same properties as predicate_fuzz.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/predicate_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text = "{";
  text.append(reinterpret_cast<const char*>(data), size);
  trailmap::fuzz::CheckPredicate(text);
  return 0;
}
