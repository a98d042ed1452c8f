// Histogram decode (core/histogram.h): the input is cut in two at a point its first byte
// picks; each half goes through Validate, Decode and MergeEncoded. Properties:
//   - Validate and Decode agree;
//   - the encoding is canonical: a decoded histogram encodes to exactly the bytes it came from,
//     unless it held more than kMaxTotalCount events (a store written before the bounds): then
//     Decode saturates it (core/histogram.h), and the saturated histogram is canonical;
//   - a merge adds counts exactly or refuses and changes nothing, and A+B == B+A; it refuses
//     only past kMaxTotalCount (core/counts.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/counts.h"
#include "core/histogram.h"
#include "fuzz/fuzz_check.h"

namespace {

using trailmap::Histogram;

// Decodes `part` and checks the decode-only properties; true when it decoded.
bool CheckOne(std::string_view part, Histogram* out) {
  const trailmap::Status valid = Histogram::Validate(part);
  trailmap::Result<Histogram> h = Histogram::Decode(part);
  FUZZ_CHECK(valid.ok() == h.ok(), "validate: %s decode: %s", valid.ToString().c_str(),
             h.status().ToString().c_str());
  if (!h.ok()) return false;
  if (h->saturated()) {
    // Past kMaxTotalCount Decode scales the counts down, so the bytes change; what
    // it gives must hold exactly kMaxTotalCount and be canonical itself.
    FUZZ_CHECK(h->count() == trailmap::kMaxTotalCount);
    trailmap::Result<Histogram> again = Histogram::Decode(h->Encode());
    FUZZ_CHECK(again.ok() && !again->saturated() && *again == *h &&
                   again->Encode() == h->Encode(),
               "a saturated histogram does not re-encode to itself");
  } else {
    FUZZ_CHECK(h->Encode() == part, "encoding is not canonical");
  }
  FUZZ_CHECK(h->empty() || (h->min() <= h->max() && h->Percentile(50) >= h->min() &&
                            h->Percentile(50) <= h->max()));
  *out = std::move(*h);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t cut = rest.empty() ? 0 : data[0] % (rest.size() + 1);
  const std::string_view a_text = rest.substr(0, cut), b_text = rest.substr(cut);
  Histogram a, b;
  const bool a_ok = CheckOne(a_text, &a);
  const bool b_ok = CheckOne(b_text, &b);
  if (!a_ok) return 0;
  Histogram merged = a;
  const trailmap::Status s = merged.MergeEncoded(b_text);
  if (!s.ok()) {
    FUZZ_CHECK(merged == a, "a refused merge changed the histogram");
    // Below kMaxTotalCount (core/counts.h) a merge of two valid histograms must not fail.
    FUZZ_CHECK(!b_ok || a.count() > trailmap::kMaxTotalCount ||
                   b.count() > trailmap::kMaxTotalCount - a.count(),
               "merge refused below the count bound: %s", s.ToString().c_str());
    return 0;
  }
  FUZZ_CHECK(b_ok, "MergeEncoded accepted what Decode refused");
  if (a.count() > trailmap::kMaxTotalCount || b.count() > trailmap::kMaxTotalCount - a.count()) {
    return 0;  // a merge past the bound may saturate: no exact sums to check
  }
  FUZZ_CHECK(merged.count() == a.count() + b.count() && merged.sum() == a.sum() + b.sum());
  Histogram other = b;
  other.Merge(a);  // saturates rather than fails (core/histogram.h)
  FUZZ_CHECK(other == merged, "merge is not commutative");
  trailmap::Result<Histogram> round = Histogram::Decode(merged.Encode());
  FUZZ_CHECK(round.ok() && *round == merged, "%s", round.status().ToString().c_str());
  return 0;
}
