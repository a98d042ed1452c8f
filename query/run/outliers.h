// `trailmap outliers` and /api/outliers: the hosts whose distribution is unlike the fleet's.
//
// Each host's statistic (p99 by default) over the range is compared with the fleet's by the
// modified z-score of Iglewicz and Hoaglin, which a few slow hosts cannot drag along as they
// would a mean and standard deviation:
//
//   score(h) = 0.6745 · (x_h − median(x)) / MAD,   MAD = median(|x − median(x)|)
//
// The MAD is floored at median/64, the width of a histogram bucket there: values closer than that
// are one value to a histogram, and when more than half the hosts agree that closely the MAD
// would be 0. Only with a median of 0 does the mean absolute deviation stand in:
// score = (x_h − median) / (1.253314 · MeanAD); when that is 0 too, every host scores 0. A host
// is an outlier when its score is above the threshold (3.5, their recommendation). Only slow
// hosts count: a host faster than the fleet has a negative score and is never flagged.
// docs/outliers.md has the reasoning and a worked example.
//
// With `flame`, the document is instead the differential flame graph of the outliers' stacks
// against the other hosts' over the same range (query/run/flame.h), its JSON with one more field,
// "outliers".
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/options.h"
#include "query/run/view_document.h"

namespace trailmap {

struct OutliersRequest {
  ViewRequest query;                  // metric, from, to, hosts, where (by is always host)
  std::string stat = "p99";           // p50 | p90 | p99 | p99.9 | mean | max
  double threshold = 3.5;             // modified z-score above which a host is an outlier
  bool flame = false;                 // the differential flame graph of the outliers vs the rest
  std::string stacks = "cpu.stacks";  // with flame: the stacks metric
  std::string format = "table";       // table | json; with flame: svg | json | folded (table = svg)
};

struct HostScore {
  std::string host;
  uint64_t count = 0;
  double value = 0;  // the statistic, base unit
  double score = 0;
  bool outlier = false;
};

// The scores of `values` (one per host, in any order), as described above.
std::vector<double> ModifiedZScores(const std::vector<double>& values);

// The outliers view's parameters (query/run/options.h): a new option is a member above and a row
// here.
inline const OptionTable<OutliersRequest>& OutliersParameters() {
  using R = OutliersRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.Include(ViewRequestParameters(), &R::query);
    t.Choice("stat", &R::stat, {"p50", "p90", "p99", "p99.9", "mean", "max"},
             "The statistic compared: p50, p90, p99, p99.9, mean, max");
    t.Number("threshold", &R::threshold, 0, std::numeric_limits<double>::infinity(),
             "Modified z-score above which a host is an outlier", "3")
        .AboveLow();
    t.Flag("flame", &R::flame,
           "Instead of the list: a differential flame graph of the outliers' stacks against the "
           "other hosts' over the same range (red: more in the outliers)");
    t.Text("stacks", &R::stacks, "With --flame: the stacks metric", "cpu.stacks");
    t.Choice("format", &R::format, {"table", "json", "svg", "folded"},
             "table or json; with --flame svg (default), json or folded")
        .Short('f');
    return t;
  }();
  return table;
}

Result<ViewDocument> RunOutliersView(const OutliersRequest& request, const QueryContext& context);

}  // namespace trailmap
