// The text trace form (grammar in docs/trace-format.md): one record per line, blocks own the
// steps listed under them and steps own the loads/stores listed under them, so a person can
// write a trace without computing first_step/first_access indices. Errors name FILE:LINE.
#include <charconv>
#include <cmath>
#include <deque>
#include <map>
#include <ostream>
#include <vector>

#include "common/error.hpp"
#include "common/utf8.hpp"
#include "traces/trace.hpp"

namespace tilesim {

namespace {

constexpr std::size_t kDispatchPerLine = 32;

// ---- Reading ----

class TextReader {
 public:
  TextReader(std::string_view data, const std::string& origin) : data_(data), origin_(origin) {}
  Workload read();

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(origin_ + ":" + std::to_string(line_) + ": " + what);
  }
  // A name (argument 1): it ends up in JSON and HTML, so it must be UTF-8 text.
  std::string name_arg(const char* what) {
    std::string n(arg(1, what));
    if (!valid_utf8(n)) fail(std::string(what) + " must be UTF-8 text; got bytes that are not valid UTF-8");
    return n;
  }

  bool next_line();
  void tokenize(std::string_view line);
  std::uint64_t number(std::string_view tok, const char* what, std::uint64_t max);
  std::uint32_t u32(std::string_view tok, const char* what) { return static_cast<std::uint32_t>(number(tok, what, 0xffffffffu)); }
  std::string_view arg(std::size_t i, const char* what);
  void expect_count(std::size_t lo, std::size_t hi, const char* usage);
  // Splits toks_[from..] into key=value pairs, refusing unknown and repeated keys.
  std::vector<std::pair<std::string_view, std::string_view>> keys(std::size_t from,
                                                                  std::initializer_list<std::string_view> allowed);

  void parse_tensor();
  void parse_kernel();
  void parse_block();
  void parse_step();
  void parse_access(AccessKind kind);
  void parse_dispatch();
  void finish_kernel();
  std::uint32_t tensor_ref(std::string_view tok);

  std::string_view data_;
  const std::string& origin_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;
  std::vector<std::string_view> toks_;
  std::deque<std::string> unescaped_;  // storage for quoted tokens; a deque keeps views valid

