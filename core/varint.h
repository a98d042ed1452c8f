// LEB128 varints: 7 bits a byte, low groups first, high bit set on every byte but the last.
// 300 = 0b1_0010_1100 encodes as AC 02. Used by the histogram and the storage encodings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trailmap {

__extension__ typedef unsigned __int128 uint128_t;

inline void PutVarint(std::string* out, uint128_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(static_cast<uint8_t>(v) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Reads one varint from in[*pos...] of at most max_bytes bytes; false if truncated, too long, not
// in its shortest form (a redundant last 0x00 byte), or past 128 bits.
inline bool GetVarint(std::string_view in, size_t* pos, uint128_t* v, int max_bytes = 10) {
  uint128_t result = 0;
  for (int shift = 0, n = 0; n < max_bytes; shift += 7, ++n) {
    if (*pos >= in.size()) return false;
    uint8_t b = static_cast<uint8_t>(in[(*pos)++]);
    if (shift > 121 && ((b & 0x7f) >> (128 - shift)) != 0) return false;  // past 128 bits
    result |= static_cast<uint128_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      // A last byte of 0 after others is a longer form of a shorter varint: refused, so every
      // value has one encoding (found by fuzz/histogram_fuzz and fuzz/stacks_fuzz).
      if (b == 0 && n > 0) return false;
      *v = result;
      return true;
    }
  }
  return false;
}

inline bool GetVarint64(std::string_view in, size_t* pos, uint64_t* v) {
  uint128_t w;
  if (!GetVarint(in, pos, &w, 10) || w > UINT64_MAX) return false;
  *v = static_cast<uint64_t>(w);
  return true;
}

}  // namespace trailmap
