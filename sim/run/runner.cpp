#include "sim/run/runner.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <unordered_map>

#include "common/error.hpp"
#include "common/files.hpp"
#include "sim/report/chain.hpp"
#include "sim/report/report.hpp"
#include "sim/config/canonical.hpp"
#include "sim/run/compare.hpp"
#include "sim/config/expression.hpp"
#include "sim/run/progress.hpp"

namespace tilesim::sweep {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// An exclusive lock on a sweep folder for as long as a sweep writes it: two sweeps appending to
// one results.jsonl would both run every point. flock() is released by the kernel when the
// process ends, however it ends, so a kill -9 leaves no stale lock behind.
class FolderLock {
 public:
  explicit FolderLock(const fs::path& dir) {
    const std::string path = (dir / ".lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InputError(path + ": cannot open the folder's lock file");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw InputError(dir.string() + ": another tilesim is writing this folder now; wait for it to finish or "
                                      "choose another output folder");
    }
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock() { ::close(fd_); }

 private:
  int fd_ = -1;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(path.string() + ": cannot open for writing");
  out << text;
  if (!out) throw InputError(path.string() + ": write failed");
}

// A deadlock names its point: the engine's explanation knows blocks and semaphores, not the
// sweep.
[[noreturn]] void rethrow_with_point(const ExperimentPlan& plan, std::size_t i) {
  try {
    throw;
  } catch (const DeadlockError& e) {
    if (plan.label(i).empty()) throw;
    throw DeadlockError(plan.file + " [sweep point " + plan.label(i) + "]: " + e.what());
  }
}

// The hashes of every point, or the first bad point's error in sweep order (whatever the
// thread count): a bad point stops the sweep before anything runs.
std::vector<std::string> validate_points(const ExperimentPlan& plan, int jobs, WorkloadCache& cache) {
  std::vector<std::string> hashes;
  for (PointCheck& c : check_points(plan, jobs, cache)) {
    if (c.error) std::rethrow_exception(c.error);
    hashes.push_back(std::move(c.hash));
  }
  return hashes;
}

}  // namespace

std::vector<PointCheck> check_points(const ExperimentPlan& plan, int jobs, WorkloadCache& cache,
                                     const std::function<void(std::size_t, const ExperimentPoint&)>& also) {
  std::vector<PointCheck> checks(plan.size());
  std::vector<std::size_t> all(plan.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  run_local(
      all, jobs,
      [&](std::size_t i) {
        try {
          const ExperimentPoint p = plan.build(i, &cache);
          try {
            check_runnable(*p.workload, p.arch);
          } catch (...) {
            rethrow_with_point(plan, i);
          }
          if (also) also(i, p);
          checks[i].hash = plan.point_hash(i);
        } catch (...) {
          checks[i].error = std::current_exception();
        }
        return std::string();
      },
      [](std::size_t, const std::string&) {});
  return checks;
}

std::unordered_map<std::string, json> read_hashed_jsonl(const fs::path& path, const std::string& required,
                                                        const std::string& what, const std::string& fix,
                                                        const LineCheck& check) {
  std::unordered_map<std::string, json> done;
  std::error_code ec;
  if (!fs::exists(path, ec)) return done;
  std::string text = read_text_file(path.string());
  const std::size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  if (keep != text.size()) {
    spdlog::warn("{}: dropping an unfinished last line ({} bytes) left by an interrupted run", path.string(),
                 text.size() - keep);
    fs::resize_file(path, keep);
    text.resize(keep);
  }
  // A line that cannot stand is reported and set aside (its point runs again); the rest are kept.
  std::string kept, set_aside;
  std::vector<std::string> problems;
  std::unordered_map<std::string, std::size_t> line_of;
  std::istringstream in(text);
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const std::string where = path.string() + ":" + std::to_string(n);
    json j = json::parse(line, nullptr, false);
    std::string problem;
    if (j.is_discarded() || !j.is_object() || !j.contains("hash") || !j["hash"].is_string() || !j.contains(required))
      problem = "not " + what + " (expected a JSON object with \"hash\" and \"" + required + "\")";
    else if (check)
      problem = check(j);
    if (problem.empty()) {
      const std::string hash = j["hash"].get<std::string>();
      if (const auto it = line_of.find(hash); it != line_of.end()) {
        problem = "the same point as line " + std::to_string(it->second) + ", which is kept";
      } else {
        line_of.emplace(hash, n);
        kept += line + "\n";
        done[hash] = std::move(j);
        continue;
      }
    }
    problems.push_back(where + ": " + problem);
    set_aside += line + "\n";
  }
  // A file none of whose lines stands is not this kind of file at all: leave it alone.
  if (kept.empty() && !problems.empty())
    throw InputError(problems.front() + "; no line of the file is " + what + ": " + fix);
  for (const std::string& p : problems)
    spdlog::warn("{}; set aside in {}.damaged, its point runs again", p, path.filename().string());
  if (!set_aside.empty()) {
    // The damaged lines go to a side file (nothing is lost), then the file is replaced by its
    // good lines in one rename, so that a kill in between leaves either version whole.
    const fs::path damaged = path.string() + ".damaged", fresh = path.string() + ".tmp";
    {
      std::ofstream side(damaged, std::ios::app | std::ios::binary);
      side << set_aside;
      if (!side.flush()) throw InputError(damaged.string() + ": write failed");
    }
    write_text(fresh, kept);
    fs::rename(fresh, path, ec);
    if (ec) throw InputError(path.string() + ": cannot replace it with its good lines (" + ec.message() + ")");
  }
  return done;
}