  Workload w_;
  std::map<std::string, std::uint32_t, std::less<>> tensor_names_;  // kAmbiguous for a repeated name
  static constexpr std::uint32_t kAmbiguous = 0xffffffffu;
  Kernel* kernel_ = nullptr;
  std::size_t kernel_line_ = 0, dispatch_line_ = 0;
  bool total_given_ = false, dispatch_given_ = false;
  // Each points at the last element of its vector, which only grows by the parse_* call that
  // resets the pointer, so they never dangle.
  Block* block_ = nullptr;
  Step* step_ = nullptr;
};

bool TextReader::next_line() {
  if (pos_ >= data_.size()) return false;
  std::size_t end = data_.find('\n', pos_);
  if (end == std::string_view::npos) end = data_.size();
  ++line_;
  tokenize(data_.substr(pos_, end - pos_));
  pos_ = end + 1;
  return true;
}

void TextReader::tokenize(std::string_view s) {
  toks_.clear();
  unescaped_.clear();
  std::size_t i = 0;
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
  while (i < s.size()) {
    if (space(s[i])) { ++i; continue; }
    if (s[i] == '#') break;
    if (s[i] != '"') {
      const std::size_t start = i;
      while (i < s.size() && !space(s[i]) && s[i] != '#' && s[i] != '"') ++i;
      toks_.push_back(s.substr(start, i - start));
      continue;
    }
    std::string& out = unescaped_.emplace_back();
    for (++i;; ++i) {
      if (i >= s.size()) fail("unterminated quoted string");
      const char c = s[i];
      if (c == '"') { ++i; break; }
      if (c != '\\') { out += c; continue; }
      if (++i >= s.size()) fail("unterminated quoted string");
      const char e = s[i];
      if (e == '\\' || e == '"') out += e;
      else if (e == 'n') out += '\n';
      else if (e == 't') out += '\t';
      else if (e == 'x' && i + 2 < s.size()) {
        unsigned v = 0;
        const auto r = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
        if (r.ec != std::errc() || r.ptr != s.data() + i + 3) fail("bad \\x escape in quoted string (expected two hex digits)");
        out += static_cast<char>(v);
        i += 2;
      } else fail("bad escape in quoted string (expected \\\\, \\\", \\n, \\t or \\xHH)");
    }
    toks_.push_back(out);
  }
}

std::uint64_t TextReader::number(std::string_view tok, const char* what, std::uint64_t max) {
  int base = 10;
  std::string_view digits = tok;
  if (tok.size() > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  std::uint64_t v = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (digits.empty() || r.ec == std::errc::invalid_argument || r.ptr != digits.data() + digits.size())
    fail(std::string("expected a number for ") + what + ", got '" + std::string(tok) + "'");
  if (r.ec == std::errc::result_out_of_range || v > max)
    fail(std::string(what) + " " + std::string(tok) + " is larger than " + std::to_string(max));
  return v;
}

std::string_view TextReader::arg(std::size_t i, const char* what) {
  if (i >= toks_.size()) fail(std::string("expected ") + what + " after '" + std::string(toks_[0]) + "'");
  return toks_[i];
}

void TextReader::expect_count(std::size_t lo, std::size_t hi, const char* usage) {
  if (toks_.size() < lo || toks_.size() > hi)
    fail(std::string("expected '") + usage + "', got " + std::to_string(toks_.size() - 1) + " arguments");
}

std::vector<std::pair<std::string_view, std::string_view>> TextReader::keys(
    std::size_t from, std::initializer_list<std::string_view> allowed) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (std::size_t i = from; i < toks_.size(); ++i) {
    const std::string_view t = toks_[i];
    const std::size_t eq = t.find('=');
    if (eq == std::string_view::npos || eq == 0) fail("expected key=value, got '" + std::string(t) + "'");
    const std::string_view key = t.substr(0, eq);
    bool known = false;
    for (std::string_view a : allowed) known |= a == key;
    if (!known) {
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail("unknown key '" + std::string(key) + "' (expected one of: " + list + ")");
    }
    for (const auto& [k, v] : out)
      if (k == key) fail("key '" + std::string(key) + "' given twice");
    out.emplace_back(key, t.substr(eq + 1));
  }
  return out;
}

void TextReader::parse_tensor() {
  Tensor t;
  t.name = name_arg("a tensor name");
  bool has_base = false, has_rows = false, has_cols = false, has_ld = false, has_stride = false;
  for (const auto& [k, v] : keys(2, {"base", "rows", "cols", "batch", "bits", "layout", "ld", "batch_stride"})) {
    if (k == "base") t.base = number(v, "base", ~0ull), has_base = true;
    else if (k == "rows") t.rows = u32(v, "rows"), has_rows = true;
    else if (k == "cols") t.cols = u32(v, "cols"), has_cols = true;
    else if (k == "batch") t.batch = u32(v, "batch");
    else if (k == "bits") t.elem_bits = static_cast<std::uint16_t>(number(v, "bits", 0xffff));
    else if (k == "ld") t.ld = number(v, "ld", ~0ull), has_ld = true;
    else if (k == "batch_stride") t.batch_stride = number(v, "batch_stride", ~0ull), has_stride = true;
    else if (v == "row" || v == "col") t.col_major = v == "col";  // k == "layout"
    else fail("expected layout=row or layout=col, got '" + std::string(v) + "'");
  }
  if (!has_base || !has_rows || !has_cols) fail("tensor needs base=, rows= and cols=");
  if (!has_ld) t.ld = t.col_major ? t.rows : t.cols;
  if (!has_stride && t.batch > 1) t.batch_stride = t.bytes_per_batch();
  const auto [it, inserted] = tensor_names_.emplace(t.name, static_cast<std::uint32_t>(w_.tensors.size()));
  if (!inserted) it->second = kAmbiguous;
  w_.tensors.push_back(std::move(t));
}

void TextReader::parse_kernel() {
  finish_kernel();
  Kernel& k = w_.kernels.emplace_back();
  kernel_ = &k;
  kernel_line_ = line_;
  total_given_ = dispatch_given_ = false;
  k.name = name_arg("a kernel name");
  bool has_grid = false;
  for (const auto& [key, v] : keys(2, {"grid", "dtype", "mainloop", "efficiency", "stages", "threads", "regs", "smem",
                                       "blocks_per_sm", "stream", "total_flops", "tile_drain", "mma_tile",
                                       "serialized", "fragments", "l2_prefetch", "loads"})) {
    if (key == "grid") {
      std::uint32_t dims[3] = {1, 1, 1};
      std::size_t n = 0, start = 0;
      for (std::size_t i = 0; i <= v.size(); ++i) {
        if (i < v.size() && v[i] != 'x') continue;
        if (n == 3) fail("expected grid=MxN or grid=MxNxZ, got '" + std::string(v) + "'");
        dims[n++] = u32(v.substr(start, i - start), "grid dimension");
        start = i + 1;
      }
      if (n < 2) fail("expected grid=MxN or grid=MxNxZ, got '" + std::string(v) + "'");
      k.grid_m = dims[0], k.grid_n = dims[1], k.grid_z = dims[2];
      has_grid = true;
    } else if (key == "dtype") {
      const auto d = dtype_from_name(v);
      if (!d) fail("unknown dtype '" + std::string(v) + "' (expected fp32, tf32, fp16, bf16, fp8, int8, int4, int32 or w4a16)");
      k.compute_dtype = *d;
    } else if (key == "mainloop") {
      const auto m = mainloop_from_name(v);
      if (!m) fail("unknown main loop '" + std::string(v) + "' (expected mma_sync, wgmma_cp_async or wgmma_tma_ws)");
      k.mainloop = *m;
    } else if (key == "efficiency") {
      const std::uint64_t e = number(v, "efficiency (millionths)", 1000000);
      k.mainloop_efficiency = static_cast<double>(e) / 1e6;
    } else if (key == "stages") k.stages = u32(v, "stages");
    else if (key == "threads") k.resources.threads = u32(v, "threads");
    else if (key == "regs") k.resources.regs_per_thread = u32(v, "regs");
    else if (key == "smem") k.resources.smem_bytes = number(v, "smem", ~0ull);
    else if (key == "blocks_per_sm") k.blocks_per_sm = u32(v, "blocks_per_sm");
    else if (key == "stream") k.stream = u32(v, "stream");
    else if (key == "tile_drain") k.drain_between_tiles = number(v, "tile_drain (0 or 1)", 1) == 1;
    else if (key == "fragments") {
      if (v != "single") fail("fragments: expected single (double is the default and not written), got '" + std::string(v) + "'");
      k.single_fragments = true;
    } else if (key == "loads") {
      if (v != "cached") fail("loads: expected cached (through L1; bypassing it is the default and not written), got '" + std::string(v) + "'");
      k.cached_loads = true;
    } else if (key == "l2_prefetch") {
      k.l2_prefetch_bytes = u32(v, "l2_prefetch (bytes)");
      if (k.l2_prefetch_bytes != 64 && k.l2_prefetch_bytes != 128)
        fail("l2_prefetch: expected 64 or 128 (bytes a load's miss fetches; absent: the L2's own), got '" + std::string(v) + "'");
    }
    else if (key == "serialized") {
      k.serialized_mma_cols = u32(v, "serialized (the columns of one serialised MMA instruction)");
      if (k.serialized_mma_cols == 0) fail("serialized: expected the columns of one MMA instruction (1 or more), got 0");
    }
    else if (key == "mma_tile") {
      const auto x = v.find('x');
      if (x == std::string_view::npos) fail("mma_tile: expected ROWSxCOLS (the block's output tile), got '" + std::string(v) + "'");
      k.mma_tile_rows = u32(v.substr(0, x), "mma_tile rows");
      k.mma_tile_cols = u32(v.substr(x + 1), "mma_tile columns");
    }
    else k.total_flops = number(v, "total_flops", ~0ull), total_given_ = true;
  }
  if (!has_grid) fail("kernel needs grid=MxNxZ");
}

void TextReader::parse_block() {
  if (!kernel_) fail("'block' before any 'kernel' line");
  expect_count(4, 4, "block M N Z");
  Block& b = kernel_->blocks.emplace_back();
  b.tile_m = u32(toks_[1], "block M");
  b.tile_n = u32(toks_[2], "block N");
  b.tile_z = u32(toks_[3], "block Z");
  b.first_step = static_cast<std::uint32_t>(kernel_->steps.size());
  block_ = &b;
  step_ = nullptr;
}

void TextReader::parse_step() {
  if (!block_) fail("'step' before any 'block' line of this kernel");
  if (kernel_->steps.size() >= 0xffffffffu) fail("too many steps in one kernel");
  Step& s = kernel_->steps.emplace_back();
  s.first_access = static_cast<std::uint32_t>(kernel_->accesses.size());
  ++block_->num_steps;
  step_ = &s;
  const std::uint32_t sems = w_.num_semaphores;
  auto check_sem = [&](std::uint32_t sem) {
    if (sem != kNoSem && sem >= sems)
      fail("semaphore " + std::to_string(sem) + " out of range (the workload declares 'semaphores " + std::to_string(sems) + "' before its kernels)");
  };
  for (const auto& [k, v] : keys(1, {"flops", "dequant", "softmax", "epilogue", "wait", "post"})) {
    if (k == "flops") s.flops = number(v, "flops", ~0ull);
    else if (k == "dequant") s.dequant_elems = u32(v, "dequant elements");
    else if (k == "softmax") s.softmax_elems = u32(v, "softmax elements");
    else if (k == "epilogue") s.epilogue_elems = u32(v, "epilogue elements");
    else if (k == "post") s.post_sem = u32(v, "post semaphore"), check_sem(s.post_sem);
    else {
      const std::size_t colon = v.find(':');
      if (colon == std::string_view::npos) fail("expected wait=SEMAPHORE:VALUE, got '" + std::string(v) + "'");
      s.wait_sem = u32(v.substr(0, colon), "wait semaphore");
      s.wait_value = u32(v.substr(colon + 1), "wait value");
      check_sem(s.wait_sem);
    }
  }
}

std::uint32_t TextReader::tensor_ref(std::string_view tok) {
  if (!tok.empty() && tok.find_first_not_of("0123456789") == std::string_view::npos) {
    const std::uint32_t i = u32(tok, "tensor index");
    if (i >= w_.tensors.size()) fail("tensor index " + std::string(tok) + " out of range (" + std::to_string(w_.tensors.size()) + " tensors declared so far)");
    return i;
  }
  const auto it = tensor_names_.find(tok);
  if (it == tensor_names_.end()) fail("unknown tensor '" + std::string(tok) + "' (declare it with a 'tensor' line first)");
  if (it->second == kAmbiguous) fail("tensor name '" + std::string(tok) + "' is ambiguous; refer to it by index");
  return it->second;
}

void TextReader::parse_access(AccessKind kind) {
  if (!step_) fail(std::string("'") + std::string(toks_[0]) + "' before any 'step' line of this block");
  const std::string usage = std::string(toks_[0]) + " TENSOR BATCH ROW0 COL0 ROWS COLS";
  expect_count(7, 7, usage.c_str());
  if (kernel_->accesses.size() >= 0xffffffffu) fail("too many accesses in one kernel");
  TileAccess a;
  a.kind = kind;
  a.tensor = tensor_ref(toks_[1]);
  a.batch = u32(toks_[2], "batch");
  a.row0 = u32(toks_[3], "row0");
  a.col0 = u32(toks_[4], "col0");
  a.rows = u32(toks_[5], "rows");
  a.cols = u32(toks_[6], "cols");
  const Tensor& t = w_.tensors[a.tensor];
  if (a.batch >= t.batch) fail("batch " + std::to_string(a.batch) + " out of range for tensor " + t.name + " (batch=" + std::to_string(t.batch) + ")");
  if (a.rows == 0 || a.cols == 0 || std::uint64_t{a.row0} + a.rows > t.rows || std::uint64_t{a.col0} + a.cols > t.cols)
    fail("rectangle rows [" + std::to_string(a.row0) + ", " + std::to_string(std::uint64_t{a.row0} + a.rows) + ") x cols [" +
         std::to_string(a.col0) + ", " + std::to_string(std::uint64_t{a.col0} + a.cols) + ") is empty or outside tensor " +
         t.name + " (" + std::to_string(t.rows) + "x" + std::to_string(t.cols) + ")");
  kernel_->accesses.push_back(a);
  ++step_->num_accesses;
}

void TextReader::parse_dispatch() {
  if (!kernel_) fail("'dispatch' before any 'kernel' line");
  if (toks_.size() < 2) fail("expected 'dispatch' followed by block indices or '-'");
  if (!dispatch_given_) dispatch_line_ = line_;
  dispatch_given_ = true;
  for (std::size_t i = 1; i < toks_.size(); ++i)
    kernel_->dispatch.push_back(toks_[i] == "-" ? kNoBlock : u32(toks_[i], "dispatch entry"));
}

void TextReader::finish_kernel() {
  if (!kernel_) return;
  Kernel& k = *kernel_;
  const std::size_t line = line_;
  line_ = kernel_line_;  // errors below are about the kernel as a whole
  const std::uint64_t grid = std::uint64_t{k.grid_m} * k.grid_n * k.grid_z;
  if (grid != k.blocks.size())
    fail("kernel " + k.name + " has grid " + std::to_string(k.grid_m) + "x" + std::to_string(k.grid_n) + "x" +
         std::to_string(k.grid_z) + " = " + std::to_string(grid) + " blocks but lists " + std::to_string(k.blocks.size()));
  if (!total_given_) {  // the steps' sum, refused where it would wrap
    k.total_flops = 0;
    for (const Step& s : k.steps) {
      if (s.flops > ~std::uint64_t{0} - k.total_flops)
        fail("kernel " + k.name + ": its steps' FLOP add up past 2^64 (give total_flops=, or smaller steps)");
      k.total_flops += s.flops;
    }
  }
  if (!dispatch_given_) {
    for (std::uint32_t b = 0; b < k.blocks.size(); ++b) k.dispatch.push_back(b);
  } else {
    line_ = dispatch_line_;
    std::vector<bool> seen(k.blocks.size(), false);
    for (std::uint32_t b : k.dispatch) {
      if (b == kNoBlock) continue;
      if (b >= k.blocks.size()) fail("dispatch names block " + std::to_string(b) + " but the kernel has " + std::to_string(k.blocks.size()));
      if (seen[b]) fail("dispatch names block " + std::to_string(b) + " twice");
      seen[b] = true;
    }
    for (std::size_t b = 0; b < seen.size(); ++b)
      if (!seen[b]) fail("dispatch misses block " + std::to_string(b));
  }
  line_ = line;
  kernel_ = nullptr;
  block_ = nullptr;
  step_ = nullptr;
}

Workload TextReader::read() {
  bool header = false;
  while (next_line()) {
    if (toks_.empty()) continue;
    const std::string_view kw = toks_[0];
    if (!header) {
      if (kw != "tilesim-trace") fail("expected 'tilesim-trace " + std::to_string(kTextTraceVersion) + "' as the first line");
      expect_count(2, 2, "tilesim-trace VERSION");
      if (number(toks_[1], "version", 0xffffffffu) != kTextTraceVersion)
        fail("unsupported text trace version " + std::string(toks_[1]) + " (this build reads version " + std::to_string(kTextTraceVersion) + ")");
      header = true;
    } else if (kw == "workload") {
      expect_count(2, 2, "workload NAME");
      w_.name = std::string(toks_[1]);
    } else if (kw == "semaphores") {
      expect_count(2, 2, "semaphores COUNT");
      if (!w_.kernels.empty()) fail("'semaphores' must come before the first kernel");
      w_.num_semaphores = u32(toks_[1], "semaphore count");
    } else if (kw == "tensor") parse_tensor();
    else if (kw == "kernel") parse_kernel();
    else if (kw == "block") parse_block();
    else if (kw == "step") parse_step();
    else if (kw == "load") parse_access(AccessKind::load);
    else if (kw == "store") parse_access(AccessKind::store);
    else if (kw == "multicast") parse_access(AccessKind::multicast);
    else if (kw == "dispatch") parse_dispatch();
    else fail("unknown record '" + std::string(kw) + "' (expected workload, semaphores, tensor, kernel, block, step, load, store or dispatch)");
  }
  if (!header) fail("expected 'tilesim-trace " + std::to_string(kTextTraceVersion) + "' as the first line, got an empty file");
  finish_kernel();
  validate_workload(w_, origin_);
  return std::move(w_);
}


// ---- Writing ----

// Names are written bare when the reader would read them back as the same single token.
bool bare_name(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (c <= ' ' || c >= 0x7f || c == '#' || c == '"' || c == '\\') return false;
  return true;
}

void append_name(std::string& out, std::string_view s) {
  if (bare_name(s)) {
    out += s;
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c >= ' ' && c < 0x7f) out += static_cast<char>(c);
    else out += "\\x", out += kHex[c >> 4], out += kHex[c & 15];
  }
  out += '"';
}

