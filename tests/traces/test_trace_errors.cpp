// Trace files: truncated, corrupted, crafted and random inputs are errors with offsets, never crashes.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>
#include "common/error.hpp"
#include "traces/trace.hpp"
#include "trace_test_util.hpp"

using namespace tilesim;
using namespace tilesim::test;

TEST_CASE("a binary trace cut at any length reports the offset", "[trace]") {
  const std::string bytes = to_bytes(small_workload(), TraceFormat::binary);
  CHECK_THAT(read_error(bytes.substr(0, 3)), Catch::Contains("truncated trace: needed 5 more bytes at byte offset 0 (reading magic)"));
  CHECK_THAT(read_error(bytes.substr(0, bytes.size() - 1)), Catch::Contains("needed 1 more bytes"));
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    INFO("prefix length " << len);
    CHECK_THAT(read_error(bytes.substr(0, len)), Catch::Contains("offset"));
  }
  CHECK_THAT(read_error(bytes + "x"), Catch::Contains("unexpected bytes after the declared end at byte offset"));
}

TEST_CASE("a binary trace with any byte changed is rejected", "[trace]") {
  const std::string bytes = to_bytes(small_workload(), TraceFormat::binary);
  CHECK_THAT(read_error(std::string(1, '\x88') + bytes.substr(1)), Catch::Contains("bad magic at byte offset 0"));
  // The version is the u32 at bytes 8..11. Version 1 (per-kernel semaphores, no semaphore_count
  // and no stream) and any later version are refused before the sections are looked at.
  for (const std::uint8_t other : {std::uint8_t{4}, std::uint8_t{6}}) {
    std::string version = bytes;
    version[8] = static_cast<char>(other);
    CHECK_THAT(read_error(version), Catch::Contains("unsupported binary trace version " + std::to_string(other) +
                                                    " at byte offset 8 (this build reads version 5)"));
  }
  std::string body = bytes;
  body[30] ^= 1;
  CHECK_THAT(read_error(body), Catch::Contains("checksum mismatch at byte offset " + std::to_string(bytes.size() - 8)) &&
                                   Catch::Contains("stored 0x") && Catch::Contains("computed 0x"));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned flip : {0x01u, 0x80u, 0xffu}) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ flip);
      INFO("byte " << i << " ^ " << flip);
      CHECK_THAT(read_error(damaged), Catch::Contains("offset"));
    }
  }
}

// The crafted files below are version-3 byte layouts. Offsets count from the start of the file:
//   0..7 magic, 8..11 version (u32), 12..19 total length (u64), then the sections:
//   20     workload name: a string, i.e. a varint length (here always 0, so one byte 0x00),
//   21     varint semaphore_count (new in version 2; one byte while < 128),
//   then   varint tensor_count, the tensors, varint kernel_count, the kernels.
// A kernel record (version 2 replaced the kernel's num_semaphores varint by `stream`, same place;
// version 3 added the main loop and its efficiency after the dtype, version 5 a flags byte after
// them):
//   +0 name "" | +1..3 grid_m/n/z | +4 u8 dtype | +5 u8 main loop | +6 efficiency | +7 u8 flags
//   +8 stages | +9..10 threads 128 (80 01) | +11..12 regs 128 (80 01) | +13 smem | +14 blocks_per_sm
//   +15 stream | +16 total_flops
//   +17.. block_count, step_count, access_count, dispatch_count, then the records.
// With an empty name, semaphore_count < 128 and no tensors, the single kernel starts at byte 24
// (20 name, 21 semaphore_count, 22 tensor_count, 23 kernel_count), so its dtype is at 28, its
// flags at 31, its stream at 39 and its block count at 41.
// Version 4 changed only the access header (a multicast bit), which these files do not reach.
static_assert(kBinaryTraceVersion == 5, "the crafted traces below are version-5 layouts; recompute their offsets");

