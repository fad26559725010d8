// The C ABI of the explorer's WebAssembly module (cmake/explore_wasm.cmake builds this file
// with models/cache/*.cpp and sim/tools/explore/replay.cpp for wasm32-wasi; the native build leaves
// it out). The page drives it through TilesimReplay (sim/tools/explore/assets/replay.js).
//
// Every entry point checks what JS hands it and answers an error code instead of trapping: a
// trap would leave the page with a dead module and no message. Codes (kept in step with
// replay.js): 0 ok, -1 no program loaded, -2 malformed program, -3 unsupported L2 shape,
// -4 reset() not called since the program was loaded, -5 block out of range, -6 out of memory,
// -7 pointer range outside the module's memory.
//
// State sits behind a pointer that starts null: the module has no start function (it is
// linked without crt files), so there must be no global constructors or destructors.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "models/cache/hash/hash.hpp"
#include "models/cache/replacement/replacement.hpp"
#include "sim/tools/explore/replay.hpp"

namespace tilesim {

// The L2 model reports a bad configuration through this (common/error.hpp); reset() checks
// the shape first, so reaching it is a bug of this file, not bad input.
void throw_input_error(const std::string&) { __builtin_trap(); }

}  // namespace tilesim

// The global allocation functions, replaced (as C++ allows) by plain malloc/free: libc++'s
// own (new.cpp) would link its stderr reporting and with it WASI's file imports. A failed
// throwing new traps, as libc++'s does without exceptions; reset() checks the one large
// allocation (the L2 arena) first, so that a too-large L2 is an error code, not a trap.
void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (!p) __builtin_trap();
  return p;
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return std::malloc(n == 0 ? 1 : n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return std::malloc(n == 0 ? 1 : n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

#define TILESIM_EXPORT(name) extern "C" __attribute__((export_name(name)))

namespace {

using tilesim::explore::Replay;
using tilesim::explore::ReplayProgram;

enum : std::int32_t {
  kOk = 0,
  kNoProgram = -1,
  kBadProgram = -2,
  kBadL2 = -3,
  kNoReplay = -4,
  kBadBlock = -5,
  kNoMemory = -6,
  kBadPointer = -7,
};

// The largest L2 arena the module will allocate: wasm32 memory stops at 4 GiB, and a page
// that asks for more than this has been handed a nonsense shape (an H100's is ~3.3 MB).
constexpr std::uint64_t kMaxArenaBytes = 1ull << 30;

struct State {
  bool loaded = false;
  ReplayProgram program;
  std::unique_ptr<Replay> replay;
};

State* g_state = nullptr;

State& state() {
  if (!g_state) g_state = new (std::nothrow) State;
  return *g_state;  // a module that cannot allocate ~100 bytes is already lost
}

/// Whether [ptr, ptr + bytes) lies inside the module's linear memory.
bool in_memory(std::uintptr_t ptr, std::uint64_t bytes) {
  const std::uint64_t size = static_cast<std::uint64_t>(__builtin_wasm_memory_size(0)) * 65536;
  return ptr != 0 && ptr <= size && bytes <= size - ptr;
}

bool pow2(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

/// The checks of models/arch.cpp's parse_l2 and of L2Cache's constructor, answered as a bool.
bool l2_shape_ok(const tilesim::L2Spec& l) {
  if (l.partitions < 1 || l.partitions > 2 || l.ways < 1 || l.ways > 64) return false;
  if (!pow2(l.line_bytes) || l.line_bytes < 32 || l.line_bytes > 1024) return false;
  if (!pow2(l.sector_bytes) || l.sector_bytes < 8 || l.line_bytes % l.sector_bytes != 0 ||
      l.line_bytes / l.sector_bytes > 8)
    return false;
  const std::uint64_t set_bytes = static_cast<std::uint64_t>(l.line_bytes) * l.ways * l.partitions;
  if (l.bytes < 1024 || l.bytes > (1ull << 36) || l.bytes % set_bytes != 0) return false;
  const std::uint64_t sets = l.bytes / set_bytes;
  if (sets == 0 || sets > 0xffffffffull) return false;
  return tilesim::L2Cache::arena_bytes(l) <= kMaxArenaBytes;
}

}  // namespace

/// `bytes` of module memory for JS to fill (the packed program, the cell_fractions output);
/// 0 when there is none. Release with release().
TILESIM_EXPORT("alloc") std::uint32_t tilesim_alloc(std::uint32_t bytes) {
  return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(std::malloc(bytes == 0 ? 1 : bytes)));
}

TILESIM_EXPORT("release") void tilesim_release(std::uint32_t ptr) {
  std::free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(ptr)));
}

/// Copies a packed program (sim/tools/explore/replay.hpp, pack_program) of `words` 32-bit words at
/// `ptr`. The previous L2 goes with the previous program: call reset() before run_block().
TILESIM_EXPORT("load_program") std::int32_t tilesim_load_program(std::uint32_t ptr, std::uint32_t words) {
  State& s = state();
  s.replay.reset();
  s.loaded = false;
  s.program = ReplayProgram{};
  if (!in_memory(ptr, static_cast<std::uint64_t>(words) * 4) || ptr % 4 != 0) return kBadPointer;
  ReplayProgram p;
  if (!tilesim::explore::unpack_program(reinterpret_cast<const std::uint32_t*>(static_cast<std::uintptr_t>(ptr)),
                                        words, p))
    return kBadProgram;
  s.program = std::move(p);
  s.loaded = true;
  return kOk;
}

