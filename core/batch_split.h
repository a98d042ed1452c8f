// SplitBatch: cuts a batch into batches the aggregator accepts (core/batch.h BatchLimits), so an
// over-full second (too many series, histograms, stack counts or definitions, or too many bytes)
// travels as several batches instead of being rejected whole.
//
// Every item (histogram delta, scalar, stack count) goes to exactly one of the batches, in the
// order given; a second cut in two appears in both, each with part of its items (deltas of one
// second merge at the aggregator, and a scalar is in only one of them). Each batch carries its
// own series list (only the series its items use) and the definitions of every stack its stack
// counts use, so it stands alone; the envelope (agent, sequence, host, labels, sent_at_ms) is
// copied to each. The Shipper gives each its own sequence, so each is applied exactly once.
//
// What no cut can fix is left for the aggregator to refuse: an envelope over its limits
// (labels, text), or one item that alone passes max_bytes (it goes out in a batch of its own).
//
// The sizes come from the schema (schemas/ingest.capnp): EncodedBatchBytes is exact, so a cut
// batch is never over max_bytes by an estimate's error. Value functions; no shared state.
#pragma once

#include <cstddef>
#include <vector>

#include "core/batch.h"

namespace trailmap {

// Exactly EncodeBatch(batch).size(), computed without encoding (one pass, no allocation).
size_t EncodedBatchBytes(const Batch& batch);

// `batch` itself when it is within `limits`, else the batches it cuts into (see above). Never
// empty: a batch with no items is returned as it is.
std::vector<Batch> SplitBatch(Batch batch, const BatchLimits& limits = {});

}  // namespace trailmap
