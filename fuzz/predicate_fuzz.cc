// A predicate in the text form (core/predicate.h Parse). Properties of one that parses: its
// canonical text parses again to the same canonical text and JSON form; its JSON form parses to
// the same predicate; it evaluates without failing against fields derived from the input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/predicate_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  trailmap::fuzz::CheckPredicate(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
