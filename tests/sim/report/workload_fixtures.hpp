#pragma once
// Hand-built workloads for the bound tests: tensors, and kernels of one block whose single step
// touches whole tensors.
#include <initializer_list>
#include <string>

#include "workloads/kernel.hpp"

namespace tilesim::test {

inline Tensor tensor(const std::string& name, std::uint32_t rows, std::uint32_t cols, std::uint16_t bits = 16) {
  Tensor t;
  t.name = name;
  t.rows = rows;
  t.cols = cols;
  t.elem_bits = bits;
  t.ld = cols;
  t.batch_stride = static_cast<std::uint64_t>(rows) * cols * bits / 8;
  return t;
}

/// A kernel with one block whose single step touches whole tensors: loads, then stores.
inline Kernel kernel(const std::string& name, std::initializer_list<std::uint32_t> loads,
                     std::initializer_list<std::uint32_t> stores, const Workload& w) {
  Kernel k;
  k.name = name;
  Step s;
  for (std::uint32_t t : loads) k.accesses.push_back({t, 0, 0, 0, w.tensors[t].rows, w.tensors[t].cols, AccessKind::load});
  for (std::uint32_t t : stores)
    k.accesses.push_back({t, 0, 0, 0, w.tensors[t].rows, w.tensors[t].cols, AccessKind::store});
  s.num_accesses = static_cast<std::uint32_t>(k.accesses.size());
  k.steps.push_back(s);
  k.blocks.push_back({0, 1, 0, 0, 0});
  k.dispatch = {0};
  return k;
}

}  // namespace tilesim::test
