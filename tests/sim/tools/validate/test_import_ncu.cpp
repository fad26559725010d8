// `tilesim import ncu`: experiments from Nsight Compute raw pages (sim/tools/validate/import_ncu).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <yaml-cpp/yaml.h>

#include "common/error.hpp"
#include "sim/tools/validate/import_ncu.hpp"
#include "tests/sim/cli_util.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

MeasuredCase one_kernel(const std::string& name, const std::string& kernel, const std::string& device = "NVIDIA H100 80GB HBM3") {
  MeasuredCase c;
  c.name = name;
  MeasuredKernel k;
  k.name = kernel;
  k.metrics = {{"launch__block_size", 128}, {"launch__registers_per_thread", 168}, {"launch__grid_size", 256},
               {"launch__shared_mem_per_block_dynamic", 196608}, {"launch__shared_mem_per_block_static", 0}};
  c.kernels.push_back(k);
  c.device = MeasuredDevice{device, 132, 52428800};
  return c;
}

ImportedCase import_one(const MeasuredCase& c, const ImportOptions& o = {}) {
  return import_ncu({{c.name, c}}, o).at(0);
}

}  // namespace

TEST_CASE("import ncu: a library kernel's name gives the tile and stages, the case name the shape and order",
          "[validate][import]") {
  const ImportedCase c = import_one(one_kernel("mm_4096x2048x1024_grouped8", "cutlass_80_tensorop_f16_s16816gemm_f16_256x128_64x3_nn_align8"));
  REQUIRE(c.skipped.empty());
  CHECK_THAT(c.yaml, Contains("arch: h100") && Contains("m: 4096") && Contains("n: 2048") && Contains("k: 1024") &&
                         Contains("tile: [256, 128, 64]") && Contains("stages: 3") && Contains("threads: 128") &&
                         Contains("registers_per_thread: 168") && Contains("shared_memory_bytes: 196608") &&
                         Contains("group_m: 8") && Contains("case: mm_4096x2048x1024_grouped8") &&
                         Contains("family: imported") && Contains("cold_l2: kernel"));
  REQUIRE(c.guessed.size() == 3);  // shape, tile and order, each said; the grid (16 x 16 = 256 tiles) fits
  // cuBLAS: A col-major (op T), B row-major, wgmma's M along the second extent (frame N): the
  // user's frame, the tile's extents swapped; coopA, a 2 x 1 cluster along cuBLAS's M, raster v.
  const ImportedCase nvjet = import_one(one_kernel("x", "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN"),
                                        ImportOptions{"", std::array<std::uint32_t, 3>{4096, 4096, 4096}});
  CHECK_THAT(nvjet.yaml, Contains("tile: [256, 128, 64]") && Contains("stages: 4") && Contains("schedule: cooperative") &&
                             Contains("persistent: 256") && Contains("{a: col, b: row, c: row}") &&
                             Contains("kind: cutlass_sm90, raster: n, max_swizzle: 8, cluster: [1, 2], band_padding: skip"));
  CHECK_THAT(nvjet.guessed.back(), Contains("a cuBLAS kernel"));
  // Split-K: 256 blocks over 64 tiles of 64 x 16 (2 x 1 clusters) is 4 slices; a persistent
  // split-K grid is not described.
  MeasuredCase split = one_kernel("x", "nvjet_sm90_hsh_64x16_64x16_2x1_v_bz_splitK_NNT");
  split.kernels.push_back(split.kernels[0]);
  split.kernels[1].name = "void cublasLt::splitKreduce_kernel<32, 16, int, float, __half>(...)";
  ImportOptions decode;
  decode.shape = std::array<std::uint32_t, 3>{16, 4096, 4096};
  CHECK_THAT(import_one(split, decode).yaml, Contains("split_k: 4") && Contains("split_k_mode: parallel") &&
                                                 Contains("m: 4096\n") && Contains("n: 16\n"));
  split.kernels[0].metrics["launch__grid_size"] = 132;
  CHECK_THAT(import_one(split, decode).skipped, Contains("persistent split-K"));
  // Names that only look like cuBLAS's: a zero or an absurd extent is read as any kernel name
  // (its tile guessed from the name, or skipped), never divided by.
  for (const char* odd : {"nvjet_sm90_hsh_0x16_64x4_1x1_v_bz_NNT", "nvjet_sm90_hsh_64x16_64x4_0x1_v_bz_NNT",
                          "nvjet_sm90_hsh_99999999999x16_64x4_1x1_v_bz_NNT"})
    CHECK_NOTHROW(import_one(one_kernel("x", odd), decode));
  CHECK(arch_for_device("NVIDIA H200") == "h200");
  CHECK(arch_for_device("NVIDIA A100-SXM4-80GB") == "a100");
  CHECK(arch_for_device("Tesla T4").empty());
}

