// Batch decode (core/batch.h): any bytes, decoded under the default limits. A batch that
// decodes re-encodes to a message that decodes again to the same encoding (the codec loses
// nothing it accepted) and passes the same checks. Decoded item by item (what the aggregator
// does), what is left after the refusals is a batch with nothing left to refuse, and the
// verbatim reader of the agent's spool (DecodeBatchAsWritten) gives back every byte.
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
  trailmap::Refusals refused;
  trailmap::Result<trailmap::Batch> kept =
      trailmap::DecodeBatch(bytes, {}, nullptr, nullptr, &refused);
  if (kept.ok()) {
    const std::string encoded = trailmap::EncodeBatch(*kept);
    trailmap::Result<trailmap::Batch> strict = trailmap::DecodeBatch(encoded);
    FUZZ_CHECK(strict.ok(), "%s", strict.status().ToString().c_str());
    trailmap::Result<trailmap::Batch> verbatim = trailmap::DecodeBatchAsWritten(encoded);
    FUZZ_CHECK(verbatim.ok() && trailmap::EncodeBatch(*verbatim) == encoded);
  }
  trailmap::Result<trailmap::Batch> batch = trailmap::DecodeBatch(bytes, {}, &agent, &sequence);
  if (!batch.ok()) return 0;
  FUZZ_CHECK(kept.ok() && refused.empty());  // all or nothing agrees with item by item
  FUZZ_CHECK(batch->agent == agent && batch->sequence == sequence);
  const std::string once = trailmap::EncodeBatch(*batch);
  trailmap::Result<trailmap::Batch> again = trailmap::DecodeBatch(once);
  FUZZ_CHECK(again.ok(), "%s", again.status().ToString().c_str());
  FUZZ_CHECK(trailmap::EncodeBatch(*again) == once);
  return 0;
}
