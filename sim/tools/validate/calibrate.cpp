#include "sim/tools/validate/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <sstream>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "models/arch.hpp"
#include "sim/report/format.hpp"

namespace tilesim {

namespace {

namespace fs = std::filesystem;

std::string resolve(const std::string& base_dir, const std::string& p) {
  fs::path q(p);
  return q.is_relative() ? (fs::path(base_dir) / q).lexically_normal().string() : p;
}

std::string num(double v) { return report_detail::fmt("%.6g", v); }

// The raw YAML of the starting arch (a preset or a file).
YAML::Node base_arch_yaml(const CalibSpec& s) {
  YAML::Node n = arch_preset_yaml(s.arch);
  if (n.IsDefined()) return n;
  return load_yaml_file(s.arch);
}

std::string base_arch_text(const CalibSpec& s) {
  // A preset's text with its source comments is the file in models/archs/ of the checkout the
  // spec lives in; failing that, the embedded YAML (without comments).
  std::string path = s.arch;
  if (!fs::exists(path)) {
    for (fs::path dir = fs::absolute(fs::path(s.file)).parent_path(); !dir.empty(); dir = dir.parent_path()) {
      const fs::path cand = dir / "models" / "archs" / (s.arch + ".yaml");
      if (fs::exists(cand)) {
        path = cand.string();
        break;
      }
      if (dir == dir.parent_path()) break;
    }
  }
  if (!fs::exists(path)) {
    return yaml_document(base_arch_yaml(s));
  }
  return read_text_file(path);
}

std::optional<double> yaml_number_at(const YAML::Node& root, const std::string& key) {
  // yaml-cpp nodes are references: reset() rebinds the handle, where `n = n[part]` would
  // overwrite the tree.
  YAML::Node n;
  n.reset(root);
  for (const auto& part : split_dotted_key(key)) {
    if (!n.IsMap() || !n[part]) return std::nullopt;
    n.reset(n[part]);
  }
  try {
    return n.as<double>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

CalibSpec load_calib_spec(const std::string& path) {
  ConfigNode n(load_yaml_file(path), path, "");
  n.allow_keys({"arch", "measured", "experiments", "parameters", "objective", "max_evaluations", "tolerance"});
  CalibSpec s;
  s.file = path;
  const std::string dir = fs::path(path).parent_path().string();
  s.arch = n.string_or("arch", "h100");
  if (arch_preset_yaml(s.arch).IsDefined() == false) s.arch = resolve(dir, s.arch);
  for (const char* list : {"measured", "experiments"}) {
    ConfigNode l = n.at(list);
    if (!l.is_sequence() || l.size() == 0) l.fail("expected a non-empty list of paths");
    for (std::size_t i = 0; i < l.size(); ++i) {
      const std::string p = resolve(dir, l.element(i).as_string());
      if (!fs::exists(p)) l.element(i).fail("no such file or folder: " + p);
      (std::string(list) == "measured" ? s.measured : s.experiments).push_back(p);
    }
  }
  ConfigNode params = n.at("parameters");
  params.expect_map();
  for (const auto& kv : params.raw()) {
    const std::string key = kv.first.as<std::string>();
    ConfigNode p(kv.second, path, "parameters." + key);
    p.allow_keys({"min", "max", "integer", "values"});
    CalibParam cp;
    cp.key = key;
    if (p.has("values")) {
      ConfigNode v = p.at("values");
      if (!v.is_sequence() || v.size() == 0) v.fail("expected a non-empty list of values to try");
      for (std::size_t i = 0; i < v.size(); ++i) cp.values.push_back(v.element(i).as_string());
    } else {
      cp.lo = p.number("min", -1e12, 1e12);
      cp.hi = p.number("max", -1e12, 1e12);
      if (!(cp.hi > cp.lo)) p.fail_key("max", "expected max > min");
      cp.integer = p.boolean_or("integer", false);
    }
    s.params.push_back(cp);
  }
  if (s.params.empty()) params.fail("expected at least one parameter to fit");
  if (auto o = n.find("objective")) {
    o->allow_keys({"hit_mae_pp", "dram_read_mape_pct", "duration_mape_pct", "knee_error_mib"});
    s.hit_scale = o->number_or("hit_mae_pp", s.hit_scale, 1e-6, 1e9);
    s.dram_scale = o->number_or("dram_read_mape_pct", s.dram_scale, 1e-6, 1e9);
    s.time_scale = o->number_or("duration_mape_pct", s.time_scale, 1e-6, 1e9);
    s.knee_scale = o->number_or("knee_error_mib", s.knee_scale, 1e-6, 1e9);
  }
  s.max_evaluations = static_cast<int>(n.integer_or("max_evaluations", s.max_evaluations, 1, 100000));
  s.tolerance = n.number_or("tolerance", s.tolerance, 0, 1e9);
  return s;
}

double calib_objective(const Aggregate& a, const CalibSpec& s) {
  double o = 0;
  if (a.hit_mae_pp) o += *a.hit_mae_pp / s.hit_scale;
  if (a.dram_read_mape_pct) o += *a.dram_read_mape_pct / s.dram_scale;
  if (a.duration_mape_pct) o += *a.duration_mape_pct / s.time_scale;
  if (a.knee_error_mib) o += *a.knee_error_mib / s.knee_scale;
  return o;
}

std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                                double step, int max_evaluations, double tolerance, int* evaluations) {
  const std::size_t d = x0.size();
  int evals = 0;
  const auto clamp = [](std::vector<double> x) {
    for (double& v : x) v = std::clamp(v, 0.0, 1.0);
    return x;
  };
  const auto eval = [&](const std::vector<double>& x) {
    ++evals;
    return f(x);
  };
  std::vector<std::vector<double>> pts{clamp(x0)};
  for (std::size_t i = 0; i < d; ++i) {
    std::vector<double> p = pts[0];
    p[i] = p[i] + step <= 1.0 ? p[i] + step : p[i] - step;  // stay inside the box
    pts.push_back(clamp(p));
  }
  std::vector<double> val;
  for (const auto& p : pts) val.push_back(eval(p));
  std::vector<std::size_t> idx(d + 1);
  while (evals < max_evaluations) {
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return val[a] < val[b]; });
    const std::size_t best = idx[0], worst = idx[d], second = idx[d - 1];
    // Stop on a small simplex; equal values alone are not enough, since a model's error can be
    // flat over a range (a kernel bound by memory ignores its MMA rate) that the fit must leave.
    double diameter = 0;
    for (std::size_t i = 1; i < d + 1; ++i)
      for (std::size_t k = 0; k < d; ++k) diameter = std::max(diameter, std::fabs(pts[idx[i]][k] - pts[best][k]));
    if (diameter <= 1e-3 || (val[worst] - val[best] <= tolerance && diameter <= 0.02)) break;
    std::vector<double> c(d, 0.0);
    for (std::size_t i = 0; i < d + 1; ++i)
      if (i != worst)
        for (std::size_t k = 0; k < d; ++k) c[k] += pts[i][k] / static_cast<double>(d);
    const auto along = [&](double t) {
      std::vector<double> p(d);
      for (std::size_t k = 0; k < d; ++k) p[k] = c[k] + t * (pts[worst][k] - c[k]);
      return clamp(p);
    };
    const auto xr = along(-1.0);
    const double fr = eval(xr);
    if (fr < val[best]) {
      const auto xe = along(-2.0);
      const double fe = eval(xe);
      if (fe < fr) pts[worst] = xe, val[worst] = fe;
      else pts[worst] = xr, val[worst] = fr;
    } else if (fr < val[second]) {
      pts[worst] = xr, val[worst] = fr;
    } else {
      const auto xc = fr < val[worst] ? along(-0.5) : along(0.5);
      const double fc = eval(xc);
      if (fc < std::min(fr, val[worst])) {
        pts[worst] = xc, val[worst] = fc;
      } else {  // shrink towards the best
        for (std::size_t i = 0; i < d + 1; ++i) {
          if (i == best) continue;
          for (std::size_t k = 0; k < d; ++k) pts[i][k] = pts[best][k] + 0.5 * (pts[i][k] - pts[best][k]);
          val[i] = eval(pts[i]);
        }
      }
    }
  }
  const std::size_t b = static_cast<std::size_t>(std::min_element(val.begin(), val.end()) - val.begin());
  if (evaluations) *evaluations = evals;
  return pts[b];
}

CalibResult calibrate(const CalibSpec& spec, int jobs, const std::function<void(const std::string&)>& log) {
  const auto measured = load_measured(spec.measured);
  const auto files = experiment_files(spec.experiments);
  // Which experiments are calibration cases (read once; only those are simulated per step).
  std::vector<std::string> calib_files;
  CalibResult res;
  for (const auto& e : load_validation_experiments(files, {})) {
    if (e.validate.subset != "calibration") continue;
    calib_files.push_back(e.file);
    res.calibration_cases.push_back(e.validate.case_name);
  }
  if (calib_files.empty())
    throw InputError(spec.file + ": experiments: none has validate.subset: calibration, so there is nothing to fit");

  std::vector<const CalibParam*> cont, disc;
  for (const auto& p : spec.params) (p.values.empty() ? cont : disc).push_back(&p);
  const YAML::Node base = base_arch_yaml(spec);

  const auto value_of = [&](const CalibParam& p, double u) {
    double v = p.lo + u * (p.hi - p.lo);
    if (p.integer) v = std::round(v);
    return num(v);
  };
  std::map<std::string, std::pair<double, Aggregate>> memo;
  const auto evaluate = [&](const std::vector<std::pair<std::string, std::string>>& kv) {
    std::string key;
    std::vector<std::string> overrides{"arch=" + spec.arch};
    for (const auto& [k, v] : kv) {
      key += k + "=" + v + " ";
      overrides.push_back("arch_overrides." + k + "=" + v);
    }
    if (auto it = memo.find(key); it != memo.end()) return it->second;
    const auto exps = load_validation_experiments(calib_files, overrides);
    const ValidationReport rep = validate(exps, measured, jobs);
    const Aggregate& a = rep.subsets.at("calibration");
    const double o = calib_objective(a, spec);
    memo[key] = {o, a};
    if (log) log(key + "-> objective " + num(o));
    return memo[key];
  };

  // Every combination of the discrete values (odometer order), each with its own continuous fit.
  std::vector<std::size_t> pick(disc.size(), 0);
  double best_obj = INFINITY;
  while (true) {
    std::vector<std::pair<std::string, std::string>> fixed;
    for (std::size_t i = 0; i < disc.size(); ++i) fixed.emplace_back(disc[i]->key, disc[i]->values[pick[i]]);
    const auto with = [&](const std::vector<double>& u) {
      auto kv = fixed;
      for (std::size_t i = 0; i < cont.size(); ++i) kv.emplace_back(cont[i]->key, value_of(*cont[i], u[i]));
      return kv;
    };
    std::vector<double> u0;
    for (const CalibParam* p : cont) {
      const auto start = yaml_number_at(base, p->key);
      u0.push_back(start ? std::clamp((*start - p->lo) / (p->hi - p->lo), 0.0, 1.0) : 0.5);
    }
    int evals = 0;
    std::vector<double> u = u0;
    if (!cont.empty())
      u = nelder_mead([&](const std::vector<double>& x) { return evaluate(with(x)).first; }, u0, 0.35,
                      spec.max_evaluations, spec.tolerance, &evals);
    const auto kv = with(u);
    const auto [obj, agg] = evaluate(kv);
    res.evaluations += std::max(evals, 1);
    if (obj < best_obj) {
      best_obj = obj;
      res.values = kv;
      res.objective = obj;
      res.calibration = agg;
    }
    std::size_t i = 0;
    for (; i < disc.size(); ++i) {
      if (++pick[i] < disc[i]->values.size()) break;
      pick[i] = 0;
    }
    if (i == disc.size()) break;
  }
  return res;
}

std::string set_yaml_key(const std::string& text, const std::string& key, const std::string& value) {
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
  }
  const std::vector<std::string> parts = split_dotted_key(key);
  const auto indent_of = [](const std::string& l) { return l.find_first_not_of(' '); };
  const auto is_content = [&](const std::string& l) {
    const auto i = indent_of(l);
    return i != std::string::npos && l[i] != '#';
  };
  // Walk down: find each part as "part:" at an indent deeper than its parent, within the parent's block.
  std::size_t begin = 0, end = lines.size();
  int parent_indent = -1;
  for (std::size_t d = 0; d < parts.size(); ++d) {
    std::size_t found = end;
    int child_indent = -1;
    for (std::size_t i = begin; i < end; ++i) {
      if (!is_content(lines[i])) continue;
      const int ind = static_cast<int>(indent_of(lines[i]));
      if (ind <= parent_indent) break;
      if (child_indent < 0) child_indent = ind;
      if (ind != child_indent) continue;
      if (lines[i].compare(static_cast<std::size_t>(ind), parts[d].size() + 1, parts[d] + ":") == 0) {
        found = i;
        break;
      }
    }
    if (found == end) {
      // Absent: insert at the end of the parent block (creating the rest of the path).
      std::size_t at = begin;
      for (std::size_t i = begin; i < end; ++i) {
        if (!is_content(lines[i])) continue;
        if (static_cast<int>(indent_of(lines[i])) <= parent_indent) break;
        at = i + 1;
      }
      const int ind = child_indent >= 0 ? child_indent : parent_indent + 2;
      std::vector<std::string> add;
      for (std::size_t k = d; k < parts.size(); ++k) {
        const std::string pad(static_cast<std::size_t>(ind) + 2 * (k - d), ' ');
        add.push_back(pad + parts[k] + ":" + (k + 1 == parts.size() ? " " + value + "  # fitted (calibration:)" : ""));
      }
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), add.begin(), add.end());
      break;
    }
    if (d + 1 == parts.size()) {
      const std::string head = lines[found].substr(0, indent_of(lines[found]) + parts[d].size() + 1);
      lines[found] = head + " " + value + "  # fitted (calibration:)";
      break;
    }
    // A parent written inline (`kind: {efficiency: 0.7}`) has no lines to edit: say so rather
    // than write YAML that does not parse.
    const std::size_t after = lines[found].find_first_not_of(' ', indent_of(lines[found]) + parts[d].size() + 1);
    if (after != std::string::npos && lines[found][after] != '#')
      throw InputError(key + ": '" + parts[d] + "' is written inline in the arch file; write it as a block "
                       "(one key per line) so that calibrate can set '" + parts.back() + "'");
    parent_indent = static_cast<int>(indent_of(lines[found]));
    begin = found + 1;
    std::size_t e = begin;
    while (e < lines.size() && (!is_content(lines[e]) || static_cast<int>(indent_of(lines[e])) > parent_indent)) ++e;
    end = e;
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

