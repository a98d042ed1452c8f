#include "core/batch.h"

#include <kj/exception.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <unordered_set>

#include "core/batch_split.h"
#include "core/capnp_bytes.h"
#include "core/counts.h"
#include "core/histogram.h"
#include "schemas/ingest.capnp.h"

namespace trailmap {
namespace {

std::string_view View(capnp::Text::Reader t) { return {t.begin(), t.size()}; }
std::string_view View(capnp::Data::Reader d) {
  return {reinterpret_cast<const char*>(d.begin()), d.size()};
}
capnp::Text::Reader AsText(const std::string& s) { return capnp::Text::Reader(s.data(), s.size()); }
capnp::Data::Reader AsData(const std::string& s) {
  return capnp::Data::Reader(reinterpret_cast<const kj::byte*>(s.data()), s.size());
}

Status CheckText(std::string_view what, std::string_view text, size_t max, bool allow_empty) {
  if (!allow_empty && text.empty()) return Status::InvalidArgument(std::string(what) + " is empty");
  if (text.size() > max) {
    return Status::InvalidArgument(std::string(what) + " is " + std::to_string(text.size()) +
                                   " bytes, at most " + std::to_string(max));
  }
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(std::string(what) + " has a control character");
    }
  }
  return Status::Ok();
}

Status Where(const std::string& where, const Status& s) {
  return Status(s.ok() ? s : Status::InvalidArgument(where + ": " + s.message()));
}

Status ReadDefinitions(ingest::Batch::Reader r, const BatchLimits& limits, Batch* b,
                       Refusals* refused, std::unordered_set<uint32_t>* refused_stacks);

// A Cap'n Proto message is whole 8-byte words.
Status CheckWholeWords(std::string_view bytes) {
  if (bytes.size() >= 8 && bytes.size() % 8 == 0) return Status::Ok();
  return Status::InvalidArgument("batch of " + std::to_string(bytes.size()) +
                                 " bytes is not a Cap'n Proto message (not whole words)");
}

// Cap'n Proto charges every object a reader follows against a traversal limit, a list of
// zero-sized structs one word per element although it takes no bytes on the wire. A batch or an
// ack is read with a limit of kReadsPerWord times its own words: the decoders below follow each
// pointer at most twice (a second's histogram and stack lists: once to count, once to read), so
// a message that is not hostile never reaches it, and one that claims millions of empty items
// in a few bytes, or points many times at the same list, fails after work bounded by its size
// (found by fuzz/batch_fuzz: 760 bytes whose seconds held millions of empty scalars took more
// than 10 s under the default limit of 64 Mi words).
constexpr uint64_t kReadsPerWord = 4;
uint64_t TraversalLimit(std::string_view bytes) { return (bytes.size() / 8 + 1) * kReadsPerWord; }

// The error of a message Cap'n Proto could not read, `what` being "batch" or "ack".
std::string NotCapnp(const char* what, std::string_view bytes, const kj::Exception& e) {
  std::string description = e.getDescription().cStr();
  if (description.find("traversal limit") != std::string::npos) {
    return std::string(what) + " of " + std::to_string(bytes.size()) +
           " bytes refers to more than " + std::to_string(kReadsPerWord) +
           " times its size (a list of empty items, or one list many times): " + description;
  }
  return std::string(what) + " is not a valid Cap'n Proto message: " + description;
}

// A series definition, checked alone.
Status CheckSeries(ingest::SeriesDef::Reader d, const BatchLimits& limits, SeriesDef* def) {
  def->metric = std::string(View(d.getMetric()));
  const auto kind = static_cast<uint16_t>(d.getKind());
  def->unit = std::string(View(d.getUnit()));
  def->fields = std::string(View(d.getFields()));
  def->description = std::string(View(d.getDescription()));
  if (kind > static_cast<uint16_t>(MetricKind::kStacks)) {
    return Status::InvalidArgument("unknown metric kind " + std::to_string(kind));
  }
  def->kind = static_cast<MetricKind>(kind);
  if (Status s = ValidateMetricName(def->metric); !s.ok()) return s;
  if (Status s = CheckText("unit", def->unit, 16, false); !s.ok()) return s;
  if (Status s = CheckText("description", def->description, limits.max_description, true);
      !s.ok()) {
    return s;
  }
  if (!def->fields.empty()) {
    if (Result<FieldSet> f = ParseFields(def->fields); !f.ok()) return f.status();
  }
  return Status::Ok();
}

