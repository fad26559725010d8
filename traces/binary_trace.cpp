// The binary trace form's reader and checksum (layout in docs/trace-format.md; the writer, and
// what fields are stored as, is binary_trace_write.cpp).
//
// The reader checks the declared length and the checksum before it parses anything, and bounds
// every count by the bytes left before allocating, so a damaged or hostile file ends in an
// InputError naming a byte offset, never in a crash, a hang or a huge allocation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <vector>

#include "common/error.hpp"
#include "common/utf8.hpp"
#include "traces/binary_codec.hpp"
#include "traces/trace.hpp"

namespace tilesim {

namespace {

using namespace binary_trace_codec;

class Reader {
 public:
  Reader(std::string_view data, const std::string& origin) : data_(data), origin_(origin), end_(data.size()) {}

  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return end_ - pos_; }
  // Past the header the file length is known to be right, so running out of bytes means the
  // sections overrun the checksum rather than a cut-off file.
  void enter_body(std::size_t end) {
    end_ = end;
    body_ = true;
  }

  [[noreturn, gnu::noinline]] void fail(const std::string& what, std::size_t at) const {
    throw InputError(origin_ + ": corrupt trace: " + what + " at byte offset " + std::to_string(at));
  }
  void need(std::size_t n, const char* what) const {
    if (remaining() < n) [[unlikely]] truncated(n, what);
  }
  [[noreturn, gnu::noinline]] void truncated(std::size_t n, const char* what) const {
    const std::string tail = std::to_string(n - remaining()) + " more bytes at byte offset " + std::to_string(pos_) +
                             " (reading " + what + ")";
    if (body_) throw InputError(origin_ + ": corrupt trace: sections overrun the checksum: needed " + tail);
    throw InputError(origin_ + ": truncated trace: needed " + tail);
  }
  std::uint8_t u8(const char* what) {
    need(1, what);
    return static_cast<std::uint8_t>(data_[pos_++]);
  }
  std::uint64_t fixed(int bytes, const char* what) {
    need(bytes, what);
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t{static_cast<std::uint8_t>(data_[pos_++])} << (8 * i);
    return v;
  }
  std::uint64_t varint(const char* what) {
    const std::size_t start = pos_;
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const std::uint8_t byte = u8(what);
      if (shift == 63 && byte > 1) fail(std::string("varint overflows 64 bits (") + what + ")", start);
      v |= std::uint64_t{byte & 0x7fu} << shift;
      if (!(byte & 0x80)) return v;
    }
  }
  std::uint32_t u32(const char* what) {
    const std::size_t start = pos_;
    const std::uint64_t v = varint(what);
    if (v > 0xffffffffu) fail(std::string(what) + " " + std::to_string(v) + " does not fit in 32 bits", start);
    return static_cast<std::uint32_t>(v);
  }
  // A u32 field stored as the difference from `predicted`.
  std::uint32_t u32_from(std::int64_t predicted, const char* what) {
    const std::size_t start = pos_;
    const std::int64_t r = unzigzag(varint(what));
    if (r > kMaxResidual || r < -kMaxResidual) fail(std::string(what) + " delta out of range", start);
    const std::int64_t v = predicted + r;
    if (v < 0 || v > 0xffffffffll) fail(std::string(what) + " " + std::to_string(v) + " out of range", start);
    return static_cast<std::uint32_t>(v);
  }
  std::string str(const char* what) {
    const std::size_t start = pos_;
    const std::uint64_t n = varint(what);
    if (n > remaining()) fail(std::string(what) + " length " + std::to_string(n) + " exceeds the remaining " +
                                  std::to_string(remaining()) + " bytes", start);
    std::string s(data_.substr(pos_, n));
    // Names end up in JSON and HTML, which must be UTF-8 text.
    if (!valid_utf8(s)) fail(std::string(what) + " is not valid UTF-8 text", start);
    pos_ += n;
    return s;
  }
  // A record count; rejected unless `count` records of at least `min_bytes` each could fit.
  std::uint32_t count(std::uint64_t min_bytes, const char* what) {
    const std::size_t start = pos_;
    const std::uint32_t n = u32(what);
    if (n * min_bytes > remaining())
      fail(std::string(what) + " " + std::to_string(n) + " needs at least " + std::to_string(n * min_bytes) +
               " bytes but only " + std::to_string(remaining()) + " remain", start);
    return n;
  }

