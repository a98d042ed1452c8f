#include "net/cluster_file.h"

#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "core/log.h"
#include "net/endpoint.h"

namespace trailmap {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  Status Error(const std::string& where, const std::string& what) const {
    const std::string at = line_ > 0 ? source_ + ":" + std::to_string(line_) : source_;
    return Status::InvalidArgument(at + ": " + where + ": " + what);
  }
  // Errors from here on name this line of the file (0: none), as "FILE:LINE: ...".
  void At(const toml::node& node) { line_ = static_cast<int>(node.source().begin.line); }
  void Nowhere() { line_ = 0; }
  Status CheckKeys(const toml::table& t, const std::string& where,
                   const std::set<std::string, std::less<>>& known) const {
    for (const auto& [key, value] : t) {
      if (!known.count(key.str())) {
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        return Error(where.empty() ? std::string(key.str()) : where + "." + std::string(key.str()),
                     "unknown key (known: " + list + ")");
      }
    }
    return Status::Ok();
  }
  Status String(const toml::table& t, const std::string& where, std::string_view key, bool required,
                std::string* out) const {
    const toml::node* node = t.get(key);
    if (!node) {
      return required ? Error(where, "missing " + std::string(key)) : Status::Ok();
    }
    const auto* s = node->as_string();
    if (!s) return Error(where + "." + std::string(key), "expected a string");
    *out = s->get();
    return Status::Ok();
  }

 private:
  std::string source_;
  int line_ = 0;
};

Result<int64_t> ReadFrom(const toml::node& node) {
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* dt = node.as_date_time()) {
    const toml::date_time& v = dt->get();
    if (!v.offset)
      return Status::InvalidArgument("a date-time needs its offset, e.g. ...T00:00:00Z");
    const int64_t days = DaysFromCivil(v.date.year, v.date.month, v.date.day);
    return days * 86400 + v.time.hour * 3600 + v.time.minute * 60 + v.time.second -
           int64_t{v.offset->minutes} * 60;
  }
  return Status::InvalidArgument(
      "expected a date-time such as 2026-11-01T00:00:00Z, or Unix seconds");
}

// A member's `server_key` (Z85) or `server_key_file` (a .pub or .key; relative to the directory
// of the cluster file `source`) into *out; neither leaves it "".
Status ReadServerKey(const toml::table& t, const std::string& where, std::string_view source,
                     const Reader& r, std::string* out) {
  std::string key, file;
  if (Status s = r.String(t, where, "server_key", false, &key); !s.ok()) return s;
  if (Status s = r.String(t, where, "server_key_file", false, &file); !s.ok()) return s;
  if (!key.empty() && !file.empty()) {
    return r.Error(where, "server_key and server_key_file both given: give one");
  }
  if (!file.empty()) {
    if (file.front() != '/') {
      const std::string_view path = source;
      const size_t slash = path.rfind('/');
      if (slash != std::string_view::npos) file = std::string(path.substr(0, slash + 1)) + file;
    }
    Result<CurveKeyFile> loaded = LoadCurveKeyFile(file, /*need_secret=*/false);
    if (!loaded.ok()) return r.Error(where + ".server_key_file", loaded.status().message());
    key = loaded->public_key;
  } else if (t.get("server_key") != nullptr) {
    if (Status s = ValidateZ85Key(key); !s.ok()) {
      return r.Error(where + ".server_key", s.message() + " (the member's .pub holds it)");
    }
  }
  *out = key;
  return Status::Ok();
}

}  // namespace

