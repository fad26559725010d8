#pragma once
// Lower bounds on DRAM traffic, printed beside the simulated traffic so a result can be read as
// "x times the least any schedule could move". Definitions, assumptions and citations are in
// docs/architecture.md ("Lower bounds on DRAM traffic").
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "workloads/kernel.hpp"

namespace tilesim {

/// A GEMM's problem size, for the I/O bound. A Kernel does not record M, N, K (only tiles),
/// so the generator supplies it.
struct GemmShape {
  std::uint64_t m = 0, n = 0, k = 0;
  std::uint32_t batch = 1;
  /// Bits of an A/B element. With mixed operands (w4a16) pass the smaller one: a smaller
  /// element only lowers the bound, so it stays a lower bound.
  std::uint32_t in_elem_bits = 16;
  std::uint32_t out_elem_bits = 16;  ///< bits of a C element
  bool external_inputs = true;       ///< A and B both come from DRAM (not written by the workload)
};

struct TrafficBounds {
  /// External inputs read once plus final outputs written once: traffic no schedule avoids.
  /// For a kernel: the tensors it loads that no earlier kernel stored, read once, plus those it
  /// stores that no later kernel loads, written once.
  std::uint64_t compulsory_bytes = 0;
  /// Intermediates of a chain (stored by one kernel, loaded by a later one), counted written
  /// once + read once: what an unfused chain adds to compulsory_bytes when they go through
  /// DRAM, and what a fused chain (or the L2) can keep on chip. For a kernel: its reads of
  /// earlier kernels' results plus its writes of results later kernels load, once each.
  /// A kernel run alone would move compulsory_bytes + intermediate_bytes.
  std::uint64_t intermediate_bytes = 0;
  /// The I/O lower bound of the kernel's GEMM for the given fast memory (Smith et al.,
  /// gemm_io_lower_bound_bytes); 0 without a shape and for a kernel that is not one GEMM (a fused
  /// chain). For a run, the largest kernel's.
  std::uint64_t io_bound_bytes = 0;
  /// The bound of a GEMM chain whose intermediate may stay on chip (sim/report/chain_bound.hpp):
  /// for a kernel, of the chain inside it (a fused dataflow kernel); for a run, the largest of
  /// its chains, within a kernel or across kernels. 0 without a chain.
  std::uint64_t chain_io_bound_bytes = 0;

  /// The bound the simulated traffic is compared with: max(compulsory, io_bound, chain_io_bound).
  std::uint64_t bound_bytes() const { return std::max({compulsory_bytes, io_bound_bytes, chain_io_bound_bytes}); }
};

/// Bounds of one simulated point: one entry per kernel (launch order) and the whole workload.
struct RunBounds {
  std::vector<TrafficBounds> kernels;
  TrafficBounds total;
};

/// Logical bytes of a tensor: rows x cols x batch elements, padding (ld, batch stride) excluded.
std::uint64_t tensor_bytes(const Tensor& t);

/// Smith, Lowery, Langou and van de Geijn (arXiv:1702.02017): any classical schedule of C = A.B
/// moves Q >= 2*M*N*K/sqrt(S) - 2*S words between a fast memory of S words and slow memory, for
/// every shape (docs/architecture.md derives it from their bound on C := A.B + C). The batch's
/// products count as one computation. A word is the smallest of the A/B and C elements (S =
/// fast_memory_bytes over it); bytes = words x its size, rounded up; 0 when that is negative, the
/// shape is empty or fast_memory_bytes is 0.
std::uint64_t gemm_io_lower_bound_bytes(const GemmShape& g, std::uint64_t fast_memory_bytes);

/// Bounds of every kernel of `w` and of the whole workload. `fast_memory_bytes` is the fast
/// memory of the I/O bounds (the arch's L2 bytes). `shapes` is empty (no I/O bounds) or holds one
/// entry per kernel, std::nullopt for a kernel that is not a GEMM; any other size throws
/// std::invalid_argument. The workload's I/O bound is the largest kernel's; with shapes, the
/// chain bounds of the workload's GEMM chains (find_gemm_chains) are filled in too.
/// The GEMM a kernel computes, read off its tile accesses: a kernel whose main-loop steps load
/// A [M x K] and B [K x N] (same batch count) and whose epilogue stores C [M x N]. nullopt for
/// anything else (a fused dataflow kernel, softmax, a wait kernel).
std::optional<GemmShape> infer_gemm_shape(const Workload& w, const Kernel& k);
/// The distinct GEMMs inside a kernel (one per pair of operand tensors its blocks multiply),
/// e.g. GEMM0 and GEMM1 of a fused dataflow kernel; output sizes are not filled in.
std::vector<GemmShape> infer_sub_gemms(const Workload& w, const Kernel& k);
/// infer_gemm_shape for every kernel of the workload.
std::vector<std::optional<GemmShape>> infer_gemm_shapes(const Workload& w);

RunBounds compute_traffic_bounds(const Workload& w, std::uint64_t fast_memory_bytes,
                                 const std::vector<std::optional<GemmShape>>& shapes = {});

/// Simulated DRAM bytes over bound_bytes(); std::nullopt when the bound is 0.
std::optional<double> dram_over_bound(std::uint64_t dram_bytes, const TrafficBounds& b);

}  // namespace tilesim
