#include "core/batch_split.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "schemas/ingest.capnp.h"

namespace trailmap {
namespace {

// Cap'n Proto sizes in words (flat, one segment): a struct is its data words and pointers; a list
// of structs is one tag word and its elements inline; text is its bytes and a NUL; data and lists
// of UInt32 are their bytes; every object rounds up to whole words.
template <typename T>
constexpr size_t kStruct = T::_capnpPrivate::dataWordSize + T::_capnpPrivate::pointerCount;

size_t TextWords(const std::string& s) { return (s.size() + 1 + 7) / 8; }
size_t DataWords(const std::string& s) { return (s.size() + 7) / 8; }

size_t SeriesWords(const SeriesDef& d) {
  return kStruct<ingest::SeriesDef> + TextWords(d.metric) + TextWords(d.unit) +
         TextWords(d.fields) + TextWords(d.description);
}
size_t HistogramWords(const HistogramDelta& h) {
  return kStruct<ingest::HistogramDelta> + DataWords(h.encoded);
}
constexpr size_t kScalarWords = kStruct<ingest::ScalarValue>;
constexpr size_t kStackCountWords = kStruct<ingest::StackCount>;
// A second with its histogram and scalar list tags (a stack list is added only when used).
constexpr size_t kSecondWords = kStruct<ingest::Second> + 2;
size_t FrameWords(const FrameDef& f) { return kStruct<ingest::FrameDef> + TextWords(f.name); }
size_t StackWords(const StackDef& d) {
  return kStruct<ingest::StackDef> + (d.frames.size() * 4 + 7) / 8;
}

// The envelope: root pointer and struct, agent and host, labels, and the series and seconds list
// tags (always written).
size_t EnvelopeWords(const Batch& b) {
  size_t words = 1 + kStruct<ingest::Batch> + TextWords(b.agent) + TextWords(b.host) + 1 +
                 b.labels.size() * kStruct<ingest::Label> + 2;
  for (const auto& [key, value] : b.labels) words += TextWords(key) + TextWords(value);
  return words;
}

size_t BytesOfWords(size_t words) { return 8 + 8 * words; }  // + the one-segment table

// Builds the cut batches one item at a time, starting a new one when the next item would pass a
// limit.
class Cutter {
 public:
  Cutter(const Batch& in, const BatchLimits& limits) : in_(in), limits_(limits) {
    for (size_t i = 0; i < in.stacks.size(); ++i) stack_index_.emplace(in.stacks[i].id, i);
    for (size_t i = 0; i < in.frames.size(); ++i) frame_index_.emplace(in.frames[i].id, i);
    Open();
  }

  void AddHistogram(int64_t time, HistogramDelta h) {
    auto need_of = [&] {
      Totals n = Need(time, h.series, HistogramWords(h));
      n.histograms = 1;
      return n;
    };
    Totals need = need_of();
    MakeRoom(&need, need_of);
    SecondDelta& second = Take(time, need);
    h.series = SeriesFor(h.series);
    second.histograms.push_back(std::move(h));
  }

  void AddScalar(int64_t time, ScalarValue v) {
    Totals need = Need(time, v.series, kScalarWords);
    MakeRoom(&need, [&] { return Need(time, v.series, kScalarWords); });
    SecondDelta& second = Take(time, need);
    v.series = SeriesFor(v.series);
    second.scalars.push_back(v);
  }

  void AddStack(int64_t time, StackCount c) {
    auto need_of = [&] {
      Totals n = Need(time, c.series, kStackCountWords);
      n.stack_counts = 1;
      if (n.seconds == 1 || out_.seconds.back().stacks.empty()) ++n.words;  // the list's tag
      StackNeed(c.stack, &n);
      return n;
    };
    Totals need = need_of();
    MakeRoom(&need, need_of);
    SecondDelta& second = Take(time, need);
    Define(c.stack);
    c.series = SeriesFor(c.series);
    second.stacks.push_back(c);
  }

  std::vector<Batch> Finish() {
    if (items_ > 0) done_.push_back(std::move(out_));
    return std::move(done_);
  }

 private:
  // What a batch holds, or what one item adds to it.
  struct Totals {
    size_t words = 0, series = 0, seconds = 0, histograms = 0, stack_counts = 0;
    size_t frame_defs = 0, stack_defs = 0;
  };

  // What an item adds besides its own kind's count: its words, its series, its second.
  Totals Need(int64_t time, uint32_t series, size_t item_words) const {
    Totals n;
    n.words = item_words;
    if (series < in_.series.size() && series_map_[series] == kAbsent) {
      n.series = 1;
      n.words += SeriesWords(in_.series[series]);
    }
    if (!open_second_ || out_.seconds.back().time != time) {
      n.seconds = 1;
      n.words += kSecondWords;
    }
    return n;
  }

  // Adds what defining stack `id` (and its frames not yet defined) would add.
  void StackNeed(uint32_t id, Totals* n) const {
    auto it = stack_index_.find(id);
    if (it == stack_index_.end() || stacks_.count(id)) return;
    const StackDef& def = in_.stacks[it->second];
    n->stack_defs = 1;
    n->words += StackWords(def) + (out_.stacks.empty() ? 1 : 0);
    std::unordered_set<uint32_t> counted;
    for (uint32_t f : def.frames) {
      auto fit = frame_index_.find(f);
      if (fit == frame_index_.end() || frames_.count(f) || !counted.insert(f).second) continue;
      if (out_.frames.empty() && counted.size() == 1) ++n->words;  // the list's tag
      ++n->frame_defs;
      n->words += FrameWords(in_.frames[fit->second]);
    }
  }