Result<Cluster> ParseCluster(std::string_view text, std::string_view source) {
  Reader r(source);
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    std::ostringstream where;
    where << "line " << e.source().begin.line << ", column " << e.source().begin.column;
    return r.Error(where.str(), std::string(e.description()));
  }
  if (Status s = r.CheckKeys(root, "", {"replication", "aggregator", "epoch"}); !s.ok()) return s;
  Cluster c;
  if (const toml::node* n = root.get("replication")) {
    r.At(*n);
    const auto* v = n->as_integer();
    if (!v || v->get() < 1 || v->get() > 16) {
      return r.Error("replication", "expected an integer from 1 to 16");
    }
    c.replication = static_cast<uint32_t>(v->get());
  }
  r.Nowhere();
  const toml::array* aggregators = root.get_as<toml::array>("aggregator");
  if (!aggregators || aggregators->empty()) {
    return r.Error("aggregator",
                   "no [[aggregator]] tables: list every aggregator with its name, "
                   "zone, ingest and query endpoints");
  }
  for (size_t i = 0; i < aggregators->size(); ++i) {
    const std::string where = "aggregator " + std::to_string(i + 1);
    r.At((*aggregators)[i]);
    const toml::table* t = (*aggregators)[i].as_table();
    if (!t) return r.Error(where, "expected a table ([[aggregator]])");
    if (Status s = r.CheckKeys(
            *t, where, {"name", "zone", "ingest", "query", "server_key", "server_key_file"});
        !s.ok()) {
      return s;
    }
    ClusterMember m;
    std::string ingest, query;
    if (Status s = r.String(*t, where, "name", true, &m.name); !s.ok()) return s;
    if (Status s = r.String(*t, where, "zone", false, &m.zone); !s.ok()) return s;
    if (Status s = r.String(*t, where, "ingest", true, &ingest); !s.ok()) return s;
    if (Status s = r.String(*t, where, "query", true, &query); !s.ok()) return s;
    if (m.name.empty()) return r.Error(where + ".name", "empty");
    if (c.Find(m.name)) return r.Error(where + ".name", "\"" + m.name + "\" is listed twice");
    Result<std::string> e = ParseEndpoint(ingest, kDefaultIngestPort);
    if (!e.ok()) return r.Error(where + ".ingest", e.status().message());
    m.ingest = *e;
    e = ParseEndpoint(query, kDefaultQueryPort);
    if (!e.ok()) return r.Error(where + ".query", e.status().message());
    m.query = *e;
    if (Status s = ReadServerKey(*t, where, source, r, &m.server_key); !s.ok()) return s;
    c.members.push_back(std::move(m));
  }
  r.Nowhere();
  const toml::array* epochs = root.get_as<toml::array>("epoch");
  if (!epochs || epochs->empty()) {
    ClusterEpoch all;
    for (size_t i = 0; i < c.members.size(); ++i) all.members.push_back(i);
    c.epochs.push_back(std::move(all));
  } else {
    for (size_t i = 0; i < epochs->size(); ++i) {
      const std::string where = "epoch " + std::to_string(i + 1);
      r.At((*epochs)[i]);
      const toml::table* t = (*epochs)[i].as_table();
      if (!t) return r.Error(where, "expected a table ([[epoch]])");
      if (Status s = r.CheckKeys(*t, where, {"from", "members"}); !s.ok()) return s;
      ClusterEpoch epoch;
      const toml::node* from = t->get("from");
      if (!from) return r.Error(where, "missing from");
      Result<int64_t> seconds = ReadFrom(*from);
      if (!seconds.ok()) return r.Error(where + ".from", seconds.status().message());
      epoch.from = *seconds;
      const toml::array* names = t->get_as<toml::array>("members");
      if (!names) return r.Error(where, "missing members (an array of aggregator names)");
      for (const toml::node& n : *names) {
        const auto* name = n.as_string();
        if (!name) return r.Error(where + ".members", "expected aggregator names (strings)");
        const ClusterMember* m = c.Find(name->get());
        if (!m) {
          return r.Error(where + ".members", "\"" + name->get() + "\" is not an [[aggregator]]");
        }
        epoch.members.push_back(static_cast<size_t>(m - c.members.data()));
      }
      std::sort(epoch.members.begin(), epoch.members.end());
      if (std::adjacent_find(epoch.members.begin(), epoch.members.end()) != epoch.members.end()) {
        return r.Error(where + ".members", "a member is listed twice");
      }
      c.epochs.push_back(std::move(epoch));
    }
    // The first epoch also holds before its `from`: history has owners.
  }
  r.Nowhere();
  if (Status s = CheckClusterEpochs(c, source); !s.ok()) return s;
  return c;
}