// A histogram delta's encoding: it decodes (Histogram::Validate, with every bound it checks)
// and holds something.
Status CheckHistogram(std::string_view encoded) {
  if (Status s = Histogram::ValidateItem(encoded); !s.ok()) return s;
  // A valid encoding with no buckets is "01 00" (core/histogram.h).
  if (encoded.size() < 3) return Status::InvalidArgument("empty histogram");
  return Status::Ok();
}

// Where a batch's series went after the bad ones were left out.
class SeriesMap {
 public:
  void Refuse(std::string reason) {
    new_index_.push_back(kRefused);
    reasons_.push_back(std::move(reason));
  }
  void Keep(uint32_t to) {
    new_index_.push_back(to);
    reasons_.emplace_back();
  }
  // The new index of input series `i` if an item of kind `kind` may use it, else the reason.
  Result<uint32_t> Find(uint32_t i, const Batch& b, bool (*kind_ok)(MetricKind),
                        const char* kind_name) const {
    if (i >= new_index_.size()) {
      return Status::InvalidArgument("series index " + std::to_string(i) + " past the series list");
    }
    if (new_index_[i] == kRefused) {
      return Status::InvalidArgument("its series " + std::to_string(i) + " was refused (" +
                                     reasons_[i] + ")");
    }
    const SeriesDef& def = b.series[new_index_[i]];
    if (!kind_ok(def.kind)) {
      return Status::InvalidArgument("series " + def.metric + " is not " + kind_name);
    }
    return new_index_[i];
  }

 private:
  static constexpr uint32_t kRefused = UINT32_MAX;
  std::vector<uint32_t> new_index_;
  std::vector<std::string> reasons_;
};

bool IsDistribution(MetricKind k) { return k == MetricKind::kLatency || k == MetricKind::kSize; }
bool IsStacks(MetricKind k) { return k == MetricKind::kStacks; }
bool AnyKind(MetricKind) { return true; }

