// Writing and reading L2 request streams (l2_stream.hpp has the format).
#include "sim/report/l2_stream.hpp"

#include <cstring>

#include "common/error.hpp"

namespace tilesim {

namespace {

constexpr char kMagic[8] = {'T', 'S', 'L', '2', 'S', 'T', 'R', 'M'};
constexpr std::uint8_t kRequest = 1, kReset = 2;

template <class T>
void put(std::ofstream& out, T v) {  // little-endian hosts only (x86-64, AArch64): as stored
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T>
bool get(std::ifstream& in, T& v) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(&v), sizeof v));
}

}  // namespace

L2StreamWriter::L2StreamWriter(const std::string& path, const L2Spec& l2) : path_(path), out_(path, std::ios::binary) {
  if (!out_) throw InputError(path + ": cannot open for writing");
  out_.write(kMagic, sizeof kMagic);
  put<std::uint32_t>(out_, 1);
  put<std::uint32_t>(out_, l2.line_bytes);
  put<std::uint32_t>(out_, l2.sector_bytes);
  put<std::uint32_t>(out_, l2.partitions);
}

void L2StreamWriter::on_l2_request(std::uint32_t kernel, std::uint32_t sm, Time t, const ByteRect& rect,
                                   std::uint32_t partition, bool write) {
  put<std::uint8_t>(out_, kRequest);
  put<std::uint8_t>(out_, write ? 1 : 0);
  put<std::uint16_t>(out_, static_cast<std::uint16_t>(partition));
  put<std::uint32_t>(out_, sm);
  put<std::uint32_t>(out_, kernel);
  put<std::uint64_t>(out_, static_cast<std::uint64_t>(t));
  put<std::uint64_t>(out_, rect.start);
  put<std::uint64_t>(out_, rect.pitch);
  put<std::uint64_t>(out_, rect.row_bytes);
  put<std::uint32_t>(out_, rect.rows);
  ++requests_;
}

void L2StreamWriter::on_l2_reset(Time t, bool invalidate) {
  put<std::uint8_t>(out_, kReset);
  put<std::uint8_t>(out_, invalidate ? 1 : 0);
  put<std::uint64_t>(out_, static_cast<std::uint64_t>(t));
}

void L2StreamWriter::close() {
  out_.close();
  if (!out_) throw InputError(path_ + ": write failed");
}

L2StreamHeader read_l2_stream(const std::string& path, const std::function<void(const L2StreamRequest&)>& request,
                              const std::function<void(Time, bool)>& reset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  char magic[8];
  L2StreamHeader h;
  if (!in.read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof magic) != 0)
    throw InputError(path + ": not an L2 request stream (no TSL2STRM header)");
  if (!get(in, h.version) || !get(in, h.line_bytes) || !get(in, h.sector_bytes) || !get(in, h.partitions))
    throw InputError(path + ": header cut short");
  if (h.version != 1) throw InputError(path + ": stream version " + std::to_string(h.version) + " (this tilesim reads 1)");
  for (;;) {
    const auto offset = static_cast<std::uint64_t>(in.tellg());
    std::uint8_t tag = 0;
    if (!get(in, tag)) break;
    const std::string where = path + ": byte " + std::to_string(offset) + ": ";
    if (tag == kRequest) {
      std::uint8_t flags = 0;
      std::uint64_t t = 0;
      L2StreamRequest r;
      if (!get(in, flags) || !get(in, r.partition) || !get(in, r.sm) || !get(in, r.kernel) || !get(in, t) ||
          !get(in, r.rect.start) || !get(in, r.rect.pitch) || !get(in, r.rect.row_bytes) || !get(in, r.rect.rows))
        throw InputError(where + "a request record cut short");
      if (flags > 1 || r.partition >= h.partitions) throw InputError(where + "a request record with bad flags or partition");
      r.write = flags == 1;
      r.t = static_cast<Time>(t);
      request(r);
    } else if (tag == kReset) {
      std::uint8_t invalidate = 0;
      std::uint64_t t = 0;
      if (!get(in, invalidate) || !get(in, t) || invalidate > 1) throw InputError(where + "a reset record cut short or bad");
      reset(static_cast<Time>(t), invalidate == 1);
    } else {
      throw InputError(where + "unknown record tag " + std::to_string(tag));
    }
  }
  return h;
}

}  // namespace tilesim
