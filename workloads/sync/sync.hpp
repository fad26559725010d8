#pragma once
// Synchronisation policies for a producer -> consumer pair of GEMM-like kernels (an FFN's
// GEMM0 -> GEMM1): how the consumer's blocks wait for the producer tiles they read, and which
// kernels run on which stream. One file per policy, registered by `sync.kind`.
//
// The pair arrives as separate kernels: `producers` (the last of which writes the intermediate
// tensor; earlier ones, e.g. a separate gate projection, run before it on the same stream)
// and `consumer`, whose k-steps read the intermediate's columns. A policy appends the kernels
// it makes to the workload, allocating semaphores from Workload::num_semaphores.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/config_node.hpp"
#include "common/registry.hpp"
#include "workloads/kernel.hpp"
#include "workloads/orders/chain_order_file.hpp"

namespace tilesim {

struct ChainPair {
  std::vector<Kernel> producers;
  Kernel consumer;
  std::uint32_t tiles_m = 0;          ///< row tiles, equal in producer and consumer (same bm)
  std::uint32_t producer_tiles_n = 0; ///< column tiles of the intermediate
  std::uint32_t producer_bn = 0;      ///< columns per producer tile
  std::uint32_t consumer_bk = 0;      ///< intermediate columns per consumer k-step
  std::uint32_t consumer_tiles_k = 0; ///< k-steps over the whole intermediate
  std::uint32_t consumer_split_k = 1;
  /// Non-zero for a concatenated [gate | up] intermediate: producer tiles n and n + stride hold
  /// the two halves a consumer k-step reads; they post one semaphore, awaited with value 2.
  std::uint32_t producer_stride_tiles = 0;
  /// The stream the producers run on, and the consumer's when a policy puts it on a second one
  /// (rowsync, tilesync): a chain of pairs (a layer's) alternates between two streams.
  std::uint32_t producer_stream = 0, consumer_stream = 1;
  /// An explicit ticket order for the fused kernel (`order: {kind: file}` naming a chain order
  /// file; only `dataflow` takes one).
  std::optional<ChainOrder> chain_order;
};

using SyncPolicy = std::function<void(const ConfigNode& sync, ChainPair& pair, Workload& out)>;

/// Registers a policy by name, with a line saying what it does (a name registered twice stops
/// the program).
bool register_sync(const std::string& kind, std::string description, SyncPolicy policy);
/// Applies the policy named by `sync.kind` (default stream when `sync` is absent).
void apply_sync(const ConfigNode* sync, ChainPair& pair, Workload& out);
std::vector<std::string> sync_kinds();
std::vector<NamedPolicy> sync_kinds_described();

// Helpers shared by the policies.
namespace sync_detail {
/// Absolute k-step index of main-loop step `i` of a consumer block (split-K slices included).
std::uint32_t consumer_kstep(const ChainPair& p, const Block& b, std::uint32_t i);
/// The epilogue step (the last) of a block.
Step& epilogue(Kernel& k, const Block& b);
/// Appends every producer kernel to `out` on `stream`.
void append_producers(ChainPair& p, Workload& out, std::uint32_t stream);
/// Per-producer-tile semaphores: `prod`'s epilogues post, `cons`'s k-steps wait on the tile
/// they read. Used by tilesync and dataflow.
void tile_waits(const ConfigNode& sync, ChainPair& p, Workload& out, Kernel& prod, Kernel& cons);
}  // namespace sync_detail

}  // namespace tilesim