std::string fitted_arch_yaml(const CalibSpec& spec, const CalibResult& r, const std::string& provenance_note) {
  std::string text = base_arch_text(spec);
  // Drop an earlier calibration block (it is always last).
  if (const auto at = text.find("\ncalibration:"); at != std::string::npos) text = text.substr(0, at + 1);
  for (const auto& [k, v] : r.values) text = set_yaml_key(text, k, v);
  std::ostringstream c;
  c << "calibration:  # written by tilesim calibrate; not read by the simulator\n";
  c << "  spec: " << spec.file << "\n";
  if (!provenance_note.empty()) c << "  note: \"" << provenance_note << "\"\n";
  c << "  measurements:\n";
  for (const auto& m : spec.measured) c << "    - " << m << "\n";
  c << "  calibration_cases: [" ;
  for (std::size_t i = 0; i < r.calibration_cases.size(); ++i) c << (i ? ", " : "") << r.calibration_cases[i];
  c << "]\n";
  c << "  fitted: {";
  for (std::size_t i = 0; i < r.values.size(); ++i) c << (i ? ", " : "") << r.values[i].first << ": " << r.values[i].second;
  c << "}\n";
  const Aggregate& a = r.calibration;
  const auto o = [](const std::optional<double>& v) { return v ? num(*v) : std::string("null"); };
  c << "  calibration_error: {hit_mae_pp: " << o(a.hit_mae_pp) << ", dram_read_mape_pct: " << o(a.dram_read_mape_pct)
    << ", duration_mape_pct: " << o(a.duration_mape_pct) << ", knee_error_mib: " << o(a.knee_error_mib)
    << ", objective: " << num(r.objective) << ", evaluations: " << r.evaluations << "}\n";
  text += c.str();
  // The result must load as an arch and carry the fitted values.
  ArchSpec check = parse_arch(ConfigNode(load_yaml_text(text, "fitted arch"), "fitted arch", ""));
  (void)check;
  return text;
}

}  // namespace tilesim
