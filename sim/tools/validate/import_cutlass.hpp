#pragma once
// `tilesim import cutlass`: experiments from the CUTLASS profiler's CSV (`cutlass_profiler
// --operation=gemm ... --output=FILE.csv`), one per GEMM row, and a case table of the rows'
// runtimes, so that `tilesim validate -m DIR/measured.csv -e DIR` compares durations at once.
//
// Read by column name: m, n, k, A, B, C (type:layout), cta_m/n/k, stages, cluster_m/n,
// split_k_slices, raster_order, swizzle_size, Operation (its name tells a CUTLASS 3 SM90 kernel
// and its schedule), Runtime (ms). A CUTLASS 2 kernel (mma.sync) launches one block per tile in
// CUTLASS's identity swizzle; an SM90 kernel is a persistent warp-specialised kernel under
// CUTLASS 3's tile scheduler with the row's raster order and swizzle (docs/validation.md).
#include <string>
#include <vector>

namespace tilesim {

struct CutlassImport {
  std::string case_name;
  std::string yaml;      ///< "" when skipped
  std::string skipped;   ///< why
  double runtime_us = 0;
};

/// The rows of a profiler CSV (`path` names it in errors); a malformed file is an InputError
/// naming the line and column.
std::vector<CutlassImport> import_cutlass_csv(const std::string& path, const std::string& arch);

/// Renames rows whose case repeats an earlier row's (the same kernel, shape and options profiled
/// twice, in one file or across files) to CASE_2, CASE_3, ...: call once on all the rows.
void name_cases_uniquely(std::vector<CutlassImport>& rows);

/// import_cutlass_csv over every file, then name_cases_uniquely: what `tilesim import cutlass`
/// and its Python twin read.
std::vector<CutlassImport> import_cutlass_csvs(const std::vector<std::string>& paths, const std::string& arch);

/// The case table of the imported rows: `case,median_us` (each runtime in its shortest exact form).
std::string cutlass_case_table(const std::vector<CutlassImport>& rows);

}  // namespace tilesim
