#include "sim/tools/tune/tune.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "sim/report/report.hpp"
#include "sim/core/simulator.hpp"
#include "sim/run/distribute.hpp"
#include "sim/run/runner.hpp"
#include "sim/config/workload_cache.hpp"

namespace tilesim::tune {

namespace fs = std::filesystem;
using nlohmann::json;

Strategy parse_strategy(const std::string& s) {
  if (s == "exhaustive") return Strategy::exhaustive;
  if (s == "heuristic") return Strategy::heuristic;
  if (s == "greedy") return Strategy::greedy;
  throw InputError("--strategy: expected exhaustive, heuristic or greedy, got '" + s + "'");
}

Objective parse_objective(const std::string& s) {
  if (s == "duration") return Objective::duration;
  if (s == "dram") return Objective::dram;
  throw InputError("--objective: expected duration or dram, got '" + s + "'");
}

std::string settings_text(const Settings& s) {
  static const char* kStrategy[] = {"exhaustive", "heuristic", "greedy"};
  return std::string("strategy ") + kStrategy[int(s.strategy)] + "  objective " +
         (s.objective == Objective::dram ? "dram" : "duration");
}

double objective_value(const Measured& m, Objective o) { return o == Objective::dram ? m.dram_bytes : m.duration_ns; }

namespace {

Measured measured_from_json(const json& j) {
  Measured m;
  m.duration_ns = j.at("duration_ns").get<double>();
  m.dram_bytes = j.at("dram_bytes").get<double>();
  m.waves = j.at("waves").get<std::uint64_t>();
  m.last_wave_utilization = j.at("last_wave_utilization").get<double>();
  // Absent in lines written before per-kernel times were kept.
  if (j.contains("kernels"))
    for (const json& k : j.at("kernels")) m.kernel_ns.emplace_back(k.at(0).get<std::string>(), k.at(1).get<double>());
  return m;
}

json measured_to_json(const Measured& m) {
  json j = {{"duration_ns", m.duration_ns},
            {"dram_bytes", m.dram_bytes},
            {"waves", m.waves},
            {"last_wave_utilization", m.last_wave_utilization}};
  if (m.kernel_ns.size() > 1) {  // one kernel's time is the total: not repeated
    json ks = json::array();
    for (const auto& [name, ns] : m.kernel_ns) ks.push_back({name, ns});
    j["kernels"] = ks;
  }
  return j;
}

// The persistent cache: DIR/results.jsonl, one {"hash", "label", "measured"} per line,
// appended as points finish. Only the figures the search needs are kept, so the file stays
// small across many searches; the hash covers configuration, named files and simulator.
class ResultCache {
 public:
  explicit ResultCache(const std::string& dir) {
    if (dir.empty()) return;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) throw InputError(dir + ": cannot create the tune cache folder (--cache-dir)");
    path_ = (fs::path(dir) / "results.jsonl").string();
    for (const auto& [hash, j] :
         sweep::read_hashed_jsonl(path_, "measured", "a tilesim tune cache line", "choose another --cache-dir",
                                  [](const nlohmann::json& j) {
           try {
             (void)measured_from_json(j.at("measured"));
           } catch (const nlohmann::json::exception& e) {
             return std::string("its \"measured\" is missing a field or mistyped (") + e.what() + ")";
           }
           return std::string();
         }))
      done_[hash] = measured_from_json(j.at("measured"));
  }
  const Measured* find(const std::string& hash) const {
    auto it = done_.find(hash);
    return it == done_.end() ? nullptr : &it->second;
  }
  // Called from one thread at a time (run_local's writer).
  void add(const std::string& hash, const std::string& label, const Measured& m) {
    done_[hash] = m;
    if (path_.empty()) return;
    std::ofstream out(path_, std::ios::app);
    out << json{{"hash", hash}, {"label", label}, {"measured", measured_to_json(m)}}.dump() << "\n";
    if (!out) throw InputError(path_ + ": write failed");
  }