// Reads the batch; bad items go to `refused` (never null here).
Result<Batch> Read(ingest::Batch::Reader r, const BatchLimits& limits, Refusals* refused) {
  Batch b;
  b.agent = std::string(View(r.getAgent()));
  b.sequence = r.getSequence();
  b.host = std::string(View(r.getHost()));
  b.sent_at_ms = r.getSentAtMs();
  if (Status s = CheckText("agent id", b.agent, limits.max_text, false); !s.ok()) return s;
  if (b.sequence == 0) return Status::InvalidArgument("sequence 0 (sequences start at 1)");
  if (Status s = CheckText("host", b.host, limits.max_text, false); !s.ok()) return s;

  auto labels = r.getLabels();
  if (labels.size() > limits.max_labels) {
    return Status::InvalidArgument(std::to_string(labels.size()) + " labels, at most " +
                                   std::to_string(limits.max_labels));
  }
  for (auto l : labels)
    b.labels.emplace_back(std::string(View(l.getKey())), std::string(View(l.getValue())));
  if (Result<std::string> c = CanonicalFields(b.labels); !c.ok())
    return Where("labels", c.status());

  auto series = r.getSeries();
  if (series.size() > limits.max_series) {
    return Status::InvalidArgument(std::to_string(series.size()) + " series, at most " +
                                   std::to_string(limits.max_series));
  }
  auto seconds = r.getSeconds();
  if (seconds.size() > limits.max_seconds) {
    return Status::InvalidArgument(std::to_string(seconds.size()) + " seconds, at most " +
                                   std::to_string(limits.max_seconds));
  }
  size_t histograms = 0, stack_counts = 0;
  for (auto sr : seconds) {
    histograms += sr.getHistograms().size();
    stack_counts += sr.getStacks().size();
  }
  if (histograms > limits.max_histograms) {
    return Status::InvalidArgument("more than " + std::to_string(limits.max_histograms) +
                                   " histograms");
  }
  if (stack_counts > limits.max_stack_counts) {
    return Status::InvalidArgument("more than " + std::to_string(limits.max_stack_counts) +
                                   " stack counts");
  }
  std::unordered_set<uint32_t> refused_stacks;
  if (Status s = ReadDefinitions(r, limits, &b, refused, &refused_stacks); !s.ok()) return s;

  // Items from here on: each bad one is refused alone.
  SeriesMap map;
  b.series.reserve(series.size());
  for (uint32_t i = 0; i < series.size(); ++i) {
    SeriesDef def;
    Status s = CheckSeries(series[i], limits, &def);
    const std::string where = "series " + std::to_string(i) + " (" + def.metric.substr(0, 64) + ")";
    if (!s.ok()) {
      map.Refuse(s.message());
      refused->Add({RefusedItem::Kind::kSeries, 0, i, where + ": " + s.message()});
      continue;
    }
    map.Keep(static_cast<uint32_t>(b.series.size()));
    b.series.push_back(std::move(def));
  }

  b.seconds.reserve(seconds.size());
  for (uint32_t i = 0; i < seconds.size(); ++i) {
    auto sr = seconds[i];
    SecondDelta sd;
    sd.time = sr.getTime();
    const std::string where = "second " + std::to_string(i) + " (" + std::to_string(sd.time) + ")";
    const bool time_ok = sd.time >= limits.min_time && sd.time < limits.max_time;
    auto refuse = [&](RefusedItem::Kind kind, uint32_t j, const std::string& at, const Status& s) {
      refused->Add({kind, i, j, at + ": " + (time_ok ? s.message() : "time outside 1970..2100")});
    };
    auto hists = sr.getHistograms();
    sd.histograms.reserve(hists.size());
    for (uint32_t j = 0; j < hists.size(); ++j) {
      const std::string at = where + ", histogram " + std::to_string(j);
      Result<uint32_t> to = map.Find(hists[j].getSeries(), b, IsDistribution, "a distribution");
      HistogramDelta h{to.ok() ? *to : 0, std::string(View(hists[j].getEncoded()))};
      Status s = to.ok() ? CheckHistogram(h.encoded) : to.status();
      if (!s.ok() || !time_ok) {
        refuse(RefusedItem::Kind::kHistogram, j, at, s);
        continue;
      }
      sd.histograms.push_back(std::move(h));
    }
    auto scalars = sr.getScalars();
    for (uint32_t j = 0; j < scalars.size(); ++j) {
      const std::string at = where + ", scalar " + std::to_string(j);
      Result<uint32_t> to = map.Find(scalars[j].getSeries(), b, AnyKind, "");
      const double value = scalars[j].getValue();
      Status s = !to.ok()               ? to.status()
                 : std::isfinite(value) ? Status::Ok()
                                        : Status::InvalidArgument("value is not finite");
      if (!s.ok() || !time_ok) {
        refuse(RefusedItem::Kind::kScalar, j, at, s);
        continue;
      }
      sd.scalars.push_back({*to, value});
    }
    auto stacks = sr.getStacks();
    sd.stacks.reserve(stacks.size());
    for (uint32_t j = 0; j < stacks.size(); ++j) {
      const std::string at = where + ", stack count " + std::to_string(j);
      Result<uint32_t> to = map.Find(stacks[j].getSeries(), b, IsStacks, "of kind stacks");
      const StackCount c{to.ok() ? *to : 0, stacks[j].getStack(), stacks[j].getCount()};
      Status s = to.ok() ? Status::Ok() : to.status();
      if (s.ok() && refused_stacks.count(c.stack)) {
        s = Status::InvalidArgument("stack id " + std::to_string(c.stack) +
                                    ": its definition was refused");
      }
      if (s.ok() && c.count == 0) s = Status::InvalidArgument("count 0");
      if (s.ok() && c.count > kMaxItemCount) {
        s = Status::InvalidArgument("count " + std::to_string(c.count) + ", at most 2^40");
      }
      if (!s.ok() || !time_ok) {
        refuse(RefusedItem::Kind::kStackCount, j, at, s);
        continue;
      }
      sd.stacks.push_back(c);
    }
    if (!sd.histograms.empty() || !sd.scalars.empty() || !sd.stacks.empty()) {
      b.seconds.push_back(std::move(sd));
    }
  }
  return b;
}