TEST_CASE("crafted binary traces with a valid checksum are rejected before allocating", "[trace]") {
  // Workload name "" (byte 20), 0 semaphores (byte 21), then 2^32-1 tensors in five bytes at 22.
  CHECK_THAT(read_error(crafted(bytes_of({0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f}))),
             Catch::Contains("tensor count 4294967295 needs at least") && Catch::Contains("at byte offset 22"));
  // The same after a five-byte semaphore_count (2^32-1, bytes 21..25): read as one field, so the
  // tensor count is found at 26.
  CHECK_THAT(read_error(crafted(bytes_of({0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0xff, 0xff, 0xff, 0xff, 0x0f}))),
             Catch::Contains("tensor count 4294967295 needs at least") && Catch::Contains("at byte offset 26"));
  // No tensors, then 2^32-1 kernels: the kernel count at byte 23.
  CHECK_THAT(read_error(crafted(bytes_of({0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f}))),
             Catch::Contains("kernel count 4294967295 needs at least") && Catch::Contains("at byte offset 23"));
  // No tensors, one kernel whose block count alone is absurd: 2^28-1 blocks (ff ff ff 7f at 41)
  // of at least 5 bytes each, with only the three other (zero) counts left.
  const std::string kernel = workload_prefix(0) + kKernelHead;  // bytes 20..40
  CHECK_THAT(read_error(crafted(kernel + bytes_of({0xff, 0xff, 0xff, 0x7f, 0x00, 0x00, 0x00}))),
             Catch::Contains("block count 268435455 needs at least 1342177275 bytes but only 3 remain at byte offset 41"));
  // Dtype byte out of range: the kernel's +4, i.e. index 8 of `kernel` (4 workload bytes before
  // it), byte 28 of the file.
  std::string dtype = kernel;
  REQUIRE(dtype[8] == 2);  // fp16
  dtype[8] = 9;
  CHECK_THAT(read_error(crafted(dtype + std::string(4, '\0'))), Catch::Contains("compute dtype 9 out of range at byte offset 28"));
  // A kernel flag this build does not know: the kernel's +7, byte 31.
  std::string flags = kernel;
  REQUIRE(flags[11] == 0);
  flags[11] = 64;
  CHECK_THAT(read_error(crafted(flags + std::string(4, '\0'))), Catch::Contains("kernel flags 64 has unknown bits at byte offset 31"));
  // The prefetch-size flag with a size that is not one: the varint after the flags, byte 32.
  flags[11] = 16;
  CHECK_THAT(read_error(crafted(flags + std::string(4, '\0'))), Catch::Contains("l2_prefetch_bytes 1 is not 64 or 128 at byte offset 32"));
  // Varints that never end: the workload name's length at 20, the semaphore_count at 21, and a
  // kernel's stream at 39 (index 19 of `kernel`: everything before it is kept).
  CHECK_THAT(read_error(crafted(std::string(12, '\xff'))),
             Catch::Contains("varint overflows 64 bits (workload name) at byte offset 20"));
  CHECK_THAT(read_error(crafted(std::string(1, '\0') + std::string(12, '\xff'))),
             Catch::Contains("varint overflows 64 bits (workload num_semaphores) at byte offset 21"));
  CHECK_THAT(read_error(crafted(kernel.substr(0, 19) + std::string(12, '\xff'))),
             Catch::Contains("varint overflows 64 bits (kernel stream) at byte offset 39"));
  // Both new fields are 32-bit: 2^32 (80 80 80 80 10) does not fit.
  const std::string two_pow_32 = bytes_of({0x80, 0x80, 0x80, 0x80, 0x10});
  CHECK_THAT(read_error(crafted(std::string(1, '\0') + two_pow_32 + bytes_of({0x00, 0x00}))),
             Catch::Contains("workload num_semaphores 4294967296 does not fit in 32 bits at byte offset 21"));
  CHECK_THAT(read_error(crafted(kernel.substr(0, 19) + two_pow_32 + std::string(5, '\0'))),
             Catch::Contains("kernel stream 4294967296 does not fit in 32 bits at byte offset 39"));
}

