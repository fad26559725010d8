#pragma once
// Element and compute data types.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tilesim {

/// Data types of tensors and of MMA work. `w4a16` is a compute type (fp16 activations times
/// 4-bit weights, dequantised to fp16 before the MMA); `int4` is its weight storage type.
enum class Dtype : std::uint8_t { fp32, tf32, fp16, bf16, fp8, int8, int4, int32, w4a16 };
inline constexpr int kNumDtypes = 9;

/// Storage bits per element (tf32 is stored as fp32; w4a16 names a compute mode, 16 = activations).
int dtype_bits(Dtype d);
std::string_view dtype_name(Dtype d);
std::optional<Dtype> dtype_from_name(std::string_view name);

}  // namespace tilesim
