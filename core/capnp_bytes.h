// Reading and writing flat Cap'n Proto messages from and to byte strings, with the traversal
// limits trailmap uses. Shared by the ingest (core/batch) and query (query/protocol) codecs.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/array.h>

#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace trailmap {

inline std::string MessageToBytes(capnp::MessageBuilder& message) {
  kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

// Holds an aligned copy of the bytes and a reader over them. Not copyable (the reader points
// into the copy). Any kj::Exception from a malformed message surfaces when fields are read, so
// callers read inside a try block.
class FlatMessage {
 public:
  explicit FlatMessage(std::string_view bytes, uint64_t traversal_words = 64ull << 20)
      : words_(kj::heapArray<capnp::word>((bytes.size() + 7) / 8)) {
    if (!bytes.empty()) std::memcpy(words_.begin(), bytes.data(), bytes.size());
    capnp::ReaderOptions options;
    options.traversalLimitInWords = traversal_words;
    reader_.emplace(words_.asPtr(), options);
  }
  FlatMessage(const FlatMessage&) = delete;
  FlatMessage& operator=(const FlatMessage&) = delete;

  template <typename T>
  typename T::Reader Root() {
    return reader_->getRoot<T>();
  }

 private:
  kj::Array<capnp::word> words_;
  std::optional<capnp::FlatArrayMessageReader> reader_;
};

}  // namespace trailmap
