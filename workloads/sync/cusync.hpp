#pragma once
// The structure CuSync (Jangda et al., ASPLOS 2024) gives a producer/consumer pair: the producer
// kernel on one stream, and on a second stream a one-block "wait kernel" that spins until the
// producer has started, then the consumer kernel, so consumer blocks are never scheduled before
// producer blocks. RowSync and TileSync differ only in what each consumer block waits for.
#include "workloads/sync/sync.hpp"

namespace tilesim::sync_detail {

/// Appends producers (the pair's producer stream), the wait kernel and the consumer (its
/// consumer stream). Every block of
/// the last producer posts a "started" semaphore after its first step.
void cusync_streams(ChainPair& p, Workload& out);

}  // namespace tilesim::sync_detail