 private:
  std::string_view data_;
  const std::string& origin_;
  std::size_t pos_ = 0;
  std::size_t end_;
  bool body_ = false;
};

Tensor read_tensor(Reader& in) {
  Tensor t;
  t.name = in.str("tensor name");
  t.base = in.varint("tensor base");
  t.rows = in.u32("tensor rows");
  t.cols = in.u32("tensor cols");
  t.batch = in.u32("tensor batch");
  const std::size_t at = in.pos();
  const std::uint64_t bits = in.varint("tensor elem_bits");
  if (bits > 0xffff) in.fail("tensor elem_bits " + std::to_string(bits) + " out of range", at);
  t.elem_bits = static_cast<std::uint16_t>(bits);
  const std::size_t layout_at = in.pos();
  const std::uint8_t layout = in.u8("tensor layout");
  if (layout > 1) in.fail("tensor layout byte " + std::to_string(layout) + " is neither 0 (row) nor 1 (col)", layout_at);
  t.col_major = layout == 1;
  t.ld = in.varint("tensor ld");
  t.batch_stride = in.varint("tensor batch_stride");
  return t;
}

// The kernel's fixed fields, each checked as it is read.
Kernel read_kernel_header(Reader& in) {
  Kernel k;
  k.name = in.str("kernel name");
  k.grid_m = in.u32("kernel grid_m");
  k.grid_n = in.u32("kernel grid_n");
  k.grid_z = in.u32("kernel grid_z");
  const std::size_t dtype_at = in.pos();
  const std::uint8_t dtype = in.u8("kernel compute dtype");
  if (dtype >= kNumDtypes) in.fail("compute dtype " + std::to_string(dtype) + " out of range", dtype_at);
  k.compute_dtype = static_cast<Dtype>(dtype);
  const std::size_t mainloop_at = in.pos();
  const std::uint8_t mainloop = in.u8("kernel main loop");
  if (mainloop != kNoMainLoop && mainloop >= kNumMainLoops)
    in.fail("main-loop kind " + std::to_string(mainloop) + " out of range", mainloop_at);
  if (mainloop != kNoMainLoop) k.mainloop = static_cast<MainLoop>(mainloop);
  const std::size_t eff_at = in.pos();
  const std::uint64_t eff = in.varint("kernel main-loop efficiency");
  if (eff > 1000000) in.fail("main-loop efficiency " + std::to_string(eff) + " millionths exceeds 1", eff_at);
  k.mainloop_efficiency = static_cast<double>(eff) / 1e6;
  const std::size_t flags_at = in.pos();
  const std::uint8_t flags = in.u8("kernel flags");
  if (flags & ~(kKernelDrainTiles | kKernelMmaTile | kKernelSerialized | kKernelSingleFragments | kKernelPrefetch |
                kKernelCachedLoads))
    in.fail("kernel flags " + std::to_string(flags) + " has unknown bits", flags_at);
  k.drain_between_tiles = flags & kKernelDrainTiles;
  k.cached_loads = flags & kKernelCachedLoads;
  k.single_fragments = flags & kKernelSingleFragments;
  if (flags & kKernelMmaTile) {
    k.mma_tile_rows = in.u32("kernel mma_tile rows");
    k.mma_tile_cols = in.u32("kernel mma_tile columns");
  }
  if (flags & kKernelSerialized) {
    const std::size_t at = in.pos();
    k.serialized_mma_cols = in.u32("kernel serialized_mma_cols");
    if (k.serialized_mma_cols == 0) in.fail("serialized_mma_cols is 0 though its flag is set", at);
  }
  if (flags & kKernelPrefetch) {
    const std::size_t at = in.pos();
    k.l2_prefetch_bytes = in.u32("kernel l2_prefetch_bytes");
    if (k.l2_prefetch_bytes != 64 && k.l2_prefetch_bytes != 128)
      in.fail("l2_prefetch_bytes " + std::to_string(k.l2_prefetch_bytes) + " is not 64 or 128", at);
  }
  k.stages = in.u32("kernel stages");
  k.resources.threads = in.u32("kernel threads");
  k.resources.regs_per_thread = in.u32("kernel regs_per_thread");
  k.resources.smem_bytes = in.varint("kernel smem_bytes");
  k.blocks_per_sm = in.u32("kernel blocks_per_sm");
  k.stream = in.u32("kernel stream");
  k.total_flops = in.varint("kernel total_flops");
  return k;
}

