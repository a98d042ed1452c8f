// The cluster file (core/cluster.h ParseCluster), which every daemon, the CLI and the load
// generator read, and the short form `--aggregators a,b,c` (ClusterFromList): any text.
// Properties: a refusal says why; a parsed cluster passes CheckCluster and is a valid reload of
// itself; for every epoch and a few host names, Owners gives min(R, epoch members) distinct
// members of that epoch, as many zones as the epoch can give, the highest rendezvous weight first.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "net/cluster_file.h"

namespace {

using trailmap::Cluster;
using trailmap::ClusterEpoch;

void CheckPlacement(const Cluster& c) {
  FUZZ_CHECK(trailmap::CheckCluster(c).ok(), "%s", trailmap::CheckCluster(c).message().c_str());
  FUZZ_CHECK(trailmap::CheckClusterReload(c, c, 0, "fuzz.toml").ok(), "not a reload of itself");
  for (const ClusterEpoch& epoch : c.epochs) {
    std::set<std::string_view> zones;
    for (size_t m : epoch.members) zones.insert(c.members[m].zone);
    for (const char* host : {"", "web-1", "db-17.example", "\xff"}) {
      const std::vector<size_t> owners = c.Owners(host, epoch.from);
      FUZZ_CHECK(&c.EpochAt(epoch.from) == &epoch || c.EpochAt(epoch.from).from == epoch.from);
      FUZZ_CHECK(owners.size() == std::min<size_t>(c.replication, epoch.members.size()),
                 "%zu owners for R=%u of %zu members", owners.size(), c.replication,
                 epoch.members.size());
      std::set<size_t> distinct(owners.begin(), owners.end());
      FUZZ_CHECK(distinct.size() == owners.size(), "an owner twice");
      std::set<std::string_view> owner_zones;
      for (size_t o : owners) {
        FUZZ_CHECK(std::binary_search(epoch.members.begin(), epoch.members.end(), o),
                   "owner %zu is not in its epoch", o);
        owner_zones.insert(c.members[o].zone);
      }
      FUZZ_CHECK(owner_zones.size() == std::min(owners.size(), zones.size()),
                 "%zu zones among %zu owners of %zu zones", owner_zones.size(), owners.size(),
                 zones.size());
      if (!owners.empty()) {
        const uint64_t first = trailmap::RendezvousWeight(c.members[owners[0]].name, host);
        for (size_t m : epoch.members) {
          FUZZ_CHECK(trailmap::RendezvousWeight(c.members[m].name, host) <= first,
                     "the first owner is not the highest weight");
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trailmap::Result<Cluster> parsed = trailmap::ParseCluster(text, "fuzz.toml");
  if (parsed.ok()) {
    CheckPlacement(*parsed);
  } else {
    FUZZ_CHECK(!parsed.status().message().empty());
  }
  trailmap::Result<Cluster> list = trailmap::ClusterFromList(text, 7400);
  if (list.ok()) {
    FUZZ_CHECK(list->replication == 1 && list->epochs.size() == 1);
    CheckPlacement(*list);
  } else {
    FUZZ_CHECK(!list.status().message().empty());
  }
  return 0;
}