 private:
  std::string path_;
  std::unordered_map<std::string, Measured> done_;
};

Measured simulate_point(const ExperimentPlan& plan, std::size_t i, sweep::WorkloadCache& wc,
                        sweep::Progress* progress = nullptr) {
  const ExperimentPoint p = plan.build(i, &wc);
  const SimResult r = sweep::simulate_counted(*p.workload, p.arch, p.options, progress);
  const json j = result_json(r);
  Measured m;
  const json& t = j.at("total");
  m.duration_ns = t.at("duration_ns").get<double>();
  m.dram_bytes = t.at("dram_read_bytes").get<double>() + t.at("dram_write_bytes").get<double>();
  std::uint64_t most = 0;
  for (const json& k : j.at("kernels")) {
    m.kernel_ns.emplace_back(k.at("name").get<std::string>(), k.at("duration_ns").get<double>());
    const auto w = k.at("waves").get<std::uint64_t>();
    m.waves += w;
    if (w > most) {
      most = w;
      m.last_wave_utilization = k.at("last_wave_utilization").get<double>();
    }
  }
  return m;
}

class Search {
 public:
  Search(const TunePlans& plans, const Settings& s, Outcome& o)
      : plans_(plans), settings_(s), out_(o), cache_(s.cache_dir) {}

  // Simulates (or takes from the cache) the given candidates, in parallel.
  void evaluate(const std::vector<std::size_t>& which) {
    std::vector<std::size_t> pending;
    for (std::size_t c : which) {
      Candidate& cand = out_.candidates[c];
      if (!cand.legal || cand.measured) continue;
      if (const Measured* m = cache_.find(cand.hash)) {
        cand.measured = *m;
        ++out_.from_cache;
      } else {
        pending.push_back(c);
      }
    }
    sweep::Progress progress(pending.size(), 0, settings_.progress, "candidates");
    sweep::run_local(
        pending, settings_.jobs,
        [&](std::size_t c) {
          return measured_to_json(simulate_point(plans_.search, out_.candidates[c].index, wc_, &progress)).dump();
        },
        [&](std::size_t c, const std::string& line) {
          Candidate& cand = out_.candidates[c];
          cand.measured = measured_from_json(json::parse(line));
          cache_.add(cand.hash, cand.label, *cand.measured);
          ++out_.simulated;
          progress.advance();
        });
    progress.finish();
  }

  void measure_base() {
    out_.base_label = "(experiment as written)";
    const std::string hash = plans_.base.point_hash(0);
    if (const Measured* m = cache_.find(hash)) {
      out_.base = *m;
      ++out_.from_cache;
      return;
    }
    out_.base = simulate_point(plans_.base, 0, wc_);
    cache_.add(hash, out_.base_label, out_.base);
    ++out_.simulated;
  }

  // Builds every point (in parallel) to sort legal from illegal and score the legal ones.
  void classify() {
    const ExperimentPlan& plan = plans_.search;
    out_.candidates.resize(plan.size());
    std::vector<sweep::PointCheck> checks =
        sweep::check_points(plan, settings_.jobs, wc_, [&](std::size_t i, const ExperimentPoint& p) {
          out_.candidates[i].estimate = estimate(*p.workload, p.arch);
        });
    for (std::size_t i = 0; i < plan.size(); ++i) {
      Candidate& c = out_.candidates[i];
      c.index = i;
      c.label = plan.label(i);
      c.hash = checks[i].hash;
      c.legal = !checks[i].error;
      if (!checks[i].error) continue;
      // An illegal configuration is skipped; anything else (a deadlock, a bug) stops the search.
      try {
        std::rethrow_exception(checks[i].error);
      } catch (const InputError& e) {
        c.error = e.what();
      }
    }
    for (const Candidate& c : out_.candidates) (c.legal ? out_.legal : out_.illegal)++;
    if (out_.legal == 0) {
      std::string why = out_.candidates.empty() ? std::string("no points") : out_.candidates.front().error;
      throw InputError(plan.file + ": tune: none of the " + std::to_string(plan.size()) +
                       " points is legal; the first fails with: " + why);
    }
  }

  // Legal candidates, best estimate first (ties in sweep order).
  std::vector<std::size_t> ranked_by_estimate() const {
    std::vector<std::size_t> r;
    for (std::size_t c = 0; c < out_.candidates.size(); ++c)
      if (out_.candidates[c].legal) r.push_back(c);
    const auto score = [&](std::size_t c) {
      const Estimate& e = out_.candidates[c].estimate;
      return settings_.objective == Objective::dram ? e.dram_bytes : e.time_ns;
    };
    std::stable_sort(r.begin(), r.end(), [&](std::size_t a, std::size_t b) { return score(a) < score(b); });
    return r;
  }