// Frame and stack definitions: bounded in number (else the whole batch is refused); each one
// checked alone: unique id, a name that folds back into text, 1 .. max_stack_depth frames, none
// of them a refused frame. A bad one is refused with every definition of its id (which was meant
// is unknowable) and every stack using it; *refused_stacks gets the refused stack ids, whose
// counts are then refused too.
Status ReadDefinitions(ingest::Batch::Reader r, const BatchLimits& limits, Batch* b,
                       Refusals* refused, std::unordered_set<uint32_t>* refused_stacks) {
  auto frames = r.getFrames();
  if (frames.size() > limits.max_frame_defs) {
    return Status::InvalidArgument(std::to_string(frames.size()) + " frame definitions, at most " +
                                   std::to_string(limits.max_frame_defs));
  }
  auto stacks = r.getStacks();
  if (stacks.size() > limits.max_stack_defs) {
    return Status::InvalidArgument(std::to_string(stacks.size()) + " stack definitions, at most " +
                                   std::to_string(limits.max_stack_defs));
  }
  std::unordered_set<uint32_t> ids, twice, bad_frames;
  for (auto f : frames) {
    if (!ids.insert(f.getId()).second) twice.insert(f.getId());
  }
  b->frames.reserve(frames.size());
  for (uint32_t i = 0; i < frames.size(); ++i) {
    FrameDef f{frames[i].getId(), std::string(View(frames[i].getName()))};
    const std::string where = "frame " + std::to_string(i) + " (id " + std::to_string(f.id) + ")";
    Status s = twice.count(f.id) ? Status::InvalidArgument("id defined twice")
                                 : CheckText("name", f.name, limits.max_frame_bytes, false);
    if (s.ok() && f.name.find(';') != std::string::npos)
      s = Status::InvalidArgument("name has a ';'");
    if (!s.ok()) {
      bad_frames.insert(f.id);
      refused->Add({RefusedItem::Kind::kFrameDef, 0, i, where + ": " + s.message()});
      continue;
    }
    b->frames.push_back(std::move(f));
  }
  ids.clear();
  twice.clear();
  for (auto d : stacks) {
    if (!ids.insert(d.getId()).second) twice.insert(d.getId());
  }
  b->stacks.reserve(stacks.size());
  for (uint32_t i = 0; i < stacks.size(); ++i) {
    StackDef d;
    d.id = stacks[i].getId();
    const std::string where = "stack " + std::to_string(i) + " (id " + std::to_string(d.id) + ")";
    auto list = stacks[i].getFrames();
    std::string bad;
    if (twice.count(d.id)) {
      bad = "id defined twice";
    } else if (list.size() == 0) {
      bad = "no frames";
    } else if (list.size() > limits.max_stack_depth) {
      bad = std::to_string(list.size()) + " frames, at most " +
            std::to_string(limits.max_stack_depth);
    }
    if (bad.empty()) {
      d.frames.reserve(list.size());
      for (uint32_t f : list) {
        if (bad.empty() && bad_frames.count(f))
          bad = "frame id " + std::to_string(f) + " was refused";
        d.frames.push_back(f);
      }
    }
    if (!bad.empty()) {
      refused_stacks->insert(d.id);
      refused->Add({RefusedItem::Kind::kStackDef, 0, i, where + ": " + bad});
      continue;
    }
    b->stacks.push_back(std::move(d));
  }
  return Status::Ok();
}

}  // namespace