Result<Cluster> LoadCluster(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("cannot read cluster file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseCluster(text.str(), path);
}

Status CheckClusterReload(const Cluster& current, const Cluster& next, int64_t now,
                          std::string_view source) {
  const auto refuse = [source](const std::string& what) {
    return Status::InvalidArgument(std::string(source) + ": " + what +
                                   "; kept the cluster as it was (a running process takes a file "
                                   "that only adds members and epochs starting later)");
  };
  if (next.replication != current.replication) {
    return refuse("replication changed from " + std::to_string(current.replication) + " to " +
                  std::to_string(next.replication));
  }
  if (next.members.size() < current.members.size()) {
    return refuse(std::to_string(current.members.size() - next.members.size()) +
                  " [[aggregator]] table(s) removed");
  }
  for (size_t i = 0; i < current.members.size(); ++i) {
    ClusterMember rekeyed = next.members[i];  // a rolled key changes no placement
    rekeyed.server_key = current.members[i].server_key;
    if (rekeyed != current.members[i]) {
      return refuse("aggregator " + std::to_string(i + 1) + " (\"" + current.members[i].name +
                    "\") changed or moved: new members go after the old ones");
    }
  }
  for (size_t i = 0; i < current.epochs.size(); ++i) {
    const ClusterEpoch& old = current.epochs[i];
    if (i > 0 && old.from > now) continue;  // not begun: may change
    // The first epoch's `from` places nothing: it holds before it too.
    const bool same = i < next.epochs.size() && next.epochs[i].members == old.members &&
                      (i == 0 || next.epochs[i].from == old.from);
    if (!same) {
      return refuse("epoch " + std::to_string(i + 1) + " has begun and changed (or is gone)");
    }
  }
  for (size_t i = 1; i < next.epochs.size(); ++i) {
    const bool kept = i < current.epochs.size() && current.epochs[i] == next.epochs[i];
    if (!kept && next.epochs[i].from <= now) {
      return refuse("epoch " + std::to_string(i + 1) + " is new or changed but begins at " +
                    std::to_string(next.epochs[i].from) + ", not after now (" +
                    std::to_string(now) + "): give it a later `from`");
    }
  }
  return Status::Ok();
}

Result<Cluster> ReloadCluster(const std::string& path, const Cluster& current, int64_t now) {
  Result<Cluster> next = LoadCluster(path);
  if (!next.ok()) {
    return Status::InvalidArgument(next.status().message() + "; kept the cluster as it was");
  }
  if (Status s = CheckClusterReload(current, *next, now, path); !s.ok()) return s;
  return next;
}

CurveClient MemberCurve(const CurveClient& shared, const ClusterMember& member) {
  CurveClient curve = shared;
  if (!shared.plaintext && shared.keyed() && !member.server_key.empty()) {
    curve.server_key = member.server_key;
  }
  return curve;
}

Result<Cluster> ClusterFromList(std::string_view aggregators, uint16_t default_port) {
  Result<std::vector<std::string>> endpoints = ParseEndpointList(aggregators, default_port);
  if (!endpoints.ok()) return endpoints.status();
  Result<Cluster> c = ClusterFromEndpoints(*endpoints);
  if (!c.ok()) {
    return Status::InvalidArgument(c.status().message() + " in \"" + std::string(aggregators) +
                                   "\"");
  }
  return c;
}

Result<Cluster> ClusterFromEndpoints(const std::vector<std::string>& endpoints) {
  Cluster c;
  ClusterEpoch all;
  std::set<std::string> seen;
  for (const std::string& e : endpoints) {
    if (!seen.insert(e).second) {
      return Status::InvalidArgument("aggregator " + e + " is listed twice");
    }
    all.members.push_back(c.members.size());
    c.members.push_back({e, "", e, e});
  }
  if (c.members.empty()) return Status::InvalidArgument("no aggregators listed");
  c.epochs.push_back(std::move(all));
  return c;
}

std::optional<Cluster> ReloadClusterOnSignal(const std::string& path, const Cluster& current,
                                             int64_t now) {
  Result<Cluster> next = ReloadCluster(path, current, now);
  if (!next.ok()) {
    Log("SIGHUP: " + next.status().message());
    return std::nullopt;
  }
  Log("SIGHUP: cluster file " + path + " read again: " + std::to_string(next->members.size()) +
      " members, " + std::to_string(next->epochs.size()) + " epochs");
  return std::move(next).value();
}

}  // namespace trailmap
