#pragma once
// Trace files: a Workload (tensors, kernels, blocks, steps, tile accesses, dispatch orders)
// saved by `tilesim trace` and read back by `tilesim replay`. Two forms, both described in
// docs/trace-format.md:
//   binary - compact (varints, delta/stride prediction), checksummed, for generated traces;
//   text   - line-based, for traces written or edited by hand.
// Readers detect the form from the first bytes, and every reader ends with validate_workload,
// so a trace that parses but is structurally wrong is an InputError, never a later crash.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "workloads/kernel.hpp"

namespace tilesim {

enum class TraceFormat { binary, text };

/// Writes `w` to `out`. Throws InputError if `w` fails validate_workload (a trace that could
/// not be read back is never written) or, for the text form, if the workload uses a layout the
/// text form cannot express (see docs/trace-format.md).
void write_trace(const Workload& w, std::ostream& out, TraceFormat fmt);
/// As write_trace, to a file (created or truncated). Throws InputError if it cannot be written.
void write_trace_file(const Workload& w, const std::string& path, TraceFormat fmt);

/// Reads a trace of either form; `origin` (usually the file name) prefixes every error.
Workload read_trace(std::istream& in, const std::string& origin);
/// Reads the trace file at `path`; errors are prefixed with the path.
Workload read_trace_file(const std::string& path);

// The two forms, for callers that already know which one they hold. `data` is the whole file.
void write_binary_trace(const Workload& w, std::ostream& out);
Workload read_binary_trace(std::string_view data, const std::string& origin);
void write_text_trace(const Workload& w, std::ostream& out);
Workload read_text_trace(std::string_view data, const std::string& origin);

/// The 8 bytes every binary trace starts with (PNG-style: a high byte, then CR LF, ^Z, LF, so
/// that text-mode mangling and `cat` to a terminal are both caught).
inline constexpr unsigned char kBinaryTraceMagic[8] = {0x89, 'T', 'S', 'T', 0x0D, 0x0A, 0x1A, 0x0A};
inline constexpr std::uint32_t kBinaryTraceVersion = 5;
inline constexpr int kTextTraceVersion = 4;

/// FNV-1a 64 of `data`: the checksum stored at the end of a binary trace.
std::uint64_t trace_checksum(std::string_view data);

}  // namespace tilesim