  double value(std::size_t c) const { return objective_value(*out_.candidates[c].measured, settings_.objective); }

  // Coordinate descent: from `start`, try every other value of each axis (all neighbours
  // at once, in parallel), move to the best improvement, stop when none improves.
  void greedy(std::size_t start) {
    const sweep::Sweep& sw = plans_.search.sweep;
    std::map<std::vector<std::uint32_t>, std::size_t> by_value;
    for (std::size_t c = 0; c < sw.points.size(); ++c) by_value[sw.points[c].value] = c;
    std::size_t cur = start;
    evaluate({cur});
    for (std::size_t step = 0; step < 1000; ++step) {
      std::vector<std::size_t> nb;
      for (std::size_t a = 0; a < sw.axes.size(); ++a)
        for (std::uint32_t v = 0; v < sw.axes[a].size(); ++v) {
          std::vector<std::uint32_t> key = sw.points[cur].value;
          if (key[a] == v) continue;
          key[a] = v;
          auto it = by_value.find(key);
          if (it != by_value.end() && out_.candidates[it->second].legal) nb.push_back(it->second);
        }
      evaluate(nb);
      std::size_t next = cur;
      for (std::size_t c : nb)
        if (value(c) < value(next)) next = c;
      if (next == cur) break;
      cur = next;
    }
  }

  void run() {
    // The base first: a mistake in the experiment as written (a typo, a bad value) is reported
    // as itself, not as every point being illegal.
    measure_base();
    classify();
    const std::vector<std::size_t> ranked = ranked_by_estimate();
    switch (settings_.strategy) {
      case Strategy::exhaustive: evaluate(ranked); break;
      case Strategy::heuristic: {
        const double f = std::clamp(settings_.top_fraction, 0.0, 1.0);
        const std::size_t n = std::max<std::size_t>(1, std::size_t(std::ceil(f * double(ranked.size()))));
        evaluate(std::vector<std::size_t>(ranked.begin(), ranked.begin() + std::min(n, ranked.size())));
        break;
      }
      case Strategy::greedy: greedy(ranked.front()); break;
    }
    for (std::size_t c = 0; c < out_.candidates.size(); ++c)
      if (out_.candidates[c].measured && (!out_.best || value(c) < value(*out_.best))) out_.best = c;
    // The gap needs the true best: known when every legal point has a cached result.
    double truth = 0;
    bool all = true;
    for (const Candidate& c : out_.candidates) {
      if (!c.legal) continue;
      const Measured* m = cache_.find(c.hash);
      if (!m) {
        all = false;
        break;
      }
      const double v = objective_value(*m, settings_.objective);
      if (truth == 0 || v < truth) truth = v;
    }
    if (all && truth > 0 && out_.best) out_.gap = value(*out_.best) / truth - 1.0;
  }

 private:
  const TunePlans& plans_;
  const Settings& settings_;
  Outcome& out_;
  ResultCache cache_;
  sweep::WorkloadCache wc_;
};

}  // namespace

TunePlans load_tune_plans_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                               const std::vector<std::string>& overrides) {
  const YAML::Node root = load_yaml_text(text, origin);
  if (!root.IsMap()) throw InputError(origin + ": expected a mapping of experiment keys at the top level");
  if (!root["tune"]) throw InputError(origin + ": tilesim tune needs a `tune:` section naming the axes to search");
  if (root["sweep"])
    throw InputError(origin + ": `sweep:` beside `tune:`: tune searches its own axes; move the sweep's axes into `tune:`");
  // The search plan expands `tune:` as its sweep; the base is the experiment as written. Both
  // read the file's own text, so errors name its lines.
  return {load_plan_text(text, origin, base_dir, overrides, "tune"), load_plan_text(text, origin, base_dir, overrides)};
}

TunePlans load_tune_plans(const std::string& path, const std::vector<std::string>& overrides) {
  return load_tune_plans_text(read_text_file(path), path, fs::path(path).parent_path().string(), overrides);
}