/// A fresh, cold L2 of the given shape (hash_id and replacement_id: positions in the families'
/// lists, models/cache/{hash,replacement}/family.hpp: 0 modulo, 1 xor_fold, 2 page_mix; 0 lru, 1 fifo,
/// 2 srrip, 3 random), requested from an SM next to `partition`, with zeroed totals.
TILESIM_EXPORT("reset")
std::int32_t tilesim_reset(std::uint32_t bytes_lo, std::uint32_t bytes_hi, std::uint32_t partitions,
                           std::uint32_t line_bytes, std::uint32_t sector_bytes, std::uint32_t ways,
                           std::uint32_t hash_id, std::uint32_t replacement_id, std::uint32_t far_copy,
                           std::uint32_t partition, std::uint32_t seed_lo, std::uint32_t seed_hi) {
  State& s = state();
  s.replay.reset();
  if (!s.loaded) return kNoProgram;
  const std::vector<std::string> hashes = tilesim::hash_names(), policies = tilesim::replacement_names();
  if (hash_id >= hashes.size() || replacement_id >= policies.size()) return kBadL2;
  tilesim::L2Spec spec;
  spec.bytes = bytes_lo | static_cast<std::uint64_t>(bytes_hi) << 32;
  spec.partitions = partitions;
  spec.line_bytes = line_bytes;
  spec.sector_bytes = sector_bytes;
  spec.ways = ways;
  spec.hash = hashes[hash_id];
  spec.replacement = policies[replacement_id];
  spec.far_copy = far_copy != 0;
  if (!l2_shape_ok(spec)) return kBadL2;
  // The arena may still be too large for what memory.grow can give; malloc answers null
  // (no trap) in that case, but std::make_unique would abort, so try the allocation first.
  void* probe = std::malloc(static_cast<std::size_t>(tilesim::L2Cache::arena_bytes(spec)) + 4096);
  if (!probe) return kNoMemory;
  std::free(probe);
  const std::uint64_t seed = seed_lo | static_cast<std::uint64_t>(seed_hi) << 32;
  s.replay = std::unique_ptr<Replay>(new (std::nothrow) Replay(spec, seed, partition));
  return s.replay ? kOk : kNoMemory;
}

/// Runs block `b` of the program (all its requests, in order) on the L2 as the blocks run
/// since reset() left it.
TILESIM_EXPORT("run_block") std::int32_t tilesim_run_block(std::uint32_t b) {
  State& s = state();
  if (!s.loaded) return kNoProgram;
  if (!s.replay) return kNoReplay;
  if (b >= s.program.blocks()) return kBadBlock;
  s.replay->run_block(s.program, b);  // this block's requests only: the L2 keeps the order so far
  return kOk;
}

/// Writes back every dirty sector, counted in dram_write_sectors().
TILESIM_EXPORT("flush") std::int32_t tilesim_flush() {
  State& s = state();
  if (!s.replay) return s.loaded ? kNoReplay : kNoProgram;
  s.replay->flush();
  return kOk;
}

// Totals since reset() as doubles (exact below 2^53 sectors); 0 before the first reset().
namespace {
const tilesim::explore::ReplayTotals& totals() {
  static constexpr tilesim::explore::ReplayTotals kZero{};
  const State& s = state();
  return s.replay ? s.replay->totals() : kZero;
}
}  // namespace

TILESIM_EXPORT("sectors") double tilesim_sectors() { return static_cast<double>(totals().sectors); }
TILESIM_EXPORT("hit_sectors") double tilesim_hit_sectors() { return static_cast<double>(totals().hit_sectors); }
TILESIM_EXPORT("dram_read_sectors") double tilesim_dram_read_sectors() {
  return static_cast<double>(totals().dram_read_sectors);
}
TILESIM_EXPORT("dram_write_sectors") double tilesim_dram_write_sectors() {
  return static_cast<double>(totals().dram_write_sectors);
}

/// Blocks and cells of the loaded program (0 when none).
TILESIM_EXPORT("blocks") std::uint32_t tilesim_blocks() {
  const State& s = state();
  return s.loaded ? s.program.blocks() : 0;
}
TILESIM_EXPORT("cells") std::uint32_t tilesim_cells() {
  const State& s = state();
  return s.loaded ? s.program.cells() : 0;
}

/// Writes cells() doubles at `out` (any alignment): the fraction of each cell's sample lines
/// the L2 holds in any partition (Replay::resident_fraction).
TILESIM_EXPORT("cell_fractions") std::int32_t tilesim_cell_fractions(std::uint32_t out) {
  State& s = state();
  if (!s.loaded) return kNoProgram;
  if (!s.replay) return kNoReplay;
  const ReplayProgram& p = s.program;
  const std::size_t cells = p.cell_first.size() - 1;
  if (cells == 0) return kOk;
  if (!in_memory(out, static_cast<std::uint64_t>(cells) * sizeof(double))) return kBadPointer;
  auto* dst = reinterpret_cast<unsigned char*>(static_cast<std::uintptr_t>(out));
  for (std::size_t c = 0; c < cells; ++c) {
    const double f = s.replay->resident_fraction(p.samples.data() + p.cell_first[c], p.cell_first[c + 1] - p.cell_first[c]);
    std::memcpy(dst + c * sizeof(double), &f, sizeof(double));
  }
  return kOk;
}
