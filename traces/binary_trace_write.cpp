// The binary trace form's writer (layout in docs/trace-format.md; the reader is
// binary_trace.cpp). Every field is written byte by byte, little-endian or LEB128, so files are
// the same on every host. Most fields are stored as the difference from a prediction (running
// sums, index-derived tiles, per-tensor strides), which makes a regular GEMM trace cost about 3
// bytes per tile access.
#include <cmath>
#include <ostream>
#include <vector>

#include "traces/binary_codec.hpp"
#include "traces/trace.hpp"

namespace tilesim {

namespace {

using namespace binary_trace_codec;

class Writer {
 public:
  void u8(std::uint8_t v) { buf_.push_back(static_cast<char>(v)); }
  void fixed(std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      u8(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    u8(static_cast<std::uint8_t>(v));
  }
  void svarint(std::int64_t v) { varint(zigzag(v)); }
  void str(const std::string& s) {
    varint(s.size());
    buf_.append(s);
  }
  std::string& buf() { return buf_; }

 private:
  std::string buf_;
};

// The kernel's fixed fields and its four record counts.
void write_kernel_header(Writer& out, const Kernel& k) {
  out.str(k.name);
  out.varint(k.grid_m);
  out.varint(k.grid_n);
  out.varint(k.grid_z);
  out.u8(static_cast<std::uint8_t>(k.compute_dtype));
  out.u8(k.mainloop ? static_cast<std::uint8_t>(*k.mainloop) : kNoMainLoop);
  out.varint(static_cast<std::uint64_t>(std::llround(k.mainloop_efficiency * 1e6)));  // millionths
  out.u8((k.drain_between_tiles ? kKernelDrainTiles : 0) | (k.mma_tile_rows ? kKernelMmaTile : 0) |
         (k.serialized_mma_cols ? kKernelSerialized : 0) | (k.single_fragments ? kKernelSingleFragments : 0) |
         (k.l2_prefetch_bytes ? kKernelPrefetch : 0) | (k.cached_loads ? kKernelCachedLoads : 0));
  if (k.mma_tile_rows) {
    out.varint(k.mma_tile_rows);
    out.varint(k.mma_tile_cols);
  }
  if (k.serialized_mma_cols) out.varint(k.serialized_mma_cols);
  if (k.l2_prefetch_bytes) out.varint(k.l2_prefetch_bytes);
  out.varint(k.stages);
  out.varint(k.resources.threads);
  out.varint(k.resources.regs_per_thread);
  out.varint(k.resources.smem_bytes);
  out.varint(k.blocks_per_sm);
  out.varint(k.stream);
  out.varint(k.total_flops);
  out.varint(k.blocks.size());
  out.varint(k.steps.size());
  out.varint(k.accesses.size());
  out.varint(k.dispatch.size());
}

// Blocks: first_step as the difference from the previous block's end, the tile from predict_tile.
void write_blocks(Writer& out, const Kernel& k) {
  std::int64_t next_step = 0;
  for (std::size_t b = 0; b < k.blocks.size(); ++b) {
    const Block& B = k.blocks[b];
    const TilePrediction p = predict_tile(b, k.grid_m, k.grid_n);
    out.varint(B.num_steps);
    out.svarint(B.first_step - next_step);
    out.svarint(B.tile_m - p.m);
    out.svarint(B.tile_n - p.n);
    out.svarint(B.tile_z - p.z);
    next_step = std::int64_t{B.first_step} + B.num_steps;
  }
}

// Steps: a flag byte says which fields follow; the work only when it differs from the
// previous step's, first_access only when it is not the previous step's end.
void write_steps(Writer& out, const Kernel& k) {
  std::int64_t next_access = 0;
  Step work;  // the previous step's work
  for (const Step& S : k.steps) {
    const std::int64_t first_residual = S.first_access - next_access;
    const bool has_wait = S.wait_sem != kNoSem || S.wait_value != 0;
    const bool new_work = !same_work(S, work);
    std::uint8_t flags = (has_wait ? kStepWait : 0) | (S.post_sem != kNoSem ? kStepPost : 0) |
                         (first_residual != 0 ? kStepFirstAccess : 0) | (new_work ? kStepWork : 0);
    const std::uint32_t inline_n = std::min(S.num_accesses, kInlineAccesses);
    out.u8(static_cast<std::uint8_t>(flags | inline_n << 4));
    if (inline_n == kInlineAccesses) out.varint(S.num_accesses);
    if (has_wait) {
      out.varint(S.wait_sem);
      out.varint(S.wait_value);
    }
    if (S.post_sem != kNoSem) out.varint(S.post_sem);
    if (first_residual != 0) out.svarint(first_residual);
    if (new_work) {
      out.varint(S.flops);
      out.varint(S.dequant_elems);
      out.varint(S.softmax_elems);
      out.varint(S.epilogue_elems);
      work = S;
    }
    next_access = std::int64_t{S.first_access} + S.num_accesses;
  }
}

// Accesses: a header byte, then batch and shape only where they change and the position as the
// residual from the tensor's stride prediction (AccessState).
void write_accesses(Writer& out, const Kernel& k, std::size_t index, std::vector<AccessState>& state) {
  for (const TileAccess& A : k.accesses) {
    AccessState& st = access_state(state, A.tensor, index);  // in range: the workload was validated
    const bool shape = A.rows != st.rows || A.cols != st.cols;
    const bool batch = A.batch != st.batch;
    const std::uint32_t inline_t = std::min(A.tensor, kInlineTensor);
    out.u8(static_cast<std::uint8_t>((A.kind == AccessKind::store ? kAccStore : 0) |
                                     (A.kind == AccessKind::multicast ? kAccMulticast : 0) | (shape ? kAccShape : 0) |
                                     (batch ? kAccBatch : 0) | inline_t << 4));
    if (inline_t == kInlineTensor) out.varint(A.tensor);
    if (batch) out.varint(A.batch);
    if (shape) {
      out.varint(A.rows);
      out.varint(A.cols);
    }
    out.svarint(A.row0 - (st.row0 + st.drow));
    out.svarint(A.col0 - (st.col0 + st.dcol));
    st.advance(A);
  }
}

void write_dispatch(Writer& out, const Kernel& k) {
  std::int64_t prev = 0;  // dispatch entries are stored as e = block + 1 (0 = kNoBlock), minus prev + 1
  for (std::uint32_t d : k.dispatch) {
    const std::int64_t e = d == kNoBlock ? 0 : std::int64_t{d} + 1;
    out.svarint(e - (prev + 1));
    prev = e;
  }
}

void write_kernel(Writer& out, const Kernel& k, std::size_t index, std::vector<AccessState>& state) {
  write_kernel_header(out, k);
  write_blocks(out, k);
  write_steps(out, k);
  write_accesses(out, k, index, state);
  write_dispatch(out, k);
}

}  // namespace

void write_binary_trace(const Workload& w, std::ostream& out) {
  validate_workload(w, "write_trace");
  Writer wr;
  for (unsigned char c : kBinaryTraceMagic) wr.u8(c);
  wr.fixed(kBinaryTraceVersion, 4);
  wr.fixed(0, 8);  // total length, patched below
  wr.str(w.name);
  wr.varint(w.num_semaphores);
  wr.varint(w.tensors.size());
  for (const Tensor& t : w.tensors) {
    wr.str(t.name);
    wr.varint(t.base);
    wr.varint(t.rows);
    wr.varint(t.cols);
    wr.varint(t.batch);
    wr.varint(t.elem_bits);
    wr.u8(t.col_major ? 1 : 0);
    wr.varint(t.ld);
    wr.varint(t.batch_stride);
  }
  wr.varint(w.kernels.size());
  std::vector<AccessState> state(w.tensors.size());
  for (std::size_t k = 0; k < w.kernels.size(); ++k) write_kernel(wr, w.kernels[k], k, state);

  std::string& buf = wr.buf();
  const std::uint64_t total = buf.size() + kChecksumBytes;
  for (int i = 0; i < 8; ++i) buf[12 + i] = static_cast<char>(total >> (8 * i));
  wr.fixed(trace_checksum(buf), 8);
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace tilesim
