"""tilesim from Python: the simulator of `tilesim run`, called in-process.

    import tilesim
    r = tilesim.run("experiments/gemm_orders.yaml", overrides={"workload.m": 4096})
    r.points[0]["result"]["kernels"][0]["duration_ns"]
    kernels, totals = r.to_pandas()          # with python3-pandas

An experiment is a path to a YAML file, a YAML string, or a dict with the same keys (docs/
configuration.md). `overrides` maps keys to values as `--set key=value` does. Errors are
tilesim.InputError (a ValueError; bad input, with the message and YAML key the CLI prints) and
tilesim.DeadlockError (a RuntimeError). The simulation releases the GIL: threads run
experiments in parallel. tilesim.from_triton / rank_configs / prune turn Triton autotune
configurations into experiments and rank them (tilesim/triton.py). docs/python.md has the reference.
"""
import json
import os

from ._tilesim import DeadlockError, InputError, version  # noqa: F401
from . import _tilesim

__all__ = ["run", "sweep", "Result", "explore", "tune", "Tuning", "validate", "Validation", "import_ncu", "import_cutlass", "InputError", "DeadlockError", "version", "from_triton", "rank_configs",
           "prune"]


def _experiment_text(experiment):
    """(YAML text, origin for messages, folder for relative paths) of an experiment argument."""
    if isinstance(experiment, dict):
        return json.dumps(experiment), "<dict>", os.getcwd()  # JSON is YAML
    if isinstance(experiment, (str, os.PathLike)):
        text = os.fspath(experiment)
        if "\n" not in text and (text.endswith((".yaml", ".yml")) or os.path.isfile(text) or ":" not in text):
            if not os.path.isfile(text):
                raise InputError(f"{text}: no such experiment file")
            with open(text, encoding="utf-8") as f:
                return f.read(), text, os.path.dirname(os.path.abspath(text))
        return text, "<string>", os.getcwd()
    raise TypeError("experiment: expected a path, a YAML string or a dict, got " + type(experiment).__name__)


def _override_list(overrides):
    if overrides is None:
        return []
    if not isinstance(overrides, dict):
        raise TypeError("overrides: expected a dict of key -> value, got " + type(overrides).__name__)
    return [f"{k}={json.dumps(v)}" for k, v in overrides.items()]


class Result(dict):
    """A finished experiment: a dict with the fields of the summary.json `tilesim run --out`
    writes (experiment, axes, compare, points, groups, ...).

    `points`: one dict per point (index, hash, label, axes, config, result); `result` is the
    single point's result JSON (the dict `tilesim run --json` writes for it); `summary` the
    whole object (the dict itself)."""

    def __init__(self, summary):
        super().__init__(summary)
        self.summary = self
        self.points = self["points"]

    @property
    def result(self):
        if len(self.points) != 1:
            raise ValueError(f"the experiment has {len(self.points)} points; read .points[i]['result']")
        return self.points[0]["result"]

    def __repr__(self):
        return f"<tilesim.Result {self.summary.get('experiment', '')!r}: {len(self.points)} point(s)>"

    def to_pandas(self):
        """(kernels, totals) as pandas DataFrames: a row per point and kernel, and a row per point,
        with the point's index, label and sweep axes; nested figures flattened with dots."""
        import pandas as pd

        kernels, totals = [], []
        for p in self.points:
            head = {"point": p["index"], "label": p.get("label", "")}
            head.update({f"axis.{k}": v for k, v in (p.get("axes") or {}).items()})
            r = p["result"]
            for k in r.get("kernels", []):
                row = dict(head)
                row.update(pd.json_normalize(k, sep=".").iloc[0].to_dict())
                kernels.append(row)
            row = dict(head)
            row.update({k: v for k, v in r.items() if not isinstance(v, (list, dict))})
            for k, v in r.items():
                if isinstance(v, dict):
                    row.update({f"{k}.{kk}": vv for kk, vv in pd.json_normalize(v, sep=".").iloc[0].to_dict().items()})
            totals.append(row)
        return pd.DataFrame(kernels), pd.DataFrame(totals)


