// Arch YAML (a preset's format): every key's type and range, the L2 geometry, the main-loop
// table, the partition map.
#include "common/config_node.hpp"
#include "models/arch.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  fuzz::expect_input_errors_only([&] {
    const YAML::Node n = load_yaml_text(std::string(fuzz::as_text(data, size)), "fuzz_arch.yaml");
    (void)parse_arch(ConfigNode(n, "fuzz_arch.yaml", ""));
  });
  return 0;
}
