#pragma once
// `kind: layer`: transformer layers as one chain of kernels (docs/configuration.md,
// "workload: {kind: layer}"). Shared by layer.cpp (the schema, tensors and kernels) and
// layer_sync.cpp (the sync between the kernels); not an interface for other generators.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config_node.hpp"
#include "workloads/attention.hpp"
#include "workloads/gemm.hpp"
#include "workloads/kernel.hpp"
#include "workloads/sync/sync.hpp"

namespace tilesim {

/// The stream of a kernel no sync policy has placed yet: append_layer puts it on the stream of
/// the kernel before it.
inline constexpr std::uint32_t kUnplacedStream = 0xffffffffu;

/// The sync of each kernel boundary of a layer (absent: stream order).
struct LayerSync {
  std::optional<ConfigNode> attention_out_proj;  ///< the attention -> the output projection
  std::optional<ConfigNode> out_proj_ffn;        ///< the output projection -> the FFN's first GEMM
  std::optional<ConfigNode> ffn;                 ///< the FFN's pair, as `kind: ffn`'s `sync:`
};

/// Parses the experiment's `sync:` for a layer: absent or `{kind: stream}` (every boundary in
/// stream order), or a boundary per key; each boundary's policy is checked against what it can
/// express there (errors name the key).
LayerSync parse_layer_sync(const std::optional<ConfigNode>& sync);

/// One layer's kernels in stream order, in the groups its sync boundaries separate, and the
/// geometry the sync policies need.
struct LayerKernels {
  std::vector<Kernel> qkv, attention, out_proj, ffn_producers, ffn_consumer;
  std::string prefix;  ///< "L<i>.": the layer's kernel names (a policy's wait or dataflow kernel gets it too)
  std::uint32_t o_heads = 0;  ///< the view of the attention's output the attention stores (batch = head)
  std::uint32_t heads = 0, head_dim = 0;
  GemmSpec out_proj_spec, g0, g1;  ///< g0 widened to [gate | up] for a concatenated FFN
  std::uint32_t ffn_stride_tiles = 0;
  bool ffn_separate = false;  ///< a separate gate and up kernel: two consumers of the FFN's input
};

/// Applies `sync` to the layer's kernels and appends them to `w`, on the streams the policies
/// choose (a kernel outside a pair follows on the stream of the kernel before it).
void append_layer(const LayerSync& sync, LayerKernels& k, Workload& w);

}  // namespace tilesim
