#include "sim/report/chain_bound.hpp"

#include <algorithm>
#include <cmath>

namespace tilesim {

namespace {

inline constexpr std::uint32_t kNone = 0xffffffffu;

// The GEMM one block computes, read off its first step (operand loads) and last step (store):
// A, B, an optional B2 of B's shape beside it (gate and up weights), and C. A block whose first
// step names fewer than two tensors, or whose last step stores nothing, is not a GEMM block.
struct BlockGemm {
  std::uint32_t a = kNone, b = kNone, b2 = kNone, c = kNone;
};

BlockGemm block_gemm(const Workload& w, const ProgramView& blk) {
  BlockGemm g;
  if (blk.num_steps == 0) return g;
  const Step& first = blk.steps[0];
  for (std::uint32_t i = 0; i < first.num_accesses; ++i) {
    const TileAccess& acc = blk.accesses[first.first_access + i];
    if (acc.kind == AccessKind::store || acc.tensor >= w.tensors.size() || acc.tensor == g.a || acc.tensor == g.b)
      continue;
    if (g.a == kNone) {
      g.a = acc.tensor;
    } else if (g.b == kNone) {
      g.b = acc.tensor;
    } else if (g.b2 == kNone && w.tensors[acc.tensor].rows == w.tensors[g.b].rows &&
               w.tensors[acc.tensor].cols == w.tensors[g.b].cols) {
      g.b2 = acc.tensor;
    }
  }
  const Step& last = blk.steps[blk.num_steps - 1];
  for (std::uint32_t i = 0; i < last.num_accesses && g.c == kNone; ++i)
    if (blk.accesses[last.first_access + i].kind == AccessKind::store && blk.accesses[last.first_access + i].tensor < w.tensors.size())
      g.c = blk.accesses[last.first_access + i].tensor;
  return g;
}

// Bounds of one segment (see the docs): the most multiply-adds of both GEMMs a segment of
// T = alpha*S I/Os can hold, in units of S^1.5, with kappa0 = sqrt(S)/k0, kappa1 = sqrt(S)/k1.
// zeta (the boundary values of the intermediate, in units of S) is split into intervals; on
// each, every factor is bounded by its value at the interval's worse end, so the result is an
// upper bound of the maximum over zeta, whatever the interval count.
double segment_products(double alpha, double kappa0, double kappa1, bool consumer_output_final) {
  const double d = 2.0 + alpha, in = 1.0 + alpha;  // boundary values / S; inputs / S
  const int intervals = 1024;
  double best = 0;
  for (int i = 0; i < intervals; ++i) {
    const double za = d * i / intervals, zb = d * (i + 1) / intervals;
    const double rest = d - za;  // operands and Y's boundary values / S, at most
    double p = rest / 2 * std::sqrt(zb) + kappa0 * std::min(in, rest) * rest / 4;
    if (!consumer_output_final) p += kappa1 * (zb + in * in * kappa0 * kappa0 / 4) * rest;
    best = std::max(best, p);
  }
  return best;
}

bool external(const std::vector<bool>& written, std::uint32_t t) { return t == kNone || !written[t]; }

}  // namespace

std::vector<GemmOp> find_gemm_ops(const Workload& w) {
  std::vector<GemmOp> ops;
  for (std::size_t ki = 0; ki < w.kernels.size(); ++ki) {
    const Kernel& k = w.kernels[ki];
    std::vector<std::pair<std::uint32_t, std::uint32_t>> seen;
    for_each_program(k, [&](std::uint32_t, const ProgramView& blk) {
      const BlockGemm g = block_gemm(w, blk);
      if (g.b == kNone || g.c == kNone) return;
      if (std::find(seen.begin(), seen.end(), std::make_pair(g.a, g.b)) != seen.end()) return;
      seen.emplace_back(g.a, g.b);
      const Tensor &ta = w.tensors[g.a], &tb = w.tensors[g.b], &tc = w.tensors[g.c];
      // A [m x k] . B [k x n]; a consumer of a concatenated [gate | up] result reads A's two
      // k-wide halves (A is m x 2k).
      if ((ta.cols != tb.rows && ta.cols != 2 * tb.rows) || tc.rows != ta.rows || ta.batch != tb.batch) return;
      GemmOp op;
      op.kernel = ki;
      op.a = g.a;
      op.b = g.b;
      op.b2 = g.b2;
      op.c = g.c;
      op.shape.m = ta.rows;
      op.shape.k = tb.rows;
      op.shape.n = static_cast<std::uint64_t>(tb.cols) * (g.b2 == kNone ? 1 : 2);
      op.shape.batch = ta.batch;
      op.shape.in_elem_bits = std::min(ta.elem_bits, tb.elem_bits);
      op.shape.out_elem_bits = tc.elem_bits;
      ops.push_back(op);
    });
  }
  return ops;
}

std::vector<GemmChain> find_gemm_chains(const Workload& w) {
  const std::size_t nt = w.tensors.size();
  std::vector<bool> written(nt, false);
  std::vector<std::size_t> last_load(nt, 0);  // 1 + the last kernel that loads the tensor
  // Through views: a tensor is written when any view of its bytes is (a layer's O_heads is O).
  const std::vector<std::uint32_t> root = storage_roots(w.tensors);
  for (std::size_t ki = 0; ki < w.kernels.size(); ++ki)
    for_each_access(w.kernels[ki], [&](const TileAccess& a) {
      if (a.tensor >= nt) return;
      if (a.kind == AccessKind::store) written[root[a.tensor]] = true;
      else last_load[root[a.tensor]] = ki + 1;
    });
  for (std::size_t t = 0; t < nt; ++t) {
    written[t] = written[root[t]];
    last_load[t] = last_load[root[t]];
  }
  const std::vector<GemmOp> ops = find_gemm_ops(w);
  std::vector<GemmChain> chains;
  for (const GemmOp& p : ops)
    for (const GemmOp& c : ops) {
      if (&p == &c || c.a != p.c || c.kernel < p.kernel) continue;
      if (!external(written, p.a) || !external(written, p.b) || !external(written, p.b2) || !external(written, c.b))
        continue;
      if (p.shape.m != c.shape.m || p.shape.batch != c.shape.batch) continue;
      GemmChain ch{p, c, {}};
      ChainShape& s = ch.shape;
      s.m = p.shape.m;
      s.k0 = p.shape.k;
      s.n0 = p.shape.n;
      s.k1 = c.shape.k;
      s.n1 = c.shape.n;
      s.batch = p.shape.batch;
      s.elem_bits = w.tensors[p.a].elem_bits;
      for (std::uint32_t t : {p.b, p.c, c.b, c.c}) s.elem_bits = std::min<std::uint32_t>(s.elem_bits, w.tensors[t].elem_bits);
      // Y read again later (by a later kernel, or as another GEMM's operand) may stay on chip.
      // (The consumer's own kernel may load it: split-K partials are its own results.)
      s.consumer_output_final = last_load[c.c] <= c.kernel + 1 &&
                                std::none_of(ops.begin(), ops.end(), [&](const GemmOp& o) { return o.a == c.c; });
      chains.push_back(ch);
    }
  return chains;
}

std::uint64_t chain_io_lower_bound_bytes(const ChainShape& c, std::uint64_t fast_memory_bytes) {
  if (c.m == 0 || c.k0 == 0 || c.n0 == 0 || c.k1 == 0 || c.n1 == 0 || c.elem_bits == 0 || fast_memory_bytes == 0)
    return 0;
  const long double word = c.elem_bits / 8.0L;
  const long double s = static_cast<long double>(fast_memory_bytes) / word;  // words of fast memory
  const long double products = static_cast<long double>(c.batch) * c.m *
                               (static_cast<long double>(c.n0) * c.k0 + static_cast<long double>(c.n1) * c.k1);
  const double kappa0 = static_cast<double>(std::sqrt(s) / c.k0), kappa1 = static_cast<double>(std::sqrt(s) / c.k1);
  long double best = 0;
  // Every segment length T = alpha*S gives a valid bound; take the best of a geometric grid.
  for (int j = -32; j <= 48; ++j) {
    const double alpha = std::exp2(j / 8.0);
    const long double per_segment = segment_products(alpha, kappa0, kappa1, c.consumer_output_final) * std::pow(s, 1.5L);
    best = std::max(best, alpha * s * (products / per_segment - 1));
  }
  return static_cast<std::uint64_t>(std::ceil(best * word));
}

}  // namespace tilesim