TEST_CASE("import ncu: what a case does not say is a reason to skip it, and options are checked", "[validate][import]") {
  CHECK_THAT(import_one(one_kernel("plain", "matmul_kernel")).skipped, Contains("--shape"));
  CHECK_THAT(import_one(one_kernel("g_64x64x64", "matmul_kernel")).skipped, Contains("--tile"));
  CHECK_THAT(import_one(one_kernel("g_64x64x64", "matmul_kernel", "Tesla T4")).skipped, Contains("--arch"));
  MeasuredCase two = one_kernel("ffn_64x64x64", "a");
  two.kernels.push_back(two.kernels[0]);
  CHECK_THAT(import_one(two).skipped, Contains("2 kernels"));
  ImportOptions o;
  o.tile = std::array<std::uint32_t, 3>{64, 64, 32};
  o.overrides = {"workload.mainloop=mma_sync"};
  CHECK_THAT(import_one(one_kernel("g_64x64x64", "matmul_kernel"), o).yaml, Contains("mainloop: mma_sync"));
  CHECK_THROWS_WITH(parse_dims("64x64", "--tile"), Contains("--tile: expected three positive integers"));
  CHECK_THROWS_WITH(parse_dims("0x64x64", "--shape"), Contains("--shape"));
}

TEST_CASE("import ncu: the project's own raw pages import to the experiments written by hand", "[validate][import][cli]") {
  namespace fs = std::filesystem;
  using tilesim::test::run_tilesim;
  const fs::path dir = tilesim::test::scratch_dir() / "import";
  fs::remove_all(dir);
  const std::string src = TILESIM_SOURCE_DIR;
  const std::string page = src + "/calibration/measurements/h100/ncu/ncu_gemm_128x14336x4096_grouped8.csv";
  auto r = run_tilesim("import ncu " + page + " -o " + dir.string() +
                       " --tile 64x128x32 --stages 3 --set 'workload.layout={a: row, b: col, c: row}'"
                       " --set 'workload.mainloop={kind: mma_sync, fragments: single}'");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("wrote") && Contains("1 experiment(s)"));
  // The same simulated figures as calibration/experiments' hand-written experiment of that case.
  const auto imported = run_tilesim("validate -q -m " + page + " -e " + (dir / "gemm_128x14336x4096_grouped8.yaml").string());
  const auto by_hand = run_tilesim("validate -q -m " + page + " -e " + src + "/calibration/experiments/gemm_128x14336x4096_grouped8.yaml");
  REQUIRE(imported.code == 0);
  REQUIRE(by_hand.code == 0);
  const auto table_row = [](const std::string& out) { return out.substr(out.find("gemm_128x14336x4096_grouped8"), 200); };
  CHECK(table_row(imported.out) == table_row(by_hand.out));
  // Bad requests: exit 2 with the reason.
  CHECK(run_tilesim("import " + page + " -o " + dir.string()).code == 2);
  r = run_tilesim("import ncu " + page);
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("-o DIR is required"));
  r = run_tilesim("import ncu " + page + " -o " + dir.string() + " --tile 64x128");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("--tile"));
  std::ofstream(dir / "afile") << "x";
  r = run_tilesim("import ncu " + page + " -o " + (dir / "afile").string() + " --tile 64x128x32");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("cannot create the folder"));
  r = run_tilesim("import ncu " + page + " -o " + dir.string());  // no tile: nothing imported
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("skipped gemm_128x14336x4096_grouped8: no tile"));
}

