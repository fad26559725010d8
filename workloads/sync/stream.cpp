// `stream`: plain stream order. The consumer kernel launches when the producer's last block has
// finished (plus the launch gap); no semaphores.
#include "workloads/sync/sync.hpp"

namespace tilesim {

namespace {

void stream_sync(const ConfigNode& sync, ChainPair& p, Workload& out) {
  sync.allow_keys({"kind"});
  sync_detail::append_producers(p, out, p.producer_stream);
  p.consumer.stream = p.producer_stream;
  out.kernels.push_back(std::move(p.consumer));
}

const bool registered = register_sync("stream",
    "plain stream order: the consumer kernel starts after the producer's last block", stream_sync);

}  // namespace

}  // namespace tilesim
