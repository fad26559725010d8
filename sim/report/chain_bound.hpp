#pragma once
// The I/O lower bound of a GEMM chain Y = act(X . W0) . W1 whose intermediate may stay on chip,
// computed by any schedule (two kernels, CuSync row/tile sync, one fused dataflow kernel).
// Derivation, assumptions and citations: docs/architecture.md ("The chain bound").
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/report/bounds.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

/// One GEMM a kernel computes: the tensors its blocks multiply (A . B, and B2 beside B for a
/// fused gate+up projection) and the tensor they store. A fused dataflow kernel holds two.
struct GemmOp {
  std::size_t kernel = 0;
  std::uint32_t a = 0, b = 0, c = 0;
  std::uint32_t b2 = 0xffffffffu;  ///< the second weight of a fused gate+up block; none: 0xffffffff
  GemmShape shape;  ///< m x k . k x n; n counts both weight halves of a fused gate+up block
};

/// The sizes the chain bound needs: producer [m x k0] . [k0 x n0], consumer [m x k1] . [k1 x n1].
struct ChainShape {
  std::uint64_t m = 0, k0 = 0, n0 = 0, k1 = 0, n1 = 0;
  std::uint32_t batch = 1;
  std::uint32_t elem_bits = 16;       ///< the smallest element of the chain's tensors
  bool consumer_output_final = true;  ///< Y is not read again by a later kernel
};

/// A producer GEMM whose result the consumer GEMM multiplies as its A operand (after an
/// element-wise activation, possibly gated), with both weights and the producer's A from DRAM.
struct GemmChain {
  GemmOp producer, consumer;
  ChainShape shape;
};

/// The GEMMs of every kernel, one per distinct (A, B) operand pair among its blocks, in
/// kernel order. Blocks that do not start with two operand loads and end with a store are
/// skipped (softmax, wait kernels).
std::vector<GemmOp> find_gemm_ops(const Workload& w);

/// Producer -> consumer GEMM pairs: the consumer (same or later kernel) loads the producer's
/// result as A, and the producer's A and B and the consumer's B are external inputs (no kernel
/// stores them). A pair with an operand made on chip by a third computation is left out, as
/// the bound's argument needs those operands to come from slow memory.
std::vector<GemmChain> find_gemm_chains(const Workload& w);

/// The chain's I/O lower bound in bytes for a fast memory of `fast_memory_bytes`; 0 when the
/// shape is empty. Non-increasing in the fast memory.
std::uint64_t chain_io_lower_bound_bytes(const ChainShape& c, std::uint64_t fast_memory_bytes);

}  // namespace tilesim