// The four record counts, checked together (each alone could fit while their sum does not),
// then the kernel's arrays sized to them.
void read_record_counts(Reader& in, Kernel& k) {
  const std::size_t counts_at = in.pos();
  const std::uint32_t nb = in.count(kMinBlockBytes, "block count");
  const std::uint32_t ns = in.count(kMinStepBytes, "step count");
  const std::uint32_t na = in.count(kMinAccessBytes, "access count");
  const std::uint32_t nd = in.count(kMinDispatchBytes, "dispatch count");
  const std::uint64_t least = nb * kMinBlockBytes + ns * kMinStepBytes + na * kMinAccessBytes + nd * kMinDispatchBytes;
  if (least > in.remaining())
    in.fail("kernel record counts need at least " + std::to_string(least) + " bytes but only " +
                std::to_string(in.remaining()) + " remain", counts_at);
  k.blocks.resize(nb);
  k.steps.resize(ns);
  k.accesses.resize(na);
  k.dispatch.resize(nd);
}

void read_blocks(Reader& in, Kernel& k) {
  std::int64_t next_step = 0;
  for (std::size_t b = 0; b < k.blocks.size(); ++b) {
    Block& B = k.blocks[b];
    const TilePrediction p = predict_tile(b, k.grid_m, k.grid_n);
    B.num_steps = in.u32("block num_steps");
    B.first_step = in.u32_from(next_step, "block first_step");
    B.tile_m = in.u32_from(p.m, "block tile_m");
    B.tile_n = in.u32_from(p.n, "block tile_n");
    B.tile_z = in.u32_from(p.z, "block tile_z");
    next_step = std::int64_t{B.first_step} + B.num_steps;
  }
}

void read_steps(Reader& in, Kernel& k) {
  std::int64_t next_access = 0;
  Step work;  // the previous step's work
  for (Step& S : k.steps) {
    const std::size_t at = in.pos();
    const std::uint8_t head = in.u8("step flags");
    const std::uint32_t inline_n = head >> 4;
    S.num_accesses = inline_n == kInlineAccesses ? in.u32("step num_accesses") : inline_n;
    if (inline_n == kInlineAccesses && S.num_accesses < kInlineAccesses)
      in.fail("step num_accesses " + std::to_string(S.num_accesses) + " should have been stored inline", at);
    if (head & kStepWait) {
      S.wait_sem = in.u32("step wait_sem");
      S.wait_value = in.u32("step wait_value");
    }
    if (head & kStepPost) S.post_sem = in.u32("step post_sem");
    S.first_access = static_cast<std::uint32_t>(next_access);
    if (head & kStepFirstAccess) S.first_access = in.u32_from(next_access, "step first_access");
    else if (next_access > 0xffffffffll) in.fail("step first_access out of range", at);
    if (head & kStepWork) {
      work.flops = in.varint("step flops");
      work.dequant_elems = in.u32("step dequant_elems");
      work.softmax_elems = in.u32("step softmax_elems");
      work.epilogue_elems = in.u32("step epilogue_elems");
    }
    S.flops = work.flops;
    S.dequant_elems = work.dequant_elems;
    S.softmax_elems = work.softmax_elems;
    S.epilogue_elems = work.epilogue_elems;
    next_access = std::int64_t{S.first_access} + S.num_accesses;
  }
}

// Accesses name their tensor by index, so each is checked against the tensor count before its
// prediction state is touched.
void read_accesses(Reader& in, Kernel& k, std::size_t index, std::vector<AccessState>& state) {
  const std::size_t num_tensors = state.size();
  for (TileAccess& A : k.accesses) {
    const std::size_t at = in.pos();
    const std::uint8_t head = in.u8("access header");
    const std::uint32_t inline_t = head >> 4;
    A.tensor = inline_t == kInlineTensor ? in.u32("access tensor") : inline_t;
    if (A.tensor >= num_tensors)
      in.fail("access names tensor " + std::to_string(A.tensor) + " of " + std::to_string(num_tensors), at);
    AccessState& st = access_state(state, A.tensor, index);
    if ((head & kAccStore) && (head & kAccMulticast)) in.fail("access is both a store and a multicast", at);
    A.kind = head & kAccStore ? AccessKind::store : head & kAccMulticast ? AccessKind::multicast : AccessKind::load;
    A.batch = head & kAccBatch ? in.u32("access batch") : st.batch;
    A.rows = st.rows;
    A.cols = st.cols;
    if (head & kAccShape) {
      A.rows = in.u32("access rows");
      A.cols = in.u32("access cols");
    }
    A.row0 = in.u32_from(st.row0 + st.drow, "access row0");
    A.col0 = in.u32_from(st.col0 + st.dcol, "access col0");
    st.advance(A);
  }
}