const char* MetricKindName(MetricKind kind) {
  switch (kind) {
    case MetricKind::kLatency:
      return "latency";
    case MetricKind::kSize:
      return "size";
    case MetricKind::kScalar:
      return "scalar";
    case MetricKind::kStacks:
      return "stacks";
  }
  return "unknown";
}

const char* AckStatusName(Ack::Status status) {
  switch (status) {
    case Ack::Status::kApplied:
      return "applied";
    case Ack::Status::kDuplicate:
      return "duplicate";
    case Ack::Status::kRejected:
      return "rejected";
    case Ack::Status::kOutOfOrder:
      return "out of order";
    case Ack::Status::kNeedDictionary:
      return "need dictionary";
    case Ack::Status::kRetryLater:
      return "retry later";
    case Ack::Status::kUnauthorized:
      return "unauthorized";
  }
  return "unknown";
}

std::string EncodeBatch(const Batch& batch) {
  // One segment of exactly the message's size: one allocation, and EncodedBatchBytes exact.
  capnp::MallocMessageBuilder message((EncodedBatchBytes(batch) - 8) / 8);
  auto b = message.initRoot<ingest::Batch>();
  b.setAgent(AsText(batch.agent));
  b.setSequence(batch.sequence);
  b.setHost(AsText(batch.host));
  b.setSentAtMs(batch.sent_at_ms);
  auto labels = b.initLabels(static_cast<unsigned>(batch.labels.size()));
  for (size_t i = 0; i < batch.labels.size(); ++i) {
    labels[i].setKey(AsText(batch.labels[i].first));
    labels[i].setValue(AsText(batch.labels[i].second));
  }
  auto series = b.initSeries(static_cast<unsigned>(batch.series.size()));
  for (size_t i = 0; i < batch.series.size(); ++i) {
    const SeriesDef& d = batch.series[i];
    series[i].setMetric(AsText(d.metric));
    series[i].setKind(static_cast<ingest::MetricKind>(d.kind));
    series[i].setUnit(AsText(d.unit));
    series[i].setFields(AsText(d.fields));
    series[i].setDescription(AsText(d.description));
  }
  auto seconds = b.initSeconds(static_cast<unsigned>(batch.seconds.size()));
  for (size_t i = 0; i < batch.seconds.size(); ++i) {
    const SecondDelta& sd = batch.seconds[i];
    seconds[i].setTime(sd.time);
    auto hists = seconds[i].initHistograms(static_cast<unsigned>(sd.histograms.size()));
    for (size_t j = 0; j < sd.histograms.size(); ++j) {
      hists[j].setSeries(sd.histograms[j].series);
      hists[j].setEncoded(AsData(sd.histograms[j].encoded));
    }
    auto scalars = seconds[i].initScalars(static_cast<unsigned>(sd.scalars.size()));
    for (size_t j = 0; j < sd.scalars.size(); ++j) {
      scalars[j].setSeries(sd.scalars[j].series);
      scalars[j].setValue(sd.scalars[j].value);
    }
    if (!sd.stacks.empty()) {
      auto counts = seconds[i].initStacks(static_cast<unsigned>(sd.stacks.size()));
      for (size_t j = 0; j < sd.stacks.size(); ++j) {
        counts[j].setSeries(sd.stacks[j].series);
        counts[j].setStack(sd.stacks[j].stack);
        counts[j].setCount(sd.stacks[j].count);
      }
    }
  }
  if (!batch.frames.empty()) {
    auto frames = b.initFrames(static_cast<unsigned>(batch.frames.size()));
    for (size_t i = 0; i < batch.frames.size(); ++i) {
      frames[i].setId(batch.frames[i].id);
      frames[i].setName(AsText(batch.frames[i].name));
    }
  }
  if (!batch.stacks.empty()) {
    auto stacks = b.initStacks(static_cast<unsigned>(batch.stacks.size()));
    for (size_t i = 0; i < batch.stacks.size(); ++i) {
      stacks[i].setId(batch.stacks[i].id);
      auto list = stacks[i].initFrames(static_cast<unsigned>(batch.stacks[i].frames.size()));
      for (size_t j = 0; j < batch.stacks[i].frames.size(); ++j)
        list.set(static_cast<unsigned>(j), batch.stacks[i].frames[j]);
    }
  }
  return MessageToBytes(message);
}

