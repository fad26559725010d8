// The sync between a layer's kernels. Each boundary takes the policies of `kind: ffn`'s pair
// where they mean the same: the two GEMM -> GEMM boundaries (the output projection -> the
// FFN's first GEMM, and the FFN's own pair) go through those policies unchanged; between the
// attention and the output projection, rowsync and tilesync wait for the attention's output
// tiles by the rows and heads they store (below). What a boundary cannot express is an error
// naming its key.
#include <algorithm>

#include "common/error.hpp"
#include "workloads/layer.hpp"
#include "workloads/sync/cusync.hpp"

namespace tilesim {

namespace {

// A boundary's policy: one of `supported` (else an error saying `why` not), its node checked
// here when no policy will check it (stream order takes only `kind`).
std::optional<ConfigNode> parse_boundary(const ConfigNode& sync, const char* key, const std::vector<std::string>& supported,
                                         const std::string& why) {
  auto b = sync.find(key);
  if (!b) return b;
  b->expect_map();
  const std::string kind = b->choice("kind", sync_kinds());
  if (std::find(supported.begin(), supported.end(), kind) == supported.end())
    b->fail_key("kind", kind + " is not supported here: " + why);
  if (kind == "stream") {
    b->allow_keys({"kind"});
    return std::nullopt;
  }
  return b;
}

}  // namespace

LayerSync parse_layer_sync(const std::optional<ConfigNode>& sync) {
  LayerSync s;
  if (!sync) return s;
  sync->expect_map();
  sync->allow_keys({"kind", "qkv_attention", "attention_out_proj", "out_proj_ffn", "ffn"});
  if (sync->has("kind") && sync->string("kind") != "stream")
    sync->fail_key("kind", "a layer's sync names a policy per kernel boundary ({attention_out_proj: {kind: ...}, "
                           "out_proj_ffn: {...}, ffn: {...}}); `kind:` may only be stream (every boundary in stream order)");
  parse_boundary(*sync, "qkv_attention", {"stream"},
                 "the attention's blocks read the K and V rows of every earlier token of their sequence, which all the "
                 "QKV projection's row tiles write, so waits per row or tile are not modelled; use stream");
  s.attention_out_proj = parse_boundary(
      *sync, "attention_out_proj", {"stream", "rowsync", "tilesync"},
      "dataflow fuses two GEMMs' tiles into one kernel and the attention's are not a GEMM's; stridedsync is for a "
      "concatenated [gate | up] producer; use rowsync or tilesync");
  s.out_proj_ffn = parse_boundary(*sync, "out_proj_ffn", {"stream", "rowsync", "tilesync", "dataflow"},
                                  "stridedsync is for a concatenated [gate | up] producer (the FFN's own pair)");
  s.ffn = parse_boundary(*sync, "ffn", sync_kinds(), "");
  return s;
}

namespace {

using Groups = std::vector<std::vector<Kernel>>;
enum Group : std::size_t { kQkv, kAttention, kOutProj, kFfnProducers, kFfnConsumer };

// The stream of the last placed kernel before group `g`, else `start`.
std::uint32_t stream_before(const Groups& g, std::size_t group, std::uint32_t start) {
  for (std::size_t i = group; i-- > 0;)
    for (auto k = g[i].rbegin(); k != g[i].rend(); ++k)
      if (k->stream != kUnplacedStream) return k->stream;
  return start;
}

// Hands groups `prod` and `cons` (one kernel) to the CuSync stream structure or a policy (`sync`
// set), and puts what comes back in their place: the last kernel, the consumer (or the fused
// kernel), in `cons`, the others in `prod`.
void run_pair(const ConfigNode* sync, ChainPair p, Groups& g, std::size_t prod, std::size_t cons, std::uint32_t start,
              const std::string& prefix, Workload& w) {
  p.producer_stream = stream_before(g, cons, start);
  p.consumer_stream = p.producer_stream ^ 1;  // a second stream, as CuSync's pairs have
  p.producers = std::move(g[prod]);
  p.consumer = std::move(g[cons].front());
  Workload out;
  out.num_semaphores = w.num_semaphores;
  if (sync) apply_sync(sync, p, out);
  else sync_detail::cusync_streams(p, out);
  w.num_semaphores = out.num_semaphores;
  for (Kernel& k : out.kernels)  // the policy's own kernels (wait, dataflow) named by layer
    if (!k.name.starts_with(prefix)) k.name = prefix + k.name;
  g[cons].assign(1, std::move(out.kernels.back()));
  out.kernels.pop_back();
  g[prod] = std::move(out.kernels);
}

// A GEMM -> GEMM pair's geometry, as `kind: ffn` gives it for its own pair.
ChainPair gemm_pair(const GemmSpec& producer, const GemmSpec& consumer, std::uint32_t stride_tiles) {
  ChainPair p;
  p.tiles_m = producer.tiles_m();
  p.producer_tiles_n = producer.tiles_n();
  p.producer_bn = producer.bn;
  p.consumer_bk = consumer.bk;
  p.consumer_tiles_k = consumer.tiles_k();
  p.consumer_split_k = consumer.split_k;
  p.producer_stride_tiles = stride_tiles;
  return p;
}

// attention -> out_proj under rowsync or tilesync. The attention's last kernel (the fused
// kernel, the combine, or the unfused PV GEMM) stores O by head and token rows; each store
// posts the semaphore of the output projection's row tile holding those rows (rowsync) or of
// that row tile and head (tilesync: a k-step of bk columns reads one head's D columns). A
// consumer block waits for as many posts as its rows (and head) receive: all heads' tiles of
// its rows.
void attention_pair(const ConfigNode& sync, const LayerKernels& lk, Groups& g, std::uint32_t start, Workload& w) {
  sync.allow_keys({"kind"});
  const bool per_head = sync.string("kind") == "tilesync";
  const GemmSpec& op = lk.out_proj_spec;
  if (per_head && lk.head_dim % op.bk)
    sync.fail_key("kind", "tilesync needs head_dim (" + std::to_string(lk.head_dim) + ") to be a multiple of out_proj's bk (" +
                              std::to_string(op.bk) + "), so each k-step reads one head's columns");
  const std::uint32_t per_row = per_head ? lk.heads : 1, base = w.num_semaphores;
  w.num_semaphores += op.tiles_m() * per_row;
  std::vector<std::uint32_t> posts(static_cast<std::size_t>(op.tiles_m()) * per_row, 0);
  Kernel& prod = g[kAttention].back();
  for (Step& s : prod.steps)
    for (std::uint32_t i = 0; i < s.num_accesses; ++i) {
      const TileAccess& a = prod.accesses[s.first_access + i];
      if (a.kind != AccessKind::store || a.tensor != lk.o_heads) continue;
      const std::uint32_t r = a.row0 / op.bm;
      if ((a.row0 + a.rows - 1) / op.bm != r)
        sync.fail_key("kind", "an attention output tile's token rows [" + std::to_string(a.row0) + ", " +
                                  std::to_string(a.row0 + a.rows) + ") straddle two of out_proj's " + std::to_string(op.bm) +
                                  "-row tiles; make out_proj's bm a multiple of block_q and of seq (or seq a multiple of bm)");
      s.post_sem = base + r * per_row + (per_head ? a.batch : 0);
      ++posts[s.post_sem - base];
    }
  Kernel& cons = g[kOutProj].front();
  for (const Block& b : cons.blocks) {
    const std::uint32_t row = b.tile_m * per_row;
    if (!per_head) {
      Step& first = cons.steps[b.first_step];
      first.wait_sem = base + row;
      first.wait_value = posts[row];
      continue;
    }
    for (std::uint32_t i = 0; i + 1 < b.num_steps; ++i) {  // main-loop steps; the last is the epilogue
      Step& s = cons.steps[b.first_step + i];
      const std::uint32_t head = i * op.bk / lk.head_dim;
      s.wait_sem = base + row + head;
      s.wait_value = posts[row + head];
    }
  }
  run_pair(nullptr, ChainPair{}, g, kAttention, kOutProj, start, lk.prefix, w);
}

}  // namespace

void append_layer(const LayerSync& sync, LayerKernels& k, Workload& w) {
  const std::uint32_t start = w.kernels.empty() ? 0 : w.kernels.back().stream;
  Groups g{std::move(k.qkv), std::move(k.attention), std::move(k.out_proj), std::move(k.ffn_producers),
           std::move(k.ffn_consumer)};
  if (sync.attention_out_proj) attention_pair(*sync.attention_out_proj, k, g, start, w);
  if (sync.out_proj_ffn)
    run_pair(&*sync.out_proj_ffn, gemm_pair(k.out_proj_spec, k.g0, 0), g, kOutProj, kFfnProducers, start, k.prefix, w);
  if (sync.ffn)
    run_pair(&*sync.ffn, gemm_pair(k.g0, k.g1, k.ffn_stride_tiles), g, kFfnProducers, kFfnConsumer, start, k.prefix, w);
  // Kernels no policy placed follow on the stream of the kernel before them.
  std::uint32_t stream = start;
  for (std::vector<Kernel>& group : g)
    for (Kernel& kernel : group) {
      if (kernel.stream == kUnplacedStream) kernel.stream = stream;
      stream = kernel.stream;
      w.kernels.push_back(std::move(kernel));
    }
}

}  // namespace tilesim
