// A query decode (core/query_wire.h): the first byte picks a query or an answer, the rest is
// the message. Property: what decodes re-encodes to a message that decodes to the same
// encoding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/query_wire.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 1) {
    trailmap::Result<trailmap::Answer> answer = trailmap::DecodeAnswer(bytes);
    if (!answer.ok()) return 0;
    const std::string once = trailmap::EncodeAnswer(*answer);
    trailmap::Result<trailmap::Answer> again = trailmap::DecodeAnswer(once);
    FUZZ_CHECK(again.ok(), "%s", again.status().ToString().c_str());
    FUZZ_CHECK(trailmap::EncodeAnswer(*again) == once);
    return 0;
  }
  trailmap::Result<trailmap::Query> query = trailmap::DecodeQuery(bytes);
  if (!query.ok()) return 0;
  const std::string once = trailmap::EncodeQuery(*query);
  trailmap::Result<trailmap::Query> again = trailmap::DecodeQuery(once);
  FUZZ_CHECK(again.ok(), "%s", again.status().ToString().c_str());
  FUZZ_CHECK(trailmap::EncodeQuery(*again) == once);
  return 0;
}
