// Batch decode (core/batch.h): any bytes, decoded under the default limits. A batch that
// decodes re-encodes to a message that decodes again to the same encoding (the codec loses
// nothing it accepted) and passes the same checks.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/batch.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string agent;
  uint64_t sequence = 0;
  trailmap::Result<trailmap::Batch> batch = trailmap::DecodeBatch(bytes, {}, &agent, &sequence);
  if (!batch.ok()) return 0;
  FUZZ_CHECK(batch->agent == agent && batch->sequence == sequence);
  const std::string once = trailmap::EncodeBatch(*batch);
  trailmap::Result<trailmap::Batch> again = trailmap::DecodeBatch(once);
  FUZZ_CHECK(again.ok(), "%s", again.status().ToString().c_str());
  FUZZ_CHECK(trailmap::EncodeBatch(*again) == once);
  return 0;
}
