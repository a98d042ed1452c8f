// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing past U+10FFFF. JSON
// documents, protobuf string fields and the page can hold only such text, so whatever a client
// sends is checked (or repaired) here before it reaches one of them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trailmap {

// The length of the well-formed sequence at text[at] (1 to 4), or 0 when there is none there.
size_t Utf8SequenceAt(std::string_view text, size_t at);

// Whether all of `text` is well-formed UTF-8.
bool IsValidUtf8(std::string_view text);

// `text` with every byte that is not part of a well-formed sequence replaced by U+FFFD.
std::string ValidUtf8(std::string_view text);

}  // namespace trailmap