Outcome run_tune(const TunePlans& plans, const Settings& settings) {
  const auto t0 = std::chrono::steady_clock::now();
  Outcome o;
  Search(plans, settings, o).run();
  o.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

std::vector<Measured> measure_plans(const std::vector<const ExperimentPlan*>& plans, const Settings& settings,
                                    std::size_t& simulated, std::size_t& cached) {
  ResultCache cache(settings.cache_dir);
  sweep::WorkloadCache wc;
  std::vector<Measured> out(plans.size());
  std::vector<std::string> hashes(plans.size());
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    hashes[i] = plans[i]->point_hash(0);
    if (const Measured* m = cache.find(hashes[i])) {
      out[i] = *m;
      ++cached;
    } else {
      pending.push_back(i);
    }
  }
  sweep::Progress progress(pending.size(), 0, settings.progress, "layers");
  sweep::run_local(
      pending, settings.jobs,
      [&](std::size_t i) { return measured_to_json(simulate_point(*plans[i], 0, wc, &progress)).dump(); },
      [&](std::size_t i, const std::string& line) {
        out[i] = measured_from_json(json::parse(line));
        cache.add(hashes[i], plans[i]->name, out[i]);
        ++simulated;
        progress.advance();
      });
  progress.finish();
  return out;
}

void print_outcome(std::ostream& out, const TunePlans& plans, const Outcome& o, const Settings& s) {
  out << "tune: " << plans.search.name << "  " << settings_text(s) << "\n\n";
  std::vector<std::size_t> done;
  for (std::size_t c = 0; c < o.candidates.size(); ++c)
    if (o.candidates[c].measured) done.push_back(c);
  const auto val = [&](std::size_t c) { return objective_value(*o.candidates[c].measured, s.objective); };
  std::stable_sort(done.begin(), done.end(), [&](std::size_t a, std::size_t b) { return val(a) < val(b); });
  std::size_t width = 6;
  for (std::size_t i = 0; i < std::min<std::size_t>(10, done.size()); ++i)
    width = std::max(width, o.candidates[done[i]].label.size());
  width = std::max(width, o.base_label.size());
  char buf[256];
  const auto row = [&](const std::string& rank, const std::string& label, const Measured& m) {
    std::snprintf(buf, sizeof buf, "%4s  %-*s  %10.1f  %9.1f  %5llu  %8.1f%%  %7.3fx\n", rank.c_str(), int(width),
                  label.c_str(), m.duration_ns / 1e3, m.dram_bytes / 1e6, static_cast<unsigned long long>(m.waves),
                  100 * m.last_wave_utilization,
                  objective_value(m, s.objective) > 0 ? objective_value(o.base, s.objective) / objective_value(m, s.objective)
                                                      : 0.0);
    out << buf;
  };
  std::snprintf(buf, sizeof buf, "%4s  %-*s  %10s  %9s  %5s  %9s  %8s\n", "rank", int(width), "config", "time_us",
                "dram_mb", "waves", "last_wave", "speedup");
  out << buf;
  for (std::size_t i = 0; i < std::min<std::size_t>(10, done.size()); ++i)
    row(std::to_string(i + 1), o.candidates[done[i]].label, *o.candidates[done[i]].measured);
  row("base", o.base_label, o.base);
  out << "\nsearch: " << o.candidates.size() << " points, " << o.legal << " legal, " << o.illegal << " illegal; "
      << o.simulated << " simulated, " << o.from_cache << " from cache (base included); ";
  std::snprintf(buf, sizeof buf, "%.2f s\n", o.wall_s);
  out << buf;
  if (o.gap) {
    std::snprintf(buf, sizeof buf, "gap to the exhaustive best (all legal points cached): %.2f%%\n", 100 * *o.gap);
    out << buf;
  } else {
    out << "gap to the exhaustive best: unknown (run --strategy exhaustive with the same cache to measure it)\n";
  }
  if (o.best) out << "best: " << o.candidates[*o.best].label << "\n";
}

std::string best_yaml(const TunePlans& plans, const Outcome& o) {
  if (!o.best) throw InputError(plans.search.file + ": tune simulated no point, so there is no best configuration");
  const Candidate& c = o.candidates[*o.best];
  return "# tilesim tune's best point of " + plans.search.file + ": " + c.label + "\n" +
         yaml_document(plans.search.point_yaml(c.index));
}

}  // namespace tilesim::tune