TEST_CASE("import ncu: review findings stay fixed", "[validate][import]") {
  // A CUTLASS 3 demangled name: the tile is the cute tuple, never the MMA atom's shape.
  const ImportedCase c3 = import_one(
      one_kernel("x_4096x4096x4096", "cutlass::device_kernel<GemmKernel<MMA_64x128x16_F32F16F16_SS, "
                                     "cute::tuple<cute::C<128>, cute::C<256>, cute::C<64>>>>"));
  CHECK_THAT(c3.yaml, Contains("tile: [128, 256, 64]"));
  const ImportedCase mma = import_one(one_kernel("x_4096x4096x4096", "k_MMA_64x128x16_F32"));
  CHECK_THAT(mma.skipped, Contains("no tile"));
  // A launch no GPU makes is a reason to skip, not a wrapped number.
  MeasuredCase huge = one_kernel("g_64x64x64", "cutlass_80_tensorop_s16816gemm_f16_128x128_32x3_nn_align8");
  huge.kernels[0].metrics["launch__block_size"] = 1e30;
  CHECK_THAT(import_one(huge).skipped, Contains("launch__block_size"));
  // A bad --order is an input error naming the option.
  ImportOptions o;
  o.order = "{kind: [";
  CHECK_THROWS_WITH(import_one(one_kernel("g_64x64x64_row", "cutlass_x_128x128_32x3_nn"), o), Contains("--order"));
  // File names cannot leave the folder and never collide.
  const auto files = experiment_file_names({"../escape", "/abs/x", "a b", "a_b", ".hidden"});
  CHECK(files == std::vector<std::string>{"case.._escape.yaml", "_abs_x.yaml", "a_b.yaml", "a_b_2.yaml",
                                          "case.hidden.yaml"});
  // A kernel name cut for a message stays ASCII.
  const ImportedCase named = import_one(one_kernel("plain_64x64x64", std::string(59, 'k') + "\xc3\xa9"));
  CHECK(named.skipped.find('\xc3') == std::string::npos);
}

TEST_CASE("import ncu: cuBLAS's measured kernels import to the production experiments", "[validate][import]") {
  // calibration/production/make_experiments.py writes the cublas_mm experiments from the same
  // names; the two readings agree on every measured case of both GPUs.
  namespace fs = std::filesystem;
  const std::string src = TILESIM_SOURCE_DIR;
  std::size_t compared = 0;
  for (const std::string gpu : {"h100", "h200"}) {
    const auto measured = load_measured({src + "/calibration/measurements/" + gpu + "/production/ncu_cases.csv"});
    for (const auto& f : fs::directory_iterator(src + "/calibration/production/experiments/" + gpu + "/cublas_mm")) {
      const YAML::Node want = YAML::LoadFile(f.path().string());
      const std::string name = want["name"].as<std::string>();
      INFO(gpu << " " << name);
      ImportOptions o;
      o.arch = gpu;
      o.shape = parse_dims(want["validate"]["group"].as<std::string>(), "group");
      MeasuredCase c = measured.at(name);
      c.device.reset();
      const ImportedCase got = import_one(c, o);
      REQUIRE(got.skipped.empty());
      const YAML::Node have = YAML::Load(got.yaml);
      for (const auto& kv : want["workload"]) {
        const std::string key = kv.first.as<std::string>();
        CHECK(YAML::Dump(have["workload"][key]) == YAML::Dump(kv.second));
      }
      CHECK(have["workload"].size() == want["workload"].size());
      CHECK(YAML::Dump(have["order"]) == YAML::Dump(want["order"]));
      ++compared;
    }
  }
  CHECK(compared == 150);
}

TEST_CASE("import ncu: a profiled nn.Linear call imports from its raw page and validates", "[validate][import][cli]") {
  // A real page of cuBLAS's kernel (tests/data/ncu/README.md): T for B (nn.Linear's weight) and
  // frame T, so the experiment runs in cuBLAS's frame with the shape's M and N swapped.
  namespace fs = std::filesystem;
  using tilesim::test::run_tilesim;
  const fs::path dir = tilesim::test::scratch_dir() / "import_cublas";
  fs::remove_all(dir);
  const std::string page = std::string(TILESIM_SOURCE_DIR) + "/tests/data/ncu/ncu_cublas_lin_4096x28672x8192.csv";
  auto r = run_tilesim("import ncu " + page + " -o " + dir.string());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("a cuBLAS kernel") && Contains("1 experiment(s)"));
  const YAML::Node e = YAML::LoadFile((dir / "cublas_lin_4096x28672x8192.yaml").string());
  CHECK(e["arch"].as<std::string>() == "h100");
  CHECK(e["workload"]["m"].as<int>() == 28672);
  CHECK(e["workload"]["n"].as<int>() == 4096);
  CHECK(e["workload"]["schedule"].as<std::string>() == "cooperative_columns");
  CHECK(e["workload"]["persistent"].as<int>() == 132);
  CHECK(YAML::Dump(e["workload"]["layout"]) == "{a: row, b: col, c: col}");
  CHECK(YAML::Dump(e["order"]) == "{kind: cutlass_sm90, raster: n, max_swizzle: 8, cluster: [1, 2], band_padding: skip}");
  r = run_tilesim("validate -q -m " + page + " -e " + dir.string());
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Contains("validation (1 cases)"));
}