  bool Fits(const Totals& n) const {
    return BytesOfWords(have_.words + n.words) <= limits_.max_bytes &&
           have_.series + n.series <= limits_.max_series &&
           have_.seconds + n.seconds <= limits_.max_seconds &&
           have_.histograms + n.histograms <= limits_.max_histograms &&
           have_.stack_counts + n.stack_counts <= limits_.max_stack_counts &&
           have_.frame_defs + n.frame_defs <= limits_.max_frame_defs &&
           have_.stack_defs + n.stack_defs <= limits_.max_stack_defs;
  }

  // Closes the batch being built when `*need` does not fit in it, and then says what the item
  // needs in the new one. An item that fits nowhere goes alone.
  template <typename F>
  void MakeRoom(Totals* need, F need_of) {
    if (Fits(*need) || items_ == 0) return;
    done_.push_back(std::move(out_));
    Open();
    *need = need_of();
  }

  // The second the item goes into, with `need` counted as held.
  SecondDelta& Take(int64_t time, const Totals& need) {
    have_.words += need.words;
    have_.series += need.series;
    have_.seconds += need.seconds;
    have_.histograms += need.histograms;
    have_.stack_counts += need.stack_counts;
    have_.frame_defs += need.frame_defs;
    have_.stack_defs += need.stack_defs;
    ++items_;
    if (need.seconds > 0) {
      out_.seconds.push_back(SecondDelta{time, {}, {}, {}});
      open_second_ = true;
    }
    return out_.seconds.back();
  }

  uint32_t SeriesFor(uint32_t in) {
    if (in >= in_.series.size()) return in;  // left for the aggregator to refuse
    if (series_map_[in] == kAbsent) {
      series_map_[in] = static_cast<uint32_t>(out_.series.size());
      out_.series.push_back(in_.series[in]);
    }
    return series_map_[in];
  }

  void Define(uint32_t id) {
    auto it = stack_index_.find(id);
    if (it == stack_index_.end() || !stacks_.insert(id).second) return;
    const StackDef& def = in_.stacks[it->second];
    out_.stacks.push_back(def);
    for (uint32_t f : def.frames) {
      auto fit = frame_index_.find(f);
      if (fit != frame_index_.end() && frames_.insert(f).second) {
        out_.frames.push_back(in_.frames[fit->second]);
      }
    }
  }

  void Open() {
    out_ = Batch();
    out_.agent = in_.agent;
    out_.sequence = in_.sequence;
    out_.host = in_.host;
    out_.labels = in_.labels;
    out_.sent_at_ms = in_.sent_at_ms;
    series_map_.assign(in_.series.size(), kAbsent);
    stacks_.clear();
    frames_.clear();
    have_ = Totals();
    have_.words = EnvelopeWords(out_);
    items_ = 0;
    open_second_ = false;
  }

  static constexpr uint32_t kAbsent = UINT32_MAX;
  const Batch& in_;
  const BatchLimits& limits_;
  std::unordered_map<uint32_t, size_t> stack_index_, frame_index_;  // id -> index in in_
  std::vector<Batch> done_;
  // The batch being built.
  Batch out_;
  std::vector<uint32_t> series_map_;              // in_ series -> out_ series
  std::unordered_set<uint32_t> stacks_, frames_;  // ids defined in out_
  Totals have_;
  size_t items_ = 0;
  bool open_second_ = false;  // out_.seconds.back() may take more items
};

bool WithinLimits(const Batch& b, const BatchLimits& limits) {
  size_t histograms = 0, stack_counts = 0;
  for (const SecondDelta& s : b.seconds) {
    histograms += s.histograms.size();
    stack_counts += s.stacks.size();
  }
  return b.series.size() <= limits.max_series && b.seconds.size() <= limits.max_seconds &&
         histograms <= limits.max_histograms && stack_counts <= limits.max_stack_counts &&
         b.frames.size() <= limits.max_frame_defs && b.stacks.size() <= limits.max_stack_defs &&
         EncodedBatchBytes(b) <= limits.max_bytes;
}

}  // namespace

size_t EncodedBatchBytes(const Batch& b) {
  size_t words = EnvelopeWords(b);
  for (const SeriesDef& d : b.series) words += SeriesWords(d);
  for (const SecondDelta& s : b.seconds) {
    words += kSecondWords + s.scalars.size() * kScalarWords;
    for (const HistogramDelta& h : s.histograms) words += HistogramWords(h);
    if (!s.stacks.empty()) words += 1 + s.stacks.size() * kStackCountWords;
  }
  if (!b.frames.empty()) {
    words += 1;
    for (const FrameDef& f : b.frames) words += FrameWords(f);
  }
  if (!b.stacks.empty()) {
    words += 1;
    for (const StackDef& d : b.stacks) words += StackWords(d);
  }
  return BytesOfWords(words);
}

std::vector<Batch> SplitBatch(Batch batch, const BatchLimits& limits) {
  if (WithinLimits(batch, limits)) {
    std::vector<Batch> one;
    one.push_back(std::move(batch));
    return one;
  }
  Cutter cutter(batch, limits);
  for (SecondDelta& s : batch.seconds) {
    for (HistogramDelta& h : s.histograms) cutter.AddHistogram(s.time, std::move(h));
    for (const ScalarValue& v : s.scalars) cutter.AddScalar(s.time, v);
    for (const StackCount& c : s.stacks) cutter.AddStack(s.time, c);
  }
  std::vector<Batch> out = cutter.Finish();
  if (out.empty()) out.push_back(std::move(batch));  // no items: nothing to cut
  return out;
}

}  // namespace trailmap