Result<Batch> DecodeBatch(std::string_view bytes, const BatchLimits& limits, std::string* agent,
                          uint64_t* sequence, Refusals* refused) {
  if (Status s = CheckWholeWords(bytes); !s.ok()) return s;
  try {
    FlatMessage message(bytes, TraversalLimit(bytes));
    auto root = message.Root<ingest::Batch>();
    // The agent id only when it is valid, so a caller never keeps state under a bad one.
    const std::string_view agent_id = View(root.getAgent());
    if (agent && CheckText("agent id", agent_id, limits.max_text, false).ok()) *agent = agent_id;
    if (sequence) *sequence = root.getSequence();
    // Over the size limit: refused whole, but with its envelope read so the ack names it.
    if (bytes.size() > limits.max_bytes) {
      return Status::InvalidArgument("batch is " + std::to_string(bytes.size()) +
                                     " bytes, at most " + std::to_string(limits.max_bytes));
    }
    Refusals all_or_nothing;
    Result<Batch> batch = Read(root, limits, refused ? refused : &all_or_nothing);
    if (batch.ok() && !all_or_nothing.empty()) {
      return Status::InvalidArgument(all_or_nothing.named.front().reason);
    }
    return batch;
  } catch (const kj::Exception& e) {
    if (refused) *refused = {};
    return Status::InvalidArgument(NotCapnp("batch", bytes, e));
  } catch (const std::exception& e) {
    if (refused) *refused = {};
    return Status::InvalidArgument(std::string("batch could not be read: ") + e.what());
  }
}

bool PeekBatchEnvelope(std::string_view bytes, size_t max_agent, std::string* agent,
                       uint64_t* sequence) {
  if (!CheckWholeWords(bytes).ok()) return false;
  try {
    FlatMessage message(bytes, TraversalLimit(bytes));
    auto root = message.Root<ingest::Batch>();
    const std::string_view id = View(root.getAgent());
    if (id.empty() || id.size() > max_agent) return false;
    *agent = id;
    *sequence = root.getSequence();
    return true;
  } catch (const kj::Exception&) {
    return false;
  }
}

Result<Batch> DecodeBatchAsWritten(std::string_view bytes) {
  if (Status s = CheckWholeWords(bytes); !s.ok()) return s;
  try {
    FlatMessage message(bytes);
    auto r = message.Root<ingest::Batch>();
    Batch b;
    b.agent = std::string(View(r.getAgent()));
    b.sequence = r.getSequence();
    b.host = std::string(View(r.getHost()));
    b.sent_at_ms = r.getSentAtMs();
    for (auto l : r.getLabels()) {
      b.labels.emplace_back(std::string(View(l.getKey())), std::string(View(l.getValue())));
    }
    for (auto d : r.getSeries()) {
      b.series.push_back({std::string(View(d.getMetric())), static_cast<MetricKind>(d.getKind()),
                          std::string(View(d.getUnit())), std::string(View(d.getFields())),
                          std::string(View(d.getDescription()))});
    }
    for (auto sr : r.getSeconds()) {
      SecondDelta& sd = b.seconds.emplace_back();
      sd.time = sr.getTime();
      for (auto h : sr.getHistograms()) {
        sd.histograms.push_back({h.getSeries(), std::string(View(h.getEncoded()))});
      }
      for (auto v : sr.getScalars()) sd.scalars.push_back({v.getSeries(), v.getValue()});
      for (auto c : sr.getStacks())
        sd.stacks.push_back({c.getSeries(), c.getStack(), c.getCount()});
    }
    for (auto f : r.getFrames()) b.frames.push_back({f.getId(), std::string(View(f.getName()))});
    for (auto d : r.getStacks()) {
      StackDef& def = b.stacks.emplace_back();
      def.id = d.getId();
      for (uint32_t f : d.getFrames()) def.frames.push_back(f);
    }
    return b;
  } catch (const kj::Exception& e) {
    return Status::InvalidArgument(std::string("batch is not a valid Cap'n Proto message: ") +
                                   e.getDescription().cStr());
  }
}

