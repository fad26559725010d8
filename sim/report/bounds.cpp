#include "sim/report/bounds.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/report/chain_bound.hpp"

namespace tilesim {

std::uint64_t tensor_bytes(const Tensor& t) {
  const std::uint64_t elems = static_cast<std::uint64_t>(t.rows) * t.cols * t.batch;
  return (elems * t.elem_bits + 7) / 8;
}

std::uint64_t gemm_io_lower_bound_bytes(const GemmShape& g, std::uint64_t fast_memory_bytes) {
  if (g.m == 0 || g.n == 0 || g.k == 0 || g.in_elem_bits == 0 || fast_memory_bytes == 0) return 0;
  // Words of the smallest element: every I/O moves at least one, and the fast memory holds at
  // most fast_memory_bytes / that many (the bound falls as S grows, so the largest S is safe).
  const std::uint32_t word_bits = g.out_elem_bits ? std::min(g.in_elem_bits, g.out_elem_bits) : g.in_elem_bits;
  const long double word_bytes = word_bits / 8.0L;
  const long double s = static_cast<long double>(fast_memory_bytes) / word_bytes;
  // long double: M*N*K overflows 64 bits for the largest allowed problems (4M^3). The batch's
  // products are one computation: its segments count them all, and -2S is paid once.
  const long double fmas = static_cast<long double>(g.m) * g.n * g.k * g.batch;
  const long double words = 2.0L * fmas / std::sqrt(s) - 2.0L * s;
  return words > 0 ? static_cast<std::uint64_t>(std::ceil(words * word_bytes)) : 0;
}

std::optional<double> dram_over_bound(std::uint64_t dram_bytes, const TrafficBounds& b) {
  if (b.bound_bytes() == 0) return std::nullopt;
  return static_cast<double>(dram_bytes) / static_cast<double>(b.bound_bytes());
}

namespace {
// The GEMM of A [M x K] . B [K x N]: sizes, batch, and the smaller operand element (a smaller
// element can only lower the bound, so it stays a lower bound with W4A16's 4-bit B).
GemmShape shape_of(const Tensor& ta, const Tensor& tb) {
  GemmShape g;
  g.m = ta.rows;
  g.n = tb.cols;
  g.k = ta.cols;
  g.batch = ta.batch;
  g.in_elem_bits = std::min(ta.elem_bits, tb.elem_bits);
  return g;
}
}  // namespace

std::optional<GemmShape> infer_gemm_shape(const Workload& w, const Kernel& k) {
  if (k.blocks.empty() || k.blocks[0].num_steps < 2) return std::nullopt;
  ProgramBuffer buf0;
  const ProgramView p0 = k.program(0, buf0);
  const Step& first = p0.steps[0];
  const Step& last = p0.steps[p0.num_steps - 1];
  if (first.num_accesses < 2) return std::nullopt;
  const TileAccess a = p0.accesses[first.first_access];
  const TileAccess bb = p0.accesses[first.first_access + 1];
  std::optional<TileAccess> c;
  for (std::uint32_t i = 0; i < last.num_accesses; ++i)
    if (p0.accesses[last.first_access + i].kind == AccessKind::store) c = p0.accesses[last.first_access + i];
  if (a.kind != AccessKind::load || bb.kind != AccessKind::load || !c) return std::nullopt;
  const std::optional<TileAccess> third =
      first.num_accesses >= 3 ? std::optional<TileAccess>(p0.accesses[first.first_access + 2]) : std::nullopt;
  // Every block must multiply the same operands (a fused dataflow kernel holds two GEMMs).
  bool same = true;
  for_each_program(k, [&](std::uint32_t, const ProgramView& o) {
    if (!same) return;
    if (o.num_steps < 2) {
      same = false;
      return;
    }
    const Step& f = o.steps[0];
    same = f.num_accesses >= 2 && o.accesses[f.first_access].tensor == a.tensor &&
           o.accesses[f.first_access + 1].tensor == bb.tensor;
  });
  if (!same) return std::nullopt;
  const Tensor& ta = w.tensors[a.tensor];
  const Tensor& tb = w.tensors[bb.tensor];
  const Tensor& tc = w.tensors[c->tensor];
  // A [M x K] . B [K x N] = C [M x N], with a 4-bit B (W4A16) allowed.
  if (ta.cols != tb.rows || ta.rows != tc.rows || tb.cols != tc.cols || ta.batch != tc.batch) return std::nullopt;
  GemmShape g = shape_of(ta, tb);
  g.out_elem_bits = tc.elem_bits;
  // A fused gate+up block multiplies two B tiles with one A tile: twice the GEMM.
  if (third && third->kind == AccessKind::load && w.tensors[third->tensor].rows == tb.rows &&
      w.tensors[third->tensor].cols == tb.cols)
    g.n *= 2;
  return g;
}

std::vector<GemmShape> infer_sub_gemms(const Workload& w, const Kernel& k) {
  // Written through any view of the same bytes (a layer's QKV output read as Q, K, V).
  const std::vector<std::uint32_t> root = storage_roots(w.tensors);
  std::vector<bool> written(w.tensors.size(), false);
  for (const Kernel& any : w.kernels)
    for_each_access(any, [&](const TileAccess& a) {
      if (a.kind == AccessKind::store && a.tensor < written.size()) written[root[a.tensor]] = true;
    });
  std::vector<GemmShape> out;
  for (const GemmOp& op : find_gemm_ops(w)) {
    if (&w.kernels[op.kernel] != &k) continue;
    GemmShape g = op.shape;
    g.out_elem_bits = 16;  // output sizes are not filled in (see the header)
    g.external_inputs = !written[root[op.a]] && !written[root[op.b]];
    out.push_back(g);
  }
  return out;
}

std::vector<std::optional<GemmShape>> infer_gemm_shapes(const Workload& w) {
  std::vector<std::optional<GemmShape>> out;
  for (const Kernel& k : w.kernels) out.push_back(infer_gemm_shape(w, k));
  return out;
}

namespace {

// Which kernels store and which load each tensor, and which tensors a GEMM chain inside one
// kernel makes and consumes (a fused dataflow kernel's H).
struct TensorUse {
  std::vector<std::vector<bool>> stores, loads;
  std::vector<bool> made_inside;
};

TensorUse tensor_use(const Workload& w, const std::vector<GemmChain>& chains) {
  const std::size_t nk = w.kernels.size(), nt = w.tensors.size();
  TensorUse u{std::vector<std::vector<bool>>(nk, std::vector<bool>(nt)),
              std::vector<std::vector<bool>>(nk, std::vector<bool>(nt)), std::vector<bool>(nt)};
  // A view's accesses are its parent's (storage_roots): a layer's attention loading Q reads
  // the QKV output.
  const std::vector<std::uint32_t> root = storage_roots(w.tensors);
  for (std::size_t k = 0; k < nk; ++k)
    for_each_access(w.kernels[k], [&](const TileAccess& a) {
      if (a.tensor < nt) (a.kind == AccessKind::store ? u.stores : u.loads)[k][root[a.tensor]] = true;
    });
  // A kernel that both loads and stores a tensor (serial split-K reads back its own partials)
  // is its producer only: the order of its blocks is not known here, and its loads are of its
  // own results. A fused chain's intermediate is the exception: its consumer GEMM reads it.
  for (std::size_t k = 0; k < nk; ++k)
    for (std::size_t t = 0; t < nt; ++t)
      if (u.stores[k][t]) u.loads[k][t] = false;
  for (const GemmChain& c : chains)
    if (c.producer.kernel == c.consumer.kernel) u.made_inside[root[c.producer.c]] = true;
  return u;
}

// Adds tensor t's compulsory and intermediate bytes to the run's and each kernel's bounds.
void split_tensor(const TensorUse& u, std::size_t t, std::uint64_t size, RunBounds& rb) {
  const std::size_t nk = u.stores.size();
  std::size_t first_store = nk, last_store = nk;
  for (std::size_t k = 0; k < nk; ++k)
    if (u.stores[k][t]) {
      if (first_store == nk) first_store = k;
      last_store = k;
    }
  bool external_input = false, consumed_after_last_store = false;
  for (std::size_t k = 0; k < nk; ++k) {
    if (!u.loads[k][t]) continue;
    if (first_store == nk || k < first_store) external_input = true;
    if (last_store != nk && k > last_store) consumed_after_last_store = true;
  }
  // Per kernel, the same split: what an earlier kernel made, or a later one (or the kernel's
  // own consumer GEMM) reads back, could stay in L2 or on chip, so it is intermediate; the rest
  // no schedule avoids.
  bool intermediate = u.made_inside[t];
  for (std::size_t k = 0; k < nk; ++k) {
    TrafficBounds& kb = rb.kernels[k];
    if (u.loads[k][t]) {
      const bool made_earlier = first_store < k;
      (made_earlier ? kb.intermediate_bytes : kb.compulsory_bytes) += size;
      intermediate |= made_earlier;
    }
    if (u.stores[k][t]) {
      bool read_later = false;
      for (std::size_t c = k + 1; c < nk && !read_later; ++c) read_later = u.loads[c][t];
      (read_later || u.made_inside[t] ? kb.intermediate_bytes : kb.compulsory_bytes) += size;
      if (u.made_inside[t]) kb.intermediate_bytes += size;  // and read once, inside the kernel
    }
  }
  if (external_input) rb.total.compulsory_bytes += size;
  if (first_store != nk && !consumed_after_last_store && !u.made_inside[t]) rb.total.compulsory_bytes += size;  // a final output
  if (intermediate) rb.total.intermediate_bytes += 2 * size;
}

// Each GEMM chain bounds the run; one inside a kernel (a fused dataflow kernel) bounds it too.
void add_chain_bounds(const std::vector<GemmChain>& chains, std::uint64_t fast_memory_bytes, RunBounds& rb) {
  for (const GemmChain& c : chains) {
    const std::uint64_t q = chain_io_lower_bound_bytes(c.shape, fast_memory_bytes);
    if (c.producer.kernel == c.consumer.kernel)
      rb.kernels[c.producer.kernel].chain_io_bound_bytes = std::max(rb.kernels[c.producer.kernel].chain_io_bound_bytes, q);
    rb.total.chain_io_bound_bytes = std::max(rb.total.chain_io_bound_bytes, q);
  }
}

}  // namespace

RunBounds compute_traffic_bounds(const Workload& w, std::uint64_t fast_memory_bytes,
                                 const std::vector<std::optional<GemmShape>>& shapes) {
  const std::size_t nk = w.kernels.size(), nt = w.tensors.size();
  if (!shapes.empty() && shapes.size() != nk)
    throw std::invalid_argument("compute_traffic_bounds: " + std::to_string(shapes.size()) + " GEMM shapes for " +
                                std::to_string(nk) + " kernels");
  const std::vector<GemmChain> chains = find_gemm_chains(w);
  const TensorUse use = tensor_use(w, chains);
  RunBounds rb;
  rb.kernels.resize(nk);
  for (std::size_t t = 0; t < nt; ++t) split_tensor(use, t, tensor_bytes(w.tensors[t]), rb);
  for (std::size_t k = 0; k < nk && !shapes.empty(); ++k) {
    // A kernel that is not one GEMM (a fused dataflow chain) gets no single-GEMM bound: its
    // chain bound is filled in below (docs/architecture.md says why GEMM0's input side alone
    // is not a bound once the intermediate stays on chip).
    if (shapes[k]) rb.kernels[k].io_bound_bytes = gemm_io_lower_bound_bytes(*shapes[k], fast_memory_bytes);
    rb.total.io_bound_bytes = std::max(rb.total.io_bound_bytes, rb.kernels[k].io_bound_bytes);
  }
  if (!shapes.empty()) add_chain_bounds(chains, fast_memory_bytes, rb);
  return rb;
}

}  // namespace tilesim
