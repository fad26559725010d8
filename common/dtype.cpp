#include "common/dtype.hpp"

#include <array>

namespace tilesim {

namespace {
constexpr std::array<std::string_view, kNumDtypes> kNames{"fp32", "tf32", "fp16", "bf16", "fp8",
                                                          "int8", "int4", "int32", "w4a16"};
constexpr std::array<int, kNumDtypes> kBits{32, 32, 16, 16, 8, 8, 4, 32, 16};
}  // namespace

int dtype_bits(Dtype d) { return kBits[static_cast<int>(d)]; }
std::string_view dtype_name(Dtype d) { return kNames[static_cast<int>(d)]; }

std::optional<Dtype> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDtypes; ++i)
    if (kNames[i] == name) return static_cast<Dtype>(i);
  return std::nullopt;
}

}  // namespace tilesim