std::string resumed_result_problem(const json& line) {
  const json& result = line.at("result");
  if (!result.is_object()) return "its \"result\" is not an object";
  // Every figure this simulator writes is a finite, non-negative number (times, bytes, rates,
  // counts): anything else was edited or damaged, and would be copied into the summaries.
  std::vector<std::pair<const json*, std::string>> stack{{&result, "result"}};
  while (!stack.empty()) {
    const auto [v, where] = stack.back();
    stack.pop_back();
    if (v->is_number_float() && !(std::isfinite(v->get<double>()) && v->get<double>() >= 0))
      return where + " is " + v->dump() + ", not a finite figure >= 0";
    if (v->is_number_integer() && v->get<std::int64_t>() < 0) return where + " is " + v->dump() + ", not >= 0";
    if (v->is_object())
      for (const auto& [k, e] : v->items()) stack.emplace_back(&e, where + "." + k);
    if (v->is_array())
      for (std::size_t i = 0; i < v->size(); ++i) stack.emplace_back(&(*v)[i], where + "[" + std::to_string(i) + "]");
  }
  // The printers read the fields they need without checking: render this one result with each.
  try {
    std::ostringstream sink;
    const std::vector<json> one{result};
    write_csv(sink, one);
    print_table(sink, "", one);
    print_chain_summary(sink, one);
    const json point{{"result", result}};
    (void)point_time_ns(point);
    (void)point_dram_bytes(point);
    (void)result.at("total").at("l2_hit_rate").get<double>();
  } catch (const json::exception& e) {
    return std::string("a field of its result is missing or mistyped (") + e.what() + ")";
  }
  return "";
}

json point_object(const ExperimentPlan& plan, std::size_t i, const std::string& hash, json result) {
  const SweepPoint& p = plan.sweep.points[i];
  json axes = json::object();
  for (std::size_t a = 0; a < plan.sweep.axes.size(); ++a)
    for (std::size_t k = 0; k < plan.sweep.axes[a].keys.size(); ++k)
      axes[plan.sweep.axes[a].keys[k]] = value_label(plan.sweep.axes[a].values[p.value[a]][k]);
  if (p.label.empty()) result.erase("point");
  else result["point"] = p.label;
  return {{"index", i},   {"hash", hash},   {"label", p.label}, {"axes", axes},
          {"config", yaml_to_json(plan.point_yaml(i))}, {"result", std::move(result)}};
}

namespace {

// The writing rank's preparation: the output folder (created, locked, holding the experiment),
// the results of an earlier run of it (resumed into `outcome`), the results file opened for
// appending, and the points still to run. Whatever it opened is left in `jsonl` and `lock`
// even when it throws, so that the caller can close it.
void prepare_writer(const ExperimentPlan& plan, const RunSettings& settings, const std::vector<std::string>& hashes,
                    SweepOutcome& outcome, std::vector<std::size_t>& pending, std::FILE*& jsonl,
                    std::unique_ptr<FolderLock>& lock) {
  outcome.points.assign(plan.size(), json());
  std::unordered_map<std::string, json> finished;
  if (!settings.out_dir.empty()) {
    const fs::path dir(settings.out_dir);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) throw InputError(dir.string() + ": cannot create the output folder");
    lock = std::make_unique<FolderLock>(dir);
    write_text(dir / "experiment.yaml", plan.resolved_yaml());
    finished = read_hashed_jsonl(dir / "results.jsonl", "result", "a point of a tilesim sweep",
                                 "remove the file or choose another output folder", resumed_result_problem);
    jsonl = std::fopen((dir / "results.jsonl").c_str(), "ab");
    if (!jsonl) throw InputError((dir / "results.jsonl").string() + ": cannot open for appending");
  }
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto it = finished.find(hashes[i]);
    if (it == finished.end()) {
      pending.push_back(i);
      continue;
    }
    // Same configuration, same simulator: its result stands; labels follow this sweep.
    outcome.points[i] = point_object(plan, i, hashes[i], it->second["result"]);
    ++outcome.resumed;
  }
}

