// Ack decode (core/batch.h): any bytes. An ack that decodes re-encodes to the same ack.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/batch.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  trailmap::Result<trailmap::Ack> ack = trailmap::DecodeAck(bytes);
  if (!ack.ok()) return 0;
  trailmap::Result<trailmap::Ack> again = trailmap::DecodeAck(trailmap::EncodeAck(*ack));
  FUZZ_CHECK(again.ok(), "%s", again.status().ToString().c_str());
  FUZZ_CHECK(again->sequence == ack->sequence && again->status == ack->status &&
             again->reason == ack->reason && again->expected == ack->expected);
  return 0;
}
