#include "core/query_wire.h"

#include <kj/exception.h>

#include "core/capnp_bytes.h"
#include "core/predicate.h"
#include "schemas/query.capnp.h"

namespace trailmap {
namespace {

std::string Str(capnp::Text::Reader t) { return std::string(t.begin(), t.size()); }
capnp::Text::Reader AsText(const std::string& s) { return capnp::Text::Reader(s.data(), s.size()); }

Status Check(const HistogramQuery& q) {
  if (Status s = ValidateMetricName(q.metric); !s.ok()) return s;
  if (q.step == 0) return Status::InvalidArgument("step must be at least 1 second");
  if (Result<Predicate> p = Predicate::Parse(q.where); !p.ok()) {
    return Status::InvalidArgument("--where: " + p.status().message());
  }
  if (q.to <= q.from) {
    return Status::InvalidArgument("empty time range: from " + std::to_string(q.from) + " is not before to " +
                                   std::to_string(q.to));
  }
  const uint64_t columns = (static_cast<uint64_t>(q.to - q.from) + q.step - 1) / q.step;
  if (columns > kMaxQueryColumns) {
    return Status::InvalidArgument(std::to_string(columns) + " columns, at most " +
                                   std::to_string(kMaxQueryColumns) + ": use a larger step");
  }
  return Status::Ok();
}

}  // namespace

std::string EncodeQuery(const Query& query) {
  capnp::MallocMessageBuilder message;
  auto q = message.initRoot<queryproto::Query>();
  q.setId(query.id);
  if (query.kind == Query::Kind::kMetrics) {
    q.setMetrics();
  } else {
    const HistogramQuery& h = query.histograms;
    auto hq = q.initHistograms();
    hq.setMetric(AsText(h.metric));
    hq.setFrom(h.from);
    hq.setTo(h.to);
    hq.setStep(h.step);
    hq.setGroupBy(AsText(h.group_by));
    auto hosts = hq.initHosts(static_cast<unsigned>(h.hosts.size()));
    for (size_t i = 0; i < h.hosts.size(); ++i) hosts.set(static_cast<unsigned>(i), AsText(h.hosts[i]));
    hq.setWhere(AsText(h.where));
  }
  return MessageToBytes(message);
}

Result<Query> DecodeQuery(std::string_view bytes) {
  if (bytes.size() < 8 || bytes.size() % 8 != 0) return Status::InvalidArgument("query is not a Cap'n Proto message");
  try {
    FlatMessage message(bytes);
    auto q = message.Root<queryproto::Query>();
    Query query;
    query.id = q.getId();
    switch (q.which()) {
      case queryproto::Query::METRICS:
        query.kind = Query::Kind::kMetrics;
        return query;
      case queryproto::Query::HISTOGRAMS: {
        auto hq = q.getHistograms();
        HistogramQuery& h = query.histograms;
        h.metric = Str(hq.getMetric());
        h.from = hq.getFrom();
        h.to = hq.getTo();
        h.step = hq.getStep();
        h.group_by = Str(hq.getGroupBy());
        for (auto host : hq.getHosts()) h.hosts.push_back(Str(host));
        h.where = Str(hq.getWhere());
        if (Status s = Check(h); !s.ok()) return s;
        return query;
      }
    }
    return Status::InvalidArgument("unknown query kind");
  } catch (const kj::Exception& e) {
    return Status::InvalidArgument(std::string("query is not a valid Cap'n Proto message: ") + e.getDescription().cStr());
  }
}

std::string EncodeAnswer(const Answer& answer) {
  capnp::MallocMessageBuilder message;
  auto a = message.initRoot<queryproto::Answer>();
  a.setId(answer.id);
  a.setShard(AsText(answer.shard));
  a.setError(AsText(answer.error));
  if (answer.kind == Query::Kind::kMetrics) {
    auto list = a.initMetrics(static_cast<unsigned>(answer.metrics.size()));
    for (size_t i = 0; i < answer.metrics.size(); ++i) {
      list[i].setName(AsText(answer.metrics[i].name));
      list[i].setKind(static_cast<ingest::MetricKind>(answer.metrics[i].kind));
      list[i].setUnit(AsText(answer.metrics[i].unit));
      list[i].setDescription(AsText(answer.metrics[i].description));
      const auto& keys = answer.metrics[i].fields;
      auto fields = list[i].initFields(static_cast<unsigned>(keys.size()));
      for (size_t k = 0; k < keys.size(); ++k) fields.set(static_cast<unsigned>(k), AsText(keys[k]));
    }
  } else {
    const HistogramAnswer& h = answer.histograms;
    auto ha = a.initHistograms();
    ha.setKind(static_cast<ingest::MetricKind>(h.kind));
    ha.setUnit(AsText(h.unit));
    auto groups = ha.initGroups(static_cast<unsigned>(h.groups.size()));
    for (size_t i = 0; i < h.groups.size(); ++i) groups.set(static_cast<unsigned>(i), AsText(h.groups[i]));
    auto cells = ha.initCells(static_cast<unsigned>(h.cells.size()));
    std::string buf;
    for (size_t i = 0; i < h.cells.size(); ++i) {
      cells[i].setColumn(h.cells[i].column);
      cells[i].setGroup(h.cells[i].group);
      buf.clear();
      h.cells[i].histogram.EncodeTo(&buf);
      cells[i].setEncoded(capnp::Data::Reader(reinterpret_cast<const kj::byte*>(buf.data()), buf.size()));
    }
  }
  return MessageToBytes(message);
}

Result<Answer> DecodeAnswer(std::string_view bytes) {
  if (bytes.size() < 8 || bytes.size() % 8 != 0) return Status::InvalidArgument("answer is not a Cap'n Proto message");
  try {
    FlatMessage message(bytes, 1ull << 30);
    auto a = message.Root<queryproto::Answer>();
    Answer answer;
    answer.id = a.getId();
    answer.shard = Str(a.getShard());
    answer.error = Str(a.getError());
    if (a.which() == queryproto::Answer::METRICS) {
      answer.kind = Query::Kind::kMetrics;
      for (auto m : a.getMetrics()) {
        MetricInfo info{Str(m.getName()), static_cast<MetricKind>(m.getKind()), Str(m.getUnit()), {}};
        for (auto key : m.getFields()) info.fields.push_back(Str(key));
        info.description = Str(m.getDescription());
        answer.metrics.push_back(std::move(info));
      }
      return answer;
    }
    auto ha = a.getHistograms();
    HistogramAnswer& h = answer.histograms;
    h.kind = static_cast<MetricKind>(ha.getKind());
    h.unit = Str(ha.getUnit());
    for (auto g : ha.getGroups()) h.groups.push_back(Str(g));
    h.cells.reserve(ha.getCells().size());
    for (auto c : ha.getCells()) {
      QueryCell cell;
      cell.column = c.getColumn();
      cell.group = c.getGroup();
      if (cell.group >= h.groups.size()) return Status::Corruption("answer cell refers to group " + std::to_string(cell.group) + " of " + std::to_string(h.groups.size()));
      auto d = c.getEncoded();
      if (Status s = cell.histogram.MergeEncoded({reinterpret_cast<const char*>(d.begin()), d.size()}); !s.ok()) {
        return Status::Corruption("answer cell " + std::to_string(cell.column) + ": " + s.message());
      }
      h.cells.push_back(std::move(cell));
    }
    return answer;
  } catch (const kj::Exception& e) {
    return Status::InvalidArgument(std::string("answer is not a valid Cap'n Proto message: ") + e.getDescription().cStr());
  }
}

}  // namespace trailmap
