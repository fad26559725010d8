#pragma once
// The FFN's building blocks (`kind: ffn`), shared with `kind: layer`, whose FFN follows its
// attention's output projection: the projections' GEMM specs, the FFN's shape and its kernels.
#include <cstdint>
#include <string>

#include "common/config_node.hpp"
#include "models/arch.hpp"
#include "workloads/gemm.hpp"
#include "workloads/model_presets.hpp"
#include "workloads/sync/sync.hpp"
#include "workloads/workload.hpp"

namespace tilesim {

/// A GEMM of a chain (an FFN's projection, a layer's QKV or output projection) of shape m x n x k
/// with the user's keys under `parent.key` (tile, stages, split_k, blocks_per_sm, threads,
/// registers_per_thread, shared_memory_bytes, mainloop, persistent, schedule; `order` too when
/// `own_order`, which the caller reads); default tile [min(128, m padded), 128, 64]; the
/// parent's `mainloop:` unless the GEMM names its own. Weights are `nn.Linear`'s (col-major B).
GemmSpec projection_gemm_spec(const ConfigNode& parent, const char* key, std::uint32_t m, std::uint32_t n,
                              std::uint32_t k, const std::string& dtype, const ArchSpec& arch, bool own_order = false);

/// The FFN's own keys: its dimensions (from `model:` or `d:`/`f:`), gating and batch rows.
struct FfnShape {
  ModelPreset dims;
  bool gated = false;
  std::string fusion;  ///< fused | separate | concat (gated FFNs)
  std::uint32_t m = 0;
  std::string dtype;
};
FfnShape parse_ffn_shape(const ConfigNode& n);

/// What the two projections must agree on (bm), and the fused gate+up kernel's doubled weight
/// stages (checked against the arch's shared memory).
void check_ffn_gemms(const ConfigNode& n, const FfnShape& s, GemmSpec& g0, const GemmSpec& g1, const ArchSpec& arch);

/// Where the FFN's input comes from: its own X (kNoTensor) or a tensor of the caller's [m x d];
/// `residual`, when set, is an [m x d] tensor GEMM1's epilogue adds (reads) before storing Y.
/// Tensor and kernel names get `prefix`.
struct FfnInput {
  std::uint32_t x = kNoTensor;
  std::uint32_t residual = kNoTensor;
  std::string prefix;
  /// The GEMMs may be lazy (add_gemm_kernel): nothing rewrites them later (stream sync, no
  /// persistent programs).
  bool allow_lazy = false;
};

/// The FFN's tensors and kernels in stream order: the producer GEMM(s) as the gating asks
/// (gemm0; gate_up; gate and up), then gemm1, which writes Y (the last tensor). A concatenated
/// gate+up producer widens g0 to its 2f columns and sets `pair`'s stride.
void add_ffn_kernels(const ConfigNode& n, const FfnShape& s, GemmSpec& g0, const GemmSpec& g1, const LaunchOrder& order,
                     Workload& w, ChainPair& pair, DeviceAllocator& alloc, const FfnInput& in);

}  // namespace tilesim