def _dims(value, what):
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return "x".join(str(int(v)) for v in value)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: expected 'AxBxC' or three integers, got {value!r}") from None


def import_ncu(csvs, out_dir=None, arch=None, shape=None, tile=None, stages=None, order=None, dtype="fp16",
               family="imported", overrides=None):
    """Experiments from Nsight Compute raw pages (`ncu --csv --page raw`), as `tilesim import ncu`
    makes them: a list with a dict per case (`case`, `yaml`, `skipped`, `guessed`, and `path` when
    `out_dir` is given and the case was imported). `shape`/`tile`: "MxNxK" or three integers;
    `order`: a dict or YAML; `overrides`: {key: value} set in every experiment."""
    paths = _paths(csvs)
    order_text = json.dumps(order) if isinstance(order, dict) else (order or "")
    cases = _tilesim.import_ncu(paths, arch or "", _dims(shape, "shape"), _dims(tile, "tile"), int(stages or 0),
                                order_text, dtype, family, _override_list(overrides))
    if not cases:
        raise InputError("import_ncu: the files hold no profiled case")
    if out_dir is not None:
        _write_imported(cases, out_dir)
    return cases


def _write_imported(rows, out_dir):
    """Writes each imported row's experiment to out_dir/row["file"] and sets row["path"]."""
    os.makedirs(out_dir, exist_ok=True)
    for r in rows:
        if r["yaml"]:
            r["path"] = os.path.join(out_dir, r["file"])
            with open(r["path"], "w", encoding="utf-8") as f:
                f.write(r["yaml"])


def explore(experiment, path, overrides=None, point=0, compare=None, compare_point=0):
    """`tilesim explore`: writes the launch-order explorer page (one HTML file that opens offline)
    of `experiment`'s point `point` to `path`, beside `compare`'s point `compare_point` when
    given (each a path, YAML string or dict). Returns `path`."""
    text, origin, base_dir = _experiment_text(experiment)
    ctext, corigin, cdir = _experiment_text(compare) if compare is not None else ("", "", "")
    _tilesim.explore_page(text, origin, base_dir, _override_list(overrides), int(point), ctext, corigin, cdir,
                          int(compare_point), os.fspath(path))
    return path


class Tuning:
    """A `tilesim tune` search: `.candidates` (index, label, legal, error, measured: duration_ns,
    dram_bytes, waves, last_wave_utilization or None when not simulated), `.best` (the best
    candidate or None), `.best_yaml` (the best point as an experiment, no `tune:`), `.base` (the
    experiment's own configuration), `.info` (counts and settings)."""

    def __init__(self, data):
        self.candidates = data.pop("candidates")
        b = data.pop("best")
        self.best = self.candidates[b] if b is not None else None
        self.best_yaml = data.pop("best_yaml")
        self.base = data.pop("base")
        self.info = data

    def __repr__(self):
        best = self.best["label"] if self.best else None
        return f"<tilesim.Tuning: {len(self.candidates)} candidate(s), best {best!r}>"

    def to_pandas(self):
        """A DataFrame with a row per candidate; measured figures as columns (NaN when not simulated)."""
        import pandas as pd

        rows = []
        for c in self.candidates:
            row = {k: v for k, v in c.items() if k != "measured"}
            row.update(c["measured"] or {})
            rows.append(row)
        return pd.DataFrame(rows)


def tune(experiment, overrides=None, strategy="heuristic", objective="duration", top_fraction=0.2, cache_dir=None,
         jobs=0):
    """`tilesim tune`: search the `tune:` axes of `experiment` (path, YAML string or dict).
    `cache_dir`: a folder for the persistent result cache (default none). Returns a Tuning."""
    text, origin, base_dir = _experiment_text(experiment)
    return Tuning(_tilesim.tune_text(text, origin, base_dir, _override_list(overrides), strategy, objective,
                                     float(top_fraction), os.fspath(cache_dir) if cache_dir else "", int(jobs)))