const char* RefusedKindName(RefusedItem::Kind kind) {
  switch (kind) {
    case RefusedItem::Kind::kSeries:
      return "series";
    case RefusedItem::Kind::kHistogram:
      return "histogram";
    case RefusedItem::Kind::kScalar:
      return "scalar";
    case RefusedItem::Kind::kStackCount:
      return "stack count";
    case RefusedItem::Kind::kFrameDef:
      return "frame definition";
    case RefusedItem::Kind::kStackDef:
      return "stack definition";
  }
  return "unknown";
}

void Refusals::Add(RefusedItem item) {
  ++total;
  if (named.size() < kMaxNamedRefusals) named.push_back(std::move(item));
}

std::string EncodeAck(const Ack& ack) {
  capnp::MallocMessageBuilder message;
  auto a = message.initRoot<ingest::Ack>();
  a.setSequence(ack.sequence);
  a.setStatus(static_cast<ingest::Ack::Status>(ack.status));
  a.setReason(AsText(ack.reason));
  a.setExpected(ack.expected);
  a.setRetryAfterMs(ack.retry_after_ms);
  if (!ack.refused.empty()) {
    const size_t n = std::min(ack.refused.named.size(), kMaxNamedRefusals);
    auto list = a.initRefused(static_cast<unsigned>(n));
    for (size_t i = 0; i < n; ++i) {
      const RefusedItem& item = ack.refused.named[i];
      list[i].setKind(static_cast<ingest::RefusedItem::Kind>(item.kind));
      list[i].setSecond(item.second);
      list[i].setIndex(item.index);
      list[i].setReason(AsText(item.reason));
    }
    a.setRefusedTotal(std::max<uint64_t>(ack.refused.total, n));
  }
  return MessageToBytes(message);
}

Result<Ack> DecodeAck(std::string_view bytes) {
  if (bytes.size() < 8 || bytes.size() % 8 != 0)
    return Status::InvalidArgument("ack is not a Cap'n Proto message");
  try {
    FlatMessage message(bytes, TraversalLimit(bytes));
    auto r = message.Root<ingest::Ack>();
    Ack ack;
    ack.sequence = r.getSequence();
    const auto status = static_cast<uint16_t>(r.getStatus());
    if (status > static_cast<uint16_t>(Ack::Status::kUnauthorized)) {
      return Status::InvalidArgument("ack has unknown status " + std::to_string(status));
    }
    ack.status = static_cast<Ack::Status>(status);
    ack.reason = std::string(View(r.getReason()));
    ack.expected = r.getExpected();
    ack.retry_after_ms = r.getRetryAfterMs();
    auto refused = r.getRefused();
    if (refused.size() > kMaxNamedRefusals) {  // EncodeAck names at most that many
      return Status::InvalidArgument("ack names " + std::to_string(refused.size()) +
                                     " refused items, at most " +
                                     std::to_string(kMaxNamedRefusals));
    }
    for (auto item : refused) {
      const auto kind = static_cast<uint16_t>(item.getKind());
      if (kind > static_cast<uint16_t>(RefusedItem::Kind::kStackDef)) {
        return Status::InvalidArgument("ack names a refused item of unknown kind " +
                                       std::to_string(kind));
      }
      ack.refused.named.push_back({static_cast<RefusedItem::Kind>(kind), item.getSecond(),
                                   item.getIndex(), std::string(View(item.getReason()))});
    }
    ack.refused.total = std::max<uint64_t>(r.getRefusedTotal(), ack.refused.named.size());
    return ack;
  } catch (const kj::Exception& e) {
    return Status::InvalidArgument(NotCapnp("ack", bytes, e));
  }
}

}  // namespace trailmap