void append_num(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_hex(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  out += "0x";
  out.append(buf, r.ptr);
}

// The text form lists each block's steps under it and each step's accesses under it, so it can
// only hold kernels whose blocks and steps own consecutive, in-order ranges covering the arrays.
void check_text_layout(const Kernel& k, std::size_t index) {
  auto refuse = [&](const std::string& what) {
    throw InputError("write_trace: kernel " + std::to_string(index) + " (" + k.name + "): " + what +
                     "; the text form cannot express this layout, write a binary trace instead");
  };
  std::uint64_t next = 0;
  for (std::size_t b = 0; b < k.blocks.size(); ++b) {
    if (k.blocks[b].first_step != next) refuse("block " + std::to_string(b) + " does not start at step " + std::to_string(next));
    next += k.blocks[b].num_steps;
  }
  if (next != k.steps.size()) refuse("some steps belong to no block");
  next = 0;
  for (std::size_t s = 0; s < k.steps.size(); ++s) {
    if (k.steps[s].first_access != next) refuse("step " + std::to_string(s) + " does not start at access " + std::to_string(next));
    next += k.steps[s].num_accesses;
  }
  if (next != k.accesses.size()) refuse("some accesses belong to no step");
}

// How each tensor is named in load/store lines: its name where that is unambiguous (unique, not
// a number, needing no quotes), else its index.
std::vector<std::string> tensor_refs(const Workload& w) {
  std::vector<std::string> refs(w.tensors.size());
  for (std::size_t t = 0; t < w.tensors.size(); ++t) {
    const std::string& name = w.tensors[t].name;
    bool unique = true;
    for (std::size_t u = 0; u < w.tensors.size(); ++u) unique &= u == t || w.tensors[u].name != name;
    const bool numeric = name.find_first_not_of("0123456789") == std::string::npos;
    refs[t] = unique && !numeric && bare_name(name) ? name : std::to_string(t);
  }
  return refs;
}

void append_tensor(std::string& out, const Tensor& t) {
  out += "tensor ";
  append_name(out, t.name);
  out += " base=", append_hex(out, t.base);
  out += " rows=", append_num(out, t.rows);
  out += " cols=", append_num(out, t.cols);
  out += " batch=", append_num(out, t.batch);
  out += " bits=", append_num(out, t.elem_bits);
  out += t.col_major ? " layout=col" : " layout=row";
  out += " ld=", append_num(out, t.ld);
  out += " batch_stride=", append_num(out, t.batch_stride);
  out += '\n';
}

// The kernel line; optional keys are written only where they differ from the reader's default
// (total_flops: the sum of the steps' flops).
void append_kernel_line(std::string& out, const Kernel& k) {
  out += "\nkernel ";
  append_name(out, k.name);
  out += " grid=", append_num(out, k.grid_m), out += 'x', append_num(out, k.grid_n), out += 'x', append_num(out, k.grid_z);
  out += " dtype=", out += dtype_name(k.compute_dtype);
  if (k.mainloop) out += " mainloop=", out += mainloop_name(*k.mainloop);
  if (k.mainloop_efficiency > 0)
    out += " efficiency=", append_num(out, static_cast<std::uint64_t>(std::llround(k.mainloop_efficiency * 1e6)));
  out += " stages=", append_num(out, k.stages);
  out += " threads=", append_num(out, k.resources.threads);
  out += " regs=", append_num(out, k.resources.regs_per_thread);
  out += " smem=", append_num(out, k.resources.smem_bytes);
  out += " blocks_per_sm=", append_num(out, k.blocks_per_sm);
  if (k.stream) out += " stream=", append_num(out, k.stream);
  if (k.drain_between_tiles) out += " tile_drain=1";
  if (k.mma_tile_rows) out += " mma_tile=", append_num(out, k.mma_tile_rows), out += 'x', append_num(out, k.mma_tile_cols);
  if (k.serialized_mma_cols) out += " serialized=", append_num(out, k.serialized_mma_cols);
  if (k.single_fragments) out += " fragments=single";
  if (k.cached_loads) out += " loads=cached";
  if (k.l2_prefetch_bytes) out += " l2_prefetch=", append_num(out, k.l2_prefetch_bytes);
  std::uint64_t sum = 0;
  for (const Step& s : k.steps) sum += s.flops;
  if (sum != k.total_flops) out += " total_flops=", append_num(out, k.total_flops);
  out += '\n';
}

// A block line, its steps indented under it and each step's accesses under the step.
void append_block(std::string& out, const Kernel& k, const Block& b, const std::vector<std::string>& refs) {
  out += "block ", append_num(out, b.tile_m), out += ' ', append_num(out, b.tile_n), out += ' ', append_num(out, b.tile_z);
  out += '\n';
  for (std::uint32_t si = b.first_step; si < b.first_step + b.num_steps; ++si) {
    const Step& s = k.steps[si];
    out += "  step flops=", append_num(out, s.flops);
    if (s.dequant_elems) out += " dequant=", append_num(out, s.dequant_elems);
    if (s.softmax_elems) out += " softmax=", append_num(out, s.softmax_elems);
    if (s.epilogue_elems) out += " epilogue=", append_num(out, s.epilogue_elems);
    if (s.wait_sem != kNoSem || s.wait_value != 0)
      out += " wait=", append_num(out, s.wait_sem), out += ':', append_num(out, s.wait_value);
    if (s.post_sem != kNoSem) out += " post=", append_num(out, s.post_sem);
    out += '\n';
    for (std::uint32_t ai = s.first_access; ai < s.first_access + s.num_accesses; ++ai) {
      const TileAccess& a = k.accesses[ai];
      out += a.kind == AccessKind::load ? "    load " : a.kind == AccessKind::store ? "    store " : "    multicast ";
      out += refs[a.tensor];
      for (std::uint32_t v : {a.batch, a.row0, a.col0, a.rows, a.cols}) out += ' ', append_num(out, v);
      out += '\n';
    }
  }
}

// Dispatch lines, kDispatchPerLine entries each; none when the order is the reader's default
// (block-index order).
void append_dispatch(std::string& out, const Kernel& k) {
  bool identity = k.dispatch.size() == k.blocks.size();
  for (std::size_t i = 0; identity && i < k.dispatch.size(); ++i) identity = k.dispatch[i] == i;
  if (identity) return;
  for (std::size_t i = 0; i < k.dispatch.size(); ++i) {
    out += i % kDispatchPerLine == 0 ? (i ? "\ndispatch" : "dispatch") : "";
    out += ' ';
    if (k.dispatch[i] == kNoBlock) out += '-';
    else append_num(out, k.dispatch[i]);
  }
  out += '\n';
}

}  // namespace

void write_text_trace(const Workload& w, std::ostream& os) {
  validate_workload(w, "write_trace");
  for (std::size_t k = 0; k < w.kernels.size(); ++k) check_text_layout(w.kernels[k], k);
  const std::vector<std::string> refs = tensor_refs(w);

  std::string out = "tilesim-trace " + std::to_string(kTextTraceVersion) + "\n";
  if (!w.name.empty()) out += "workload ", append_name(out, w.name), out += '\n';
  if (w.num_semaphores) out += "semaphores ", append_num(out, w.num_semaphores), out += '\n';
  for (const Tensor& t : w.tensors) append_tensor(out, t);
  for (const Kernel& k : w.kernels) {
    append_kernel_line(out, k);
    for (const Block& b : k.blocks) append_block(out, k, b, refs);
    append_dispatch(out, k);
  }
  os.write(out.data(), static_cast<std::streamsize>(out.size()));
}

Workload read_text_trace(std::string_view data, const std::string& origin) {
  return TextReader(data, origin).read();
}

}  // namespace tilesim