// The sweep's summaries beside results.jsonl: summary.json, summary.csv (a row per point) and
// kernels.csv (a row per kernel of every point).
void write_summaries(const ExperimentPlan& plan, const fs::path& dir, const SweepOutcome& outcome) {
  write_text(dir / "summary.json", summary_json(plan, outcome).dump(1) + "\n");
  std::ostringstream csv;
  write_summary_csv(csv, plan.sweep, outcome.points);
  write_text(dir / "summary.csv", csv.str());
  std::vector<json> results;
  for (const json& p : outcome.points) results.push_back(p["result"]);
  std::ostringstream kernels;
  write_csv(kernels, results, &outcome.points);  // with point_index and point_hash, to join summary.csv
  write_text(dir / "kernels.csv", kernels.str());
}

}  // namespace

SweepOutcome run_sweep(const ExperimentPlan& plan, const RunSettings& settings, ProcessGroup& group) {
  WorkloadCache cache;
  const std::vector<std::string> hashes = validate_points(plan, settings.jobs, cache);
  SweepOutcome outcome;
  outcome.workloads_built = cache.builds();
  spdlog::info("{}: {} point(s) validated, {} distinct workload(s)", plan.name, plan.size(), cache.builds());

  // The writer prepares the folder and works out what is left; the other ranks wait to hear
  // whether that went well, so that a failure there cannot leave them waiting for work.
  std::vector<std::size_t> pending;
  std::FILE* jsonl = nullptr;
  std::unique_ptr<FolderLock> lock;  // held until the summaries are written
  std::exception_ptr prep_error;
  if (group.is_writer()) {
    try {
      prepare_writer(plan, settings, hashes, outcome, pending, jsonl, lock);
    } catch (...) {
      prep_error = std::current_exception();
    }
  }
  if (!group.agree(!prep_error)) {
    if (jsonl) std::fclose(jsonl);
    if (prep_error) std::rethrow_exception(prep_error);
    throw InputError("the writing rank failed to prepare the sweep's output folder");
  }
  if (group.is_writer() && outcome.resumed)
    spdlog::warn("{}: {} of {} point(s) already finished in {}, {} to run", plan.name, outcome.resumed, plan.size(),
                 settings.out_dir, pending.size());

  Progress progress(plan.size(), outcome.resumed, group.is_writer() ? settings.progress : ProgressStyle::off);
  const PointFn simulate_point = [&](std::size_t i) {
    const ExperimentPoint p = plan.build(i, &cache);
    SimResult r;
    try {
      // The point's dispatches move the progress while it runs (a single long point too).
      r = simulate_counted(*p.workload, p.arch, p.options, &progress);
    } catch (...) {
      rethrow_with_point(plan, i);
    }
    r.experiment = plan.name;
    r.point = p.label;
    const RunBounds bounds = compute_traffic_bounds(*p.workload, p.arch.l2.bytes, infer_gemm_shapes(*p.workload));
    return point_object(plan, i, hashes[i], result_json(r, &bounds)).dump();
  };
  const DoneFn done = [&](std::size_t i, const std::string& line) {
    if (jsonl) {
      // One write per line, flushed: a kill loses at most the line being written.
      const std::string with_newline = line + "\n";
      if (std::fwrite(with_newline.data(), 1, with_newline.size(), jsonl) != with_newline.size() || std::fflush(jsonl) != 0)
        throw InputError(settings.out_dir + "/results.jsonl: write failed");
    }
    outcome.points[i] = json::parse(line);
    ++outcome.simulated;
    progress.advance();
  };
  try {
    group.run(pending, settings.jobs, simulate_point, done);
  } catch (...) {
    if (jsonl) std::fclose(jsonl);
    throw;
  }
  progress.finish();
  if (jsonl) std::fclose(jsonl);
  if (!group.is_writer()) return outcome;

  outcome.groups = compare_points(plan.sweep, outcome.points);
  if (!settings.out_dir.empty()) write_summaries(plan, settings.out_dir, outcome);
  return outcome;
}

json summary_json(const ExperimentPlan& plan, const SweepOutcome& outcome) {
  json axes = json::array();
  for (const SweepAxis& a : plan.sweep.axes) axes.push_back({{"keys", a.keys}, {"labels", a.labels}});
  json compare_keys = json::array();
  std::string baseline;
  for (std::size_t i = 0; i < plan.sweep.compare.axes.size(); ++i) {
    const SweepAxis& a = plan.sweep.axes[plan.sweep.compare.axes[i]];
    for (const auto& k : a.keys) compare_keys.push_back(k);
    baseline += (baseline.empty() ? "" : " ") + a.labels[plan.sweep.compare.baseline[i]];
  }
  return {{"experiment", plan.name},
          {"file", plan.file},
          {"tilesim_version", TILESIM_VERSION},
          {"simulator", simulator_fingerprint()},
          {"grid_points", plan.sweep.grid_size},
          {"axes", axes},
          {"compare", {{"keys", compare_keys}, {"baseline", compare_keys.empty() ? json(nullptr) : json(baseline)}}},
          {"points", outcome.points},
          {"groups", outcome.groups}};
}

}  // namespace tilesim::sweep
