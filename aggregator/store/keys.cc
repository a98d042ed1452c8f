#include "aggregator/store/keys.h"

#include <bit>
#include <cstring>

#include "core/varint.h"

namespace trailmap::aggregator {
namespace {

std::string TagAndId(char tag, uint32_t id) {
  std::string out(5, '\0');
  out[0] = tag;
  PutFixed32BE(out.data() + 1, id);
  return out;
}

std::string TagAndText(char tag, std::string_view text) {
  std::string out(1, tag);
  out.append(text);
  return out;
}

// Reads a varint length and that many bytes from in[*pos...].
bool GetLengthPrefixed(std::string_view in, size_t* pos, std::string* out) {
  uint64_t n = 0;
  if (!GetVarint64(in, pos, &n) || n > in.size() - *pos) return false;
  out->assign(in.substr(*pos, n));
  *pos += n;
  return true;
}

}  // namespace

std::string EncodeDataKey(const DataKey& k) {
  std::string out(kDataKeySize, '\0');
  EncodeDataKey(k, out.data());
  return out;
}

std::string DataKeyPrefix(uint32_t metric, int64_t second) {
  std::string out(12, '\0');
  PutFixed32BE(out.data(), metric);
  PutFixed64BE(out.data() + 4, OrderedSecond(second));
  return out;
}

std::string EncodeScalar(double value) {
  std::string out(8, '\0');
  PutFixed64BE(out.data(), std::bit_cast<uint64_t>(value));
  return out;
}

Result<double> DecodeScalar(std::string_view in) {
  if (in.size() != 8)
    return Status::Corruption("scalar value of " + std::to_string(in.size()) +
                              " bytes, expected 8");
  return std::bit_cast<double>(GetFixed64BE(in.data()));
}

std::string MetricNameKey(std::string_view name) { return TagAndText('m', name); }
std::string MetricIdKey(uint32_t id) { return TagAndId('M', id); }
std::string MetricDescriptionKey(uint32_t id) { return TagAndId('D', id); }
std::string HostNameKey(std::string_view name) { return TagAndText('h', name); }
std::string HostIdKey(uint32_t id) { return TagAndId('H', id); }
std::string SeriesNameKey(uint32_t metric, std::string_view fields) {
  std::string out = TagAndId('s', metric);
  out.append(fields);
  return out;
}
std::string SeriesIdKey(uint32_t id) { return TagAndId('S', id); }
std::string WatermarkKey(std::string_view agent) { return TagAndText('w', agent); }
std::string StackTextKey(std::string_view folded) { return TagAndText('k', folded); }
std::string StackIdKey(uint32_t id) { return TagAndId('K', id); }

namespace {

// 'r' or 'b' metric_id:u32 start:u64 (ordered like a data key's second).
std::string PendingKey(char tag, uint32_t metric, int64_t start) {
  std::string out(13, '\0');
  out[0] = tag;
  PutFixed32BE(out.data() + 1, metric);
  PutFixed64BE(out.data() + 5, OrderedSecond(start));
  return out;
}

bool DecodePendingKey(char tag, std::string_view in, uint32_t* metric, int64_t* start) {
  if (in.size() != 13 || in[0] != tag) return false;
  *metric = GetFixed32BE(in.data() + 1);
  *start = SecondFromOrdered(GetFixed64BE(in.data() + 5));
  return true;
}

}  // namespace

std::string PendingRollupKey(uint32_t metric, int64_t minute) {
  return PendingKey('r', metric, minute);
}

bool DecodePendingRollupKey(std::string_view in, uint32_t* metric, int64_t* minute) {
  return DecodePendingKey('r', in, metric, minute);
}

std::string PendingBlockKey(uint32_t metric, int64_t block) {
  return PendingKey('b', metric, block);
}

bool DecodePendingBlockKey(std::string_view in, uint32_t* metric, int64_t* block) {
  return DecodePendingKey('b', in, metric, block);
}

std::string EncodeId(uint32_t id) {
  std::string out(4, '\0');
  PutFixed32BE(out.data(), id);
  return out;
}

std::string EncodeWatermark(uint64_t sequence, int64_t last_seen) {
  std::string out(16, '\0');
  PutFixed64BE(out.data(), sequence);
  PutFixed64BE(out.data() + 8, static_cast<uint64_t>(last_seen));
  return out;
}

std::string HostThroughKey(uint32_t host) { return TagAndId('T', host); }

std::string EncodeSecond(int64_t second) {
  std::string out(8, '\0');
  PutFixed64BE(out.data(), static_cast<uint64_t>(second));
  return out;
}

Result<int64_t> DecodeSecond(std::string_view in) {
  if (in.size() != 8) {
    return Status::Corruption("second of " + std::to_string(in.size()) + " bytes, expected 8");
  }
  return static_cast<int64_t>(GetFixed64BE(in.data()));
}

std::string EncodeMetricRecord(const MetricRecord& r) {
  std::string out(1, static_cast<char>(r.kind));
  PutVarint(&out, r.unit.size());
  out.append(r.unit);
  out.append(r.name);
  return out;
}

std::string EncodeHostRecord(const HostRecord& r) {
  std::string out;
  PutVarint(&out, r.name.size());
  out.append(r.name);
  out.append(r.labels);
  return out;
}

std::string EncodeSeriesRecord(const SeriesRecord& r) {
  std::string out = EncodeId(r.metric);
  out.append(r.fields);
  return out;
}

Result<MetricRecord> DecodeMetricRecord(std::string_view in) {
  MetricRecord r;
  if (in.empty()) return Status::Corruption("metric record: empty");
  const auto kind = static_cast<uint8_t>(in[0]);
  if (kind > static_cast<uint8_t>(MetricKind::kStacks)) {
    return Status::Corruption("metric record: unknown kind " + std::to_string(kind));
  }
  r.kind = static_cast<MetricKind>(kind);
  size_t pos = 1;
  if (!GetLengthPrefixed(in, &pos, &r.unit)) return Status::Corruption("metric record: bad unit");
  r.name.assign(in.substr(pos));
  if (r.name.empty()) return Status::Corruption("metric record: empty name");
  return r;
}

Result<HostRecord> DecodeHostRecord(std::string_view in) {
  HostRecord r;
  size_t pos = 0;
  if (!GetLengthPrefixed(in, &pos, &r.name)) return Status::Corruption("host record: bad name");
  r.labels.assign(in.substr(pos));
  return r;
}

Result<SeriesRecord> DecodeSeriesRecord(std::string_view in) {
  if (in.size() < 4) return Status::Corruption("series record: shorter than 4 bytes");
  return SeriesRecord{GetFixed32BE(in.data()), std::string(in.substr(4))};
}

Result<WatermarkRecord> DecodeWatermarkRecord(std::string_view in) {
  if (in.size() != 8 && in.size() != 16) {
    return Status::Corruption("watermark of " + std::to_string(in.size()) +
                              " bytes, expected 8 or 16");
  }
  WatermarkRecord r{GetFixed64BE(in.data()), 0};
  if (in.size() == 16) r.last_seen = static_cast<int64_t>(GetFixed64BE(in.data() + 8));
  return r;
}

Result<uint64_t> DecodeWatermark(std::string_view in) {
  Result<WatermarkRecord> r = DecodeWatermarkRecord(in);
  if (!r.ok()) return r.status();
  return r->sequence;
}

}  // namespace trailmap::aggregator