void read_dispatch(Reader& in, Kernel& k) {
  std::int64_t prev = 0;
  for (std::uint32_t& d : k.dispatch) {
    const std::uint32_t e = in.u32_from(prev + 1, "dispatch entry");
    d = e == 0 ? kNoBlock : e - 1;
    prev = e;
  }
}

Kernel read_kernel(Reader& in, std::size_t index, std::vector<AccessState>& state) {
  Kernel k = read_kernel_header(in);
  read_record_counts(in, k);
  read_blocks(in, k);
  read_steps(in, k);
  read_accesses(in, k, index, state);
  read_dispatch(in, k);
  return k;
}

}  // namespace

std::uint64_t trace_checksum(std::string_view data) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

Workload read_binary_trace(std::string_view data, const std::string& origin) {
  Reader in(data, origin);

  // Header. A short file whose bytes so far match the magic is reported as truncated.
  const std::size_t magic_len = std::min<std::size_t>(data.size(), 8);
  if (std::memcmp(data.data(), kBinaryTraceMagic, magic_len) != 0)
    throw InputError(origin + ": not a binary tilesim trace: bad magic at byte offset 0");
  in.need(8, "magic");
  in.fixed(8, "magic");
  const std::uint32_t version = static_cast<std::uint32_t>(in.fixed(4, "format version"));
  if (version != kBinaryTraceVersion)
    throw InputError(origin + ": unsupported binary trace version " + std::to_string(version) +
                     " at byte offset 8 (this build reads version " + std::to_string(kBinaryTraceVersion) + ")");
  const std::uint64_t total = in.fixed(8, "total length");
  if (total < kHeaderBytes + kChecksumBytes)
    throw InputError(origin + ": corrupt trace: total length " + std::to_string(total) + " at byte offset 12 is too small");
  if (data.size() < total)
    throw InputError(origin + ": truncated trace: needed " + std::to_string(total - data.size()) +
                     " more bytes at byte offset " + std::to_string(data.size()) + " (reading the " +
                     std::to_string(total) + "-byte trace declared at byte offset 12)");
  if (data.size() > total)
    throw InputError(origin + ": corrupt trace: " + std::to_string(data.size() - total) +
                     " unexpected bytes after the declared end at byte offset " + std::to_string(total));

  const std::size_t sum_at = total - kChecksumBytes;
  std::uint64_t stored = 0;
  for (int i = 0; i < 8; ++i) stored |= std::uint64_t{static_cast<std::uint8_t>(data[sum_at + i])} << (8 * i);
  const std::uint64_t actual = trace_checksum(data.substr(0, sum_at));
  if (stored != actual) {
    char msg[128];
    std::snprintf(msg, sizeof msg, "checksum mismatch at byte offset %zu: stored 0x%016llx, computed 0x%016llx", sum_at,
                  static_cast<unsigned long long>(stored), static_cast<unsigned long long>(actual));
    throw InputError(origin + ": corrupt trace: " + msg);
  }

  // Sections: everything below must end exactly at the checksum.
  in.enter_body(sum_at);
  Workload w;
  w.name = in.str("workload name");
  w.num_semaphores = in.u32("workload num_semaphores");
  const std::uint32_t nt = in.count(kMinTensorBytes, "tensor count");
  w.tensors.reserve(nt);
  for (std::uint32_t t = 0; t < nt; ++t) w.tensors.push_back(read_tensor(in));
  const std::uint32_t nk = in.count(kMinKernelBytes, "kernel count");
  w.kernels.reserve(nk);
  std::vector<AccessState> state(nt);
  for (std::uint32_t k = 0; k < nk; ++k) w.kernels.push_back(read_kernel(in, k, state));
  if (in.remaining() != 0)
    in.fail(std::to_string(in.remaining()) + " unread bytes before the checksum", in.pos());
  validate_workload(w, origin);
  return w;
}

}  // namespace tilesim
