#include "aggregator/store/aggregates.h"

#include <algorithm>
#include <mutex>

#include "aggregator/store/keys.h"
#include "core/series.h"

namespace trailmap::aggregator {
namespace {

std::string IdKey(char tag, uint32_t id) {
  std::string key(5, tag);
  PutFixed32BE(key.data() + 1, id);
  return key;
}

std::string NameKey(char tag, std::string_view text) {
  std::string key(1, tag);
  key += text;
  return key;
}

std::vector<std::string> SplitNames(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    out.emplace_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::string AggregateCompleteKey(std::string_view field) { return NameKey('A', field); }

Result<bool> Aggregates::Restore(std::string_view key, std::string_view value) {
  if (key.empty()) return false;
  const char tag = key[0];
  std::unique_lock lock(mu_);
  if (tag == 'A') {
    int64_t from = INT64_MIN;  // "": complete from the beginning
    if (!value.empty()) {
      Result<int64_t> second = DecodeSecond(value);
      if (!second.ok()) return Status::Corruption("aggregate marker: " + second.status().message());
      from = *second;
    }
    complete_[std::string(key.substr(1))] = from;
    return true;
  }
  if (tag != 'G' && tag != 'V') return tag == 'g' || tag == 'v';  // the name maps are redundant
  if (key.size() != 5) return Status::Corruption("aggregate id key of " + std::to_string(key.size()) + " bytes");
  const uint32_t id = GetFixed32BE(key.data() + 1);
  std::vector<std::string>& names = tag == 'G' ? groups_ : values_;
  std::unordered_map<std::string, uint32_t>& ids = tag == 'G' ? group_ids_ : value_ids_;
  if (id == 0 || id > (1u << 24)) return Status::Corruption("aggregate id " + std::to_string(id));
  if (names.size() < id) names.resize(id);
  names[id - 1] = std::string(value);
  ids[std::string(value)] = id;
  return true;
}

std::vector<std::string> Aggregates::CompleteMarkers(bool empty) {
  std::unique_lock lock(mu_);
  std::vector<std::string> keys;
  if (!empty || !options_.enabled) return keys;
  std::vector<std::string> fields{""};
  fields.insert(fields.end(), options_.fields.begin(), options_.fields.end());
  for (const std::string& f : fields) {
    if (complete_.count(f) > 0) continue;
    complete_[f] = INT64_MIN;
    keys.push_back(AggregateCompleteKey(f));
  }
  return keys;
}

std::vector<std::string> Aggregates::IncompleteFields() const {
  std::shared_lock lock(mu_);
  std::vector<std::string> out;
  if (!options_.enabled) return out;
  std::vector<std::string> fields{""};
  fields.insert(fields.end(), options_.fields.begin(), options_.fields.end());
  for (const std::string& f : fields) {
    if (complete_.count(f) == 0) out.push_back(f);
  }
  return out;
}

void Aggregates::MarkComplete(const std::string& field, int64_t from) {
  std::unique_lock lock(mu_);
  complete_[field] = from;
}

std::vector<std::string> Aggregates::Incomplete() const {
  std::vector<std::string> out;
  for (const std::string& f : IncompleteFields()) out.push_back(f.empty() ? "(fleet)" : f);
  return out;
}

uint32_t Aggregates::InternLocked(std::vector<std::string>* names,
                                  std::unordered_map<std::string, uint32_t>* ids,
                                  const std::string& text, char tag, MetaPuts* meta_puts) {
  auto it = ids->find(text);
  if (it != ids->end()) return it->second;
  names->push_back(text);
  const uint32_t id = static_cast<uint32_t>(names->size());
  ids->emplace(text, id);
  std::string id_bytes(4, '\0');
  PutFixed32BE(id_bytes.data(), id);
  meta_puts->emplace_back(NameKey(static_cast<char>(tag), text), id_bytes);
  meta_puts->emplace_back(IdKey(static_cast<char>(tag - 'a' + 'A'), id), text);
  return id;
}

void Aggregates::SetCluster(Cluster cluster) {
  options_.cluster = std::move(cluster);
  host_group_.clear();  // cached by epoch index, and an epoch not begun may have changed
  last_host_.clear();
  last_group_ = {SIZE_MAX, 0};
}

uint32_t Aggregates::GroupFor(std::string_view host, int64_t second, MetaPuts* meta_puts) {
  // The host's owner group in the epoch of `second`, cached per host until its epoch changes.
  size_t epoch = 0;
  if (options_.cluster) {
    const Cluster& c = *options_.cluster;
    epoch = static_cast<size_t>(&c.EpochAt(second) - c.epochs.data());
  }
  if (host == last_host_ && last_group_.first == epoch) return last_group_.second;
  auto cached = host_group_.find(std::string(host));
  uint32_t group = 0;
  if (cached != host_group_.end() && cached->second.first == epoch) {
    group = cached->second.second;
  } else {
    group = InternGroup(OwnerList(options_.cluster, host, second), meta_puts);
    host_group_[std::string(host)] = {epoch, group};
  }
  last_host_ = std::string(host);
  last_group_ = {epoch, group};
  return group;
}

void Aggregates::ValuesFor(std::string_view fields, std::string_view labels,
                           std::vector<uint32_t>* values, MetaPuts* meta_puts) {
  values->assign(1, 0);  // the fleet
  for (const std::string& f : options_.fields) {
    values->push_back(InternValue(ValueText(f, fields, labels), meta_puts));
  }
}

std::string Aggregates::OwnerList(const std::optional<Cluster>& cluster, std::string_view host,
                                  int64_t second) {
  std::string owners;
  if (!cluster) return owners;
  for (size_t o : cluster->Owners(host, second)) {
    owners += (owners.empty() ? "" : ",") + cluster->members[o].name;
  }
  return owners;
}

std::string Aggregates::ValueText(std::string_view field, std::string_view fields,
                                  std::string_view labels) {
  std::string_view v = FieldValue(fields, field);
  if (v.empty()) v = FieldValue(labels, field);
  return std::string(field) + "=" + std::string(v.empty() ? std::string_view(kNoGroupValue) : v);
}

uint32_t Aggregates::InternGroup(const std::string& owners, MetaPuts* meta_puts) {
  std::unique_lock lock(mu_);
  return InternLocked(&groups_, &group_ids_, owners, 'g', meta_puts);
}

uint32_t Aggregates::InternValue(const std::string& text, MetaPuts* meta_puts) {
  {
    std::shared_lock read(mu_);
    auto it = value_ids_.find(text);
    if (it != value_ids_.end()) return it->second;
  }
  std::unique_lock lock(mu_);
  return InternLocked(&values_, &value_ids_, text, 'v', meta_puts);
}

Aggregates::Mark Aggregates::mark() const {
  std::shared_lock lock(mu_);
  return Mark{groups_.size(), values_.size()};
}

void Aggregates::Rollback(const Mark& mark) {
  std::unique_lock lock(mu_);
  for (size_t i = mark.groups; i < groups_.size(); ++i) group_ids_.erase(groups_[i]);
  for (size_t i = mark.values; i < values_.size(); ++i) value_ids_.erase(values_[i]);
  if (groups_.size() > mark.groups) {  // the caches may name a group taken back
    host_group_.clear();
    last_host_.clear();
    last_group_ = {SIZE_MAX, 0};
  }
  groups_.resize(std::min(groups_.size(), mark.groups));
  values_.resize(std::min(values_.size(), mark.values));
}

namespace {

// Whether a preference of the query (core/cluster.h "Replicas by completeness") reorders the
// owners of a host this member owns: then an owner group's aggregate no longer matches the
// choice, which is made host by host, so the hosts are read instead.
bool PreferenceConcerns(const ReplicaScope& scope) {
  const Cluster& c = scope.cluster;
  for (const ReplicaPreference& p : scope.selection.prefer) {
    for (size_t o : c.Owners(p.host, c.epochs[p.epoch].from)) {
      if (c.members[o].name == scope.selection.member) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<AggregatePlan> Aggregates::Plan(const HistogramQuery& query, uint32_t metric) const {
  if (!options_.enabled) return std::nullopt;
  if (!query.hosts.empty() || !query.where.empty() || query.group_by == "host") return std::nullopt;
  if (metric & kAggregateMetricBit) return std::nullopt;
  std::shared_lock lock(mu_);
  auto complete = complete_.find(query.group_by);
  // Not complete, or not for all of the query's range (backfilled from a later second).
  if (complete == complete_.end() || query.from < complete->second) return std::nullopt;
  if (!query.group_by.empty() &&
      std::find(options_.fields.begin(), options_.fields.end(), query.group_by) ==
          options_.fields.end()) {
    return std::nullopt;  // marked once, no longer written
  }
  if (query.replicas && PreferenceConcerns(*query.replicas)) return std::nullopt;
  AggregatePlan plan;
  plan.metric = metric | kAggregateMetricBit;
  plan.groups.assign(groups_.size() + 1, 0);
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (!query.replicas) {
      plan.groups[g + 1] = 1;
      continue;
    }
    if (groups_[g].empty()) return std::nullopt;  // owners unknown here: read the hosts
    const Cluster& c = query.replicas->cluster;
    std::vector<size_t> owners;
    for (const std::string& name : SplitNames(groups_[g])) {
      const ClusterMember* m = c.Find(name);
      if (m == nullptr) return std::nullopt;  // another cluster than the query's
      owners.push_back(static_cast<size_t>(m - c.members.data()));
    }
    plan.groups[g + 1] = ReplicaAnswers(c, owners, query.replicas->selection) ? 1 : 0;
  }
  plan.values.assign(values_.size() + 1, 0);
  plan.value_group.assign(values_.size() + 1, "");
  if (query.group_by.empty()) {
    plan.values[0] = 1;
  } else {
    const std::string prefix = query.group_by + "=";
    for (size_t v = 0; v < values_.size(); ++v) {
      if (values_[v].compare(0, prefix.size(), prefix) != 0) continue;
      plan.values[v + 1] = 1;
      plan.value_group[v + 1] = values_[v].substr(prefix.size());
    }
  }
  return plan;
}

}  // namespace trailmap::aggregator