class Validation:
    """What `tilesim validate --json` writes: `.cases` (per case: measured and simulated figures,
    family, subset), `.aggregate` and `.families` (errors per subset), `.json` the whole object."""

    def __init__(self, data):
        self.json = data
        self.cases = data["cases"]
        self.aggregate = data["aggregate"]
        self.families = data.get("families", {})

    def __repr__(self):
        return f"<tilesim.Validation: {len(self.cases)} case(s)>"

    def to_pandas(self):
        """A DataFrame with a row per case: case, family, subset, and measured.* / simulated.*."""
        import pandas as pd

        rows = []
        for c in self.cases:
            row = {k: v for k, v in c.items() if not isinstance(v, (dict, list))}
            for side in ("measured", "simulated"):
                for k, v in (c.get(side) or {}).items():
                    if not isinstance(v, (dict, list)):
                        row[f"{side}.{k}"] = v
            rows.append(row)
        return pd.DataFrame(rows)


def _paths(value):
    return [os.fspath(value)] if isinstance(value, (str, os.PathLike)) else [os.fspath(p) for p in value]


def validate(measured, experiments, overrides=None, jobs=0, tie_tolerance=2.0, clock="auto", seeds=1):
    """`tilesim validate`: `measured` CSVs (Nsight Compute raw pages or case tables) against
    `experiments` (YAML files or folders), each a path or a list of them; returns a Validation.
    `clock`: "auto" simulates a case timed by Nsight Compute at the SM clock it recorded,
    "model" every case at the arch's clock (`--clock`). `seeds`: each case simulated with that
    many seeds of the per-step noise and compared by their mean (`--seeds`)."""
    return Validation(json.loads(_tilesim.validate_text(_paths(measured), _paths(experiments),
                                                        _override_list(overrides), int(jobs), float(tie_tolerance),
                                                        str(clock), int(seeds))))


def import_cutlass(csvs, arch, out_dir=None):
    """Experiments from CUTLASS profiler CSVs (`tilesim import cutlass`): a dict per GEMM row
    (`case`, `yaml`, `skipped`, `runtime_us`, and `path` when written); with `out_dir`, also
    `out_dir/measured.csv` (case, median_us) for `tilesim.validate(that file, out_dir)`."""
    rows = _tilesim.import_cutlass(_paths(csvs), arch)
    if not rows:
        raise InputError("import_cutlass: the files hold no profiled row")
    if out_dir is not None:
        if not any(r["yaml"] for r in rows):
            raise InputError("import_cutlass: no row could be imported: " + "; ".join(r["skipped"] for r in rows))
        _write_imported(rows, out_dir)
        with open(os.path.join(out_dir, "measured.csv"), "w", encoding="utf-8") as table:
            table.write(_tilesim.cutlass_table(rows))
    return rows


def run(experiment, overrides=None, jobs=0):
    """Simulates every point of `experiment` (path, YAML string or dict) with `overrides`
    ({key: value}, as --set) on up to `jobs` threads (0 = all cores); returns a Result."""
    text, origin, base_dir = _experiment_text(experiment)
    return Result(json.loads(_tilesim.run_text(text, origin, base_dir, _override_list(overrides), int(jobs), "")))


def sweep(experiment, out_dir, overrides=None, jobs=0):
    """`tilesim run EXPERIMENT --out DIR`: every point, written into `out_dir` as it finishes
    (results.jsonl, summary.json/.csv, kernels.csv; docs/sweeps.md); run again to resume, the
    finished points being skipped. Returns the Result."""
    text, origin, base_dir = _experiment_text(experiment)
    return Result(json.loads(_tilesim.run_text(text, origin, base_dir, _override_list(overrides), int(jobs),
                                               os.fspath(out_dir))))


from .triton import from_triton, prune, rank_configs  # noqa: E402  (uses run above)
