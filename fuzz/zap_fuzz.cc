// ZAP requests (aggregator/server/zap_handler.h) as libzmq, or a hostile peer of the inproc endpoint,
// could hand them to the handler: frames, each one length byte then that many bytes.
// Properties: a refusal says why; a CURVE request carries its 32-byte key as 40 Z85 characters
// that decode back to the frame; a listed key is admitted with its name as User-Id, an unlisted
// one refused; every reply has 6 frames, status 200 exactly when admitted.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "aggregator/server/zap_handler.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trailmap;
  using namespace trailmap::aggregator;
  std::vector<std::string> frames;
  size_t at = 0;
  while (at < size && frames.size() < 16) {
    const size_t n = std::min<size_t>(data[at], size - at - 1);
    frames.emplace_back(reinterpret_cast<const char*>(data) + at + 1, n);
    at += 1 + n;
  }
  // One listed key: the Z85 of 32 bytes 'A'.
  const std::vector<ClientKey> keys = {
      {"listed", Z85Encode(std::string(32, 'A')), true, false, {"*"}}};
  Result<ZapRequest> request = ParseZapRequest(frames);
  if (!request.ok()) {
    FUZZ_CHECK(!request.status().message().empty());
    const std::vector<std::string> reply = ZapReplyFrames("", ZapDecision{}, true);
    FUZZ_CHECK(reply.size() == 6 && reply[2] == "500");
    return 0;
  }
  if (request->mechanism == "CURVE") {
    FUZZ_CHECK(request->public_key.size() == 40);
    Result<std::string> bytes = Z85Decode(request->public_key);
    FUZZ_CHECK(bytes.ok() && *bytes == frames[6]);
  }
  const ZapDecision decision = DecideZap(*request, keys);
  FUZZ_CHECK(decision.admitted ==
             (request->mechanism == "CURVE" && request->public_key == keys[0].public_key));
  const std::vector<std::string> reply = ZapReplyFrames(request->request_id, decision);
  FUZZ_CHECK(reply.size() == 6 && reply[0] == "1.0" && reply[1] == request->request_id);
  FUZZ_CHECK((reply[2] == "200") == decision.admitted);
  FUZZ_CHECK(!decision.temporary && reply[2] != "300");  // 300 is the handler's: the cap
  FUZZ_CHECK(reply[4] == (decision.admitted ? "listed" : ""));
  return 0;
}
