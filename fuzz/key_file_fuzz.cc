// CURVE key files and the aggregator's clients list (net/curve_keys.h): any text. Byte 0 picks
// the parser (even: a key file, odd: a clients list); the rest is the text.
// Properties: a refusal says why; a parsed key file formats and parses back to itself; every
// listed key has a valid name, a 40-character Z85 key and a right, and hosts exactly when it may
// ingest; a Z85 text that decodes encodes back to itself.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "net/curve_keys.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace trailmap;
  if (text.size() % 5 == 0) {
    if (Result<std::string> bytes = Z85Decode(text); bytes.ok()) {
      FUZZ_CHECK(Z85Encode(*bytes) == text);
    }
  }
  if (data[0] % 2 == 0) {
    Result<CurveKeyFile> key = ParseCurveKeyFile(text, "fuzz.key");
    if (!key.ok()) {
      FUZZ_CHECK(!key.status().message().empty());
      return 0;
    }
    FUZZ_CHECK(ValidateZ85Key(key->public_key).ok());
    FUZZ_CHECK(key->secret_key.empty() || ValidateZ85Key(key->secret_key).ok());
    Result<CurveKeyFile> back = ParseCurveKeyFile(FormatCurveKeyFile(*key), "formatted");
    FUZZ_CHECK(back.ok(), "%s", back.status().ToString().c_str());
    FUZZ_CHECK(back->name == key->name && back->public_key == key->public_key &&
               back->secret_key == key->secret_key);
    return 0;
  }
  Result<std::vector<ClientKey>> keys = ParseClientKeys(text, "fuzz.clients");
  if (!keys.ok()) {
    FUZZ_CHECK(!keys.status().message().empty());
    return 0;
  }
  for (const ClientKey& k : *keys) {
    FUZZ_CHECK(IsValidKeyName(k.name));
    FUZZ_CHECK(ValidateZ85Key(k.public_key).ok());
    FUZZ_CHECK(k.ingest || k.query);
    FUZZ_CHECK(k.ingest == !k.hosts.empty());
    for (const std::string& h : k.hosts) {
      // A name that is its own pattern (no * or ?) is written exactly.
      if (h.find_first_of("*?") == std::string::npos) FUZZ_CHECK(k.MayWrite(h));
    }
  }
  return 0;
}
