// Format detection and file I/O around the two trace forms.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/files.hpp"
#include "traces/trace.hpp"

namespace tilesim {

namespace {

// Binary if the first byte is the magic's high byte, or if the rest of the magic is there:
// a binary trace whose first byte was damaged then gets "bad magic", not a text parse error.
bool looks_binary(std::string_view data) {
  if (data.empty()) return false;
  if (static_cast<unsigned char>(data[0]) == kBinaryTraceMagic[0]) return true;
  return data.size() >= 8 && std::memcmp(data.data() + 1, kBinaryTraceMagic + 1, 7) == 0;
}

Workload read_trace_data(std::string_view data, const std::string& origin) {
  if (data.empty())
    throw InputError(origin + ": empty trace: expected a binary trace magic or a 'tilesim-trace " +
                     std::to_string(kTextTraceVersion) + "' line at byte offset 0");
  return looks_binary(data) ? read_binary_trace(data, origin) : read_text_trace(data, origin);
}

}  // namespace

void write_trace(const Workload& w, std::ostream& out, TraceFormat fmt) {
  // A lazy kernel (workloads/gemm.hpp) exists because its programs do not fit in memory; its
  // trace would be as large.
  for (const Kernel& k : w.kernels)
    if (k.lazy())
      throw InputError("trace: kernel '" + k.name + "' has " + std::to_string(k.num_blocks()) + " blocks and " +
                       std::to_string(k.mma_steps()) + " k-steps, too many to hold their programs: the simulator generates them block by block, "
                       "and a trace of them would be as large; trace a smaller shape");
  if (fmt == TraceFormat::binary) write_binary_trace(w, out);
  else write_text_trace(w, out);
}

void write_trace_file(const Workload& w, const std::string& path, TraceFormat fmt) {
  // Serialise first so that a workload the writer rejects leaves no half-written file behind.
  std::ostringstream buf;
  write_trace(w, buf, fmt);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path + ": cannot create trace file: " + std::strerror(errno));
  const std::string& bytes = buf.str();
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw InputError(path + ": cannot write trace file: " + std::strerror(errno));
}

Workload read_trace(std::istream& in, const std::string& origin) {
  std::ostringstream buf;
  buf << in.rdbuf();  // sets failbit on `buf` for an empty stream, which is fine: empty is reported below
  if (in.bad()) throw InputError(origin + ": cannot read trace");
  return read_trace_data(buf.view(), origin);
}

Workload read_trace_file(const std::string& path) {
  // A pipe is read to its end (a generator feeding tilesim); a device is refused.
  check_input_file(path, std::uint64_t{1} << 36, /*allow_pipe=*/true);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open trace file: " + std::strerror(errno));
  // Read by size rather than by iterator: a large binary trace is a few MB.
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) return read_trace(in, path);  // not seekable (a pipe): read to the end
  std::string data(static_cast<std::size_t>(size), '\0');
  in.read(data.data(), size);
  if (in.gcount() != size) throw InputError(path + ": cannot read trace file");
  return read_trace_data(data, path);
}

}  // namespace tilesim