TEST_CASE("a binary semaphore_count is only a number, and steps must name semaphores below it", "[trace]") {
  // The smallest kernel with a step: one block of one step (no accesses) that posts semaphore 0.
  // Step head 0x02 = "post present", 0 accesses; then varint post_sem.
  const std::string posts0 = bytes_of({0x02, 0x00});
  // The writer produces exactly the documented layout.
  Workload w;
  w.num_semaphores = 1;
  Kernel k;
  add_block(k, 0, 0, 0);
  add_step(k, 0, {}, kNoSem, 0, 0);
  k.dispatch = {0};
  w.kernels.push_back(k);
  CHECK(to_bytes(w, TraceFormat::binary) == crafted(workload_prefix(1) + one_step_kernel(posts0)));
  CHECK(from_bytes(crafted(workload_prefix(1) + one_step_kernel(posts0))) == w);

  // 2^32-1 semaphores: the reader stores the number and allocates nothing for it (a reader that
  // did would need 16 GiB here); it is a valid workload and round trips.
  const std::string huge = crafted(workload_prefix(0xffffffffu) + one_step_kernel(posts0));
  const auto t0 = std::chrono::steady_clock::now();
  const Workload big = from_bytes(huge);
  INFO("took " << ms_since(t0) << " ms");
  CHECK(big.num_semaphores == 0xffffffffu);
  REQUIRE(big.kernels.size() == 1);
  CHECK(big.kernels[0].steps[0].post_sem == 0);
  CHECK(to_bytes(big, TraceFormat::binary) == huge);

  // A step naming a semaphore >= semaphore_count passes the parser (the field is just a u32) and
  // is rejected by validate_workload, which names the file, kernel and step.
  CHECK_THAT(read_error(crafted(workload_prefix(0) + one_step_kernel(posts0))),
             Catch::Contains("t.trace: kernel 0 (): step 0 names a semaphore out of range"));
  // Head 0x01 = "wait present": varint wait_sem 1, varint wait_value 1; only semaphore 0 exists.
  CHECK_THAT(read_error(crafted(workload_prefix(1) + one_step_kernel(bytes_of({0x01, 0x01, 0x01})))),
             Catch::Contains("t.trace: kernel 0 (): step 0 names a semaphore out of range"));
  CHECK_THAT(read_error(crafted(workload_prefix(0xfffffffeu) + one_step_kernel(bytes_of({0x02, 0xfe, 0xff, 0xff, 0xff, 0x0f})))),
             Catch::Contains("step 0 names a semaphore out of range"));
  // The writers refuse such a workload in both forms.
  Workload bad = w;
  bad.kernels[0].steps[0].post_sem = 1;
  for (TraceFormat fmt : {TraceFormat::binary, TraceFormat::text}) {
    std::ostringstream out;
    CHECK_THROWS_WITH(write_trace(bad, out, fmt), Catch::Contains("step 0 names a semaphore out of range"));
  }
}

TEST_CASE("many tensors and many kernels cost linear time to read", "[trace]") {
  // 20000 minimal tensors and 20000 empty kernels: per-kernel work proportional to the tensor
  // count would take minutes here. Every record has exactly its minimum size (tensor 9 bytes,
  // kernel 19), so the count checks just pass.
  std::string body("\x00\x00\xa0\x9c\x01", 5);  // name "", 0 semaphores, 20000 tensors
  for (int t = 0; t < 20000; ++t) body += std::string("\x00\x00\x01\x01\x01\x10\x00\x01\x00", 9);
  body += "\xa0\x9c\x01";  // 20000 kernels
  for (int k = 0; k < 20000; ++k)
    body += std::string("\x00\x01\x01\x01\x02\xff\x00\x00\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00", 19);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THAT(read_error(crafted(body)), Catch::Contains("kernel 0 (): no blocks"));
  INFO("took " << ms_since(t0) << " ms");
}

TEST_CASE("damaged and random inputs never crash the readers", "[trace]") {
  std::mt19937_64 rng(20240611);
  const std::string bin = to_bytes(small_workload(), TraceFormat::binary);
  const std::string wide = to_bytes(wide_workload(), TraceFormat::binary);
  const std::string text = doc_example();
  auto byte = [&] { return static_cast<char>(rng() & 0xff); };
  std::size_t accepted_edits = 0, accepted_garbage = 0, accepted_text = 0;
  // Binary edits behind a valid checksum: replaced, inserted and removed bytes.
  for (int round = 0; round < 20000; ++round) {
    std::string b = round % 2 ? bin : wide;
    b.resize(b.size() - 8);
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = 20 + rng() % (b.size() - 20);
      switch (rng() % 3) {
        case 0: b[at] = byte(); break;
        case 1: b.insert(b.begin() + at, byte()); break;
        default: b.erase(b.begin() + at); break;
      }
    }
    accepted_edits += read_survives(reseal(b + std::string(8, '\0')));
  }
  // Pure garbage, sealed and not.
  for (int round = 0; round < 5000; ++round) {
    std::string g(rng() % 200, '\0');
    for (char& c : g) c = byte();
    accepted_garbage += read_survives(g);
    accepted_garbage += read_survives(reseal(bin.substr(0, 20) + g + std::string(8, '\0')));
  }
  // Text edits: random bytes, and lines dropped or repeated.
  for (int round = 0; round < 5000; ++round) {
    std::string t = text;
    for (int e = 0; e < 3; ++e) {
      const std::size_t at = rng() % t.size();
      if (rng() % 2) t[at] = " 0x-#\"\n9:=ABC"[rng() % 13];
      else t[at] = byte();
    }
    accepted_text += read_survives(t);
    std::string lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      const auto r = rng() % 20;
      if (r == 0) continue;
      lines += line + "\n";
      if (r == 1) lines += line + "\n";
    }
    accepted_text += read_survives(lines);
  }
  // Most damage is refused; garbage always is; some text edits land in comments or spaces and
  // still read (each such workload was checked above).
  CHECK(accepted_edits < 20000 / 2);
  CHECK(accepted_garbage == 0);
  CHECK(accepted_text > 0);
  CHECK(accepted_text < 10000);
}

TEST_CASE("a large GEMM trace is compact and fast", "[trace]") {
  const Workload w = large_workload();
  const Kernel& k = w.kernels[0];
  REQUIRE(k.num_blocks() == 4096);
  REQUIRE(k.steps.size() == 4096 * 129);
  INFO("accesses " << k.accesses.size());

  auto t0 = std::chrono::steady_clock::now();
  const std::string bin = to_bytes(w, TraceFormat::binary);
  const double write_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  const Workload back = from_bytes(bin);
  const double read_ms = ms_since(t0);
  CHECK(back == w);
  WARN("binary trace of " << k.num_blocks() << " blocks, " << k.steps.size() << " steps, " << k.accesses.size()
                          << " accesses: " << bin.size() << " bytes (" << bin.size() / 1e6 << " MB), write "
                          << write_ms << " ms, read " << read_ms << " ms");
  CHECK(bin.size() < 30u * 1000 * 1000);

  t0 = std::chrono::steady_clock::now();
  const std::string text = to_bytes(w, TraceFormat::text);
  const double text_write_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  CHECK(from_bytes(text) == w);
  WARN("text trace: " << text.size() / 1e6 << " MB, write " << text_write_ms << " ms, read " << ms_since(t0) << " ms");
}

TEST_CASE("a trace whose names are not UTF-8 is refused with the place (issue 17, D3)", "[trace]") {
  Workload w = small_workload();
  w.kernels[0].name = "k\xff";
  // Text: the line of the kernel record.
  REQUIRE_THROWS_WITH(from_bytes(to_bytes(w, TraceFormat::text)),
                      Catch::Matchers::Contains("t.trace:") && Catch::Matchers::Contains("kernel name must be UTF-8"));
  // Binary: the offset of the name.
  REQUIRE_THROWS_WITH(from_bytes(to_bytes(w, TraceFormat::binary)),
                      Catch::Matchers::Contains("kernel name is not valid UTF-8"));
  w = small_workload();
  w.tensors[0].name = "A\xc3";
  REQUIRE_THROWS_WITH(from_bytes(to_bytes(w, TraceFormat::text)), Catch::Matchers::Contains("tensor name must be UTF-8"));
}
