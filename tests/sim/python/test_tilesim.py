"""The Python module (sim/python): run from a path, a YAML string and a dict, overrides, sweeps,
errors as exceptions with the CLI's message, to_pandas, threads. ctest runs this with
PYTHONPATH=build/python (tests/CMakeLists.txt)."""
import json
import os
import subprocess
import threading

import pytest

import tilesim

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BINARY = os.environ.get("TILESIM_BINARY", os.path.join(ROOT, "build", "tilesim"))
GEMM = {"arch": "h100", "workload": {"kind": "gemm", "m": 1024, "n": 1024, "k": 1024, "tile": [128, 128, 64]},
        "order": {"kind": "grouped", "group_m": 8}}


def test_a_dict_runs_and_matches_the_cli_bit_for_bit(tmp_path):
    r = tilesim.run(GEMM)
    assert isinstance(r, dict) and "points" in r and json.loads(json.dumps(r))["experiment"] == r["experiment"]
    assert len(r.points) == 1
    k = r.result["kernels"][0]
    assert k["duration_ns"] > 0 and k["dram"]["read_bytes"] > 0
    path = tmp_path / "gemm.yaml"
    path.write_text(json.dumps(GEMM))
    out = tmp_path / "cli.json"
    subprocess.run([BINARY, "run", str(path), "-q", "--json", str(out)], check=True)
    cli = json.loads(out.read_text())
    assert cli["kernels"][0]["duration_ns"] == k["duration_ns"]
    assert cli["kernels"][0]["l2"] == k["l2"]


def test_path_yaml_string_and_overrides_agree():
    path = os.path.join(ROOT, "experiments", "gemm_orders.yaml")
    by_path = tilesim.run(path, overrides={"sweep": {}, "workload.m": 2048})
    with open(path, encoding="utf-8") as f:
        text = f.read()
    by_text = tilesim.run(text, overrides={"sweep": {}, "workload.m": 2048})
    assert by_path.result["kernels"][0]["duration_ns"] == by_text.result["kernels"][0]["duration_ns"]
    assert by_path.points[0]["config"]["workload"]["m"] == 2048


def test_a_sweep_gives_every_point_and_the_comparison():
    exp = dict(GEMM, sweep={"order": [{"kind": "row"}, {"kind": "grouped", "group_m": 8}]})
    r = tilesim.run(exp, jobs=2)
    assert len(r.points) == 2
    assert [p["index"] for p in r.points] == [0, 1]
    assert r.summary["groups"]
    with pytest.raises(ValueError, match="2 points"):
        r.result  # noqa: B018


def test_bad_input_is_an_input_error_naming_the_key():
    bad = {"arch": "h100", "workload": {"kind": "gemm", "m": 1024, "n": 1024, "k": 1024, "tile": [128, 128, "x"]}}
    with pytest.raises(tilesim.InputError, match=r"workload\.tile"):
        tilesim.run(bad)
    with pytest.raises(ValueError):  # InputError is a ValueError
        tilesim.run(GEMM, overrides={"workload.kind": "nonsense"})
    with pytest.raises(tilesim.InputError, match="no such experiment file"):
        tilesim.run("missing_file.yaml")
    with pytest.raises(TypeError):
        tilesim.run(42)


def test_to_pandas_has_a_row_per_point_and_kernel():
    pd = pytest.importorskip("pandas")
    exp = dict(GEMM, sweep={"workload.m": [512, 1024]})
    kernels, totals = tilesim.run(exp).to_pandas()
    assert isinstance(kernels, pd.DataFrame)
    assert len(kernels) == 2 and len(totals) == 2
    assert "duration_ns" in kernels.columns and "dram.read_bytes" in kernels.columns
    assert list(kernels["axis.workload.m"]) == ["512", "1024"]
    assert (kernels["duration_ns"] > 0).all()


def test_threads_run_experiments_side_by_side_with_the_same_answers():
    want = tilesim.run(GEMM).result["kernels"][0]["duration_ns"]
    got = []
    threads = [threading.Thread(target=lambda: got.append(tilesim.run(GEMM, jobs=1).result["kernels"][0]["duration_ns"]))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [want] * 3


CONFIGS = [
    {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8, "num_warps": 4, "num_stages": 4},
    {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8, "num_warps": 8, "num_stages": 3},
    {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1, "num_warps": 8, "num_stages": 3},
]


class FakeConfig:  # the attributes of triton.Config that from_triton reads
    def __init__(self, kwargs, num_warps, num_stages):
        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages


def test_from_triton_maps_a_config_to_the_tutorial_kernel():
    e = tilesim.from_triton(CONFIGS[2:], 4096, 4096, 4096)[0]
    w = e["workload"]
    assert w["tile"] == [128, 256, 64] and w["stages"] == 3 and w["threads"] == 256
    assert w["shared_memory_bytes"] == 147456  # what Triton 3 allocates (calibration/production)
    assert e["order"] == {"kind": "row"}
    assert tilesim.from_triton(CONFIGS[:1], 64, 64, 64)[0]["order"] == {"kind": "grouped", "group_m": 8}
    fake = FakeConfig({k: v for k, v in CONFIGS[1].items() if k.isupper()}, 8, 3)
    assert tilesim.from_triton([fake], 1, 2, 3)[0]["workload"]["tile"] == [128, 128, 64]
    with pytest.raises(ValueError, match="BLOCK_SIZE_N"):
        tilesim.from_triton([{"BLOCK_SIZE_M": 64, "BLOCK_SIZE_K": 64}], 64, 64, 64)


def test_rank_configs_orders_by_the_simulated_time_and_prune_keeps_the_fastest():
    ranked = tilesim.rank_configs(CONFIGS, 2048, 2048, 2048)
    times = [ns for _, ns in ranked]
    assert times == sorted(times) and len(ranked) == 3
    # Each figure is the simulator's own for that experiment.
    c, ns = ranked[0]
    e = tilesim.from_triton([c], 2048, 2048, 2048)[0]
    assert tilesim.run(e).result["kernels"][0]["duration_ns"] == ns
    hook = tilesim.prune(keep=2)
    kept = hook(CONFIGS, {"M": 2048, "N": 2048, "K": 2048})
    assert kept == [c for c, _ in ranked[:2]]
    # A config that cannot launch (shared memory over the H100's 227 KB) is dropped by the hook,
    # named by rank_configs.
    too_big = dict(CONFIGS[2], num_stages=6)
    assert too_big not in hook(CONFIGS + [too_big], {"M": 2048, "N": 2048, "K": 2048})
    with pytest.raises(tilesim.InputError, match="config 3"):
        tilesim.rank_configs(CONFIGS + [too_big], 2048, 2048, 2048)
    with pytest.raises(ValueError, match="no argument 'M'"):
        hook(CONFIGS, {"m": 1})


def test_import_ncu_on_the_committed_pages_runs_as_written_by_hand(tmp_path):
    ncu = os.path.join(ROOT, "calibration", "measurements", "h100", "ncu")
    cases = tilesim.import_ncu(ncu, out_dir=tmp_path, tile=(64, 128, 32), stages=3,
                               overrides={"workload.layout": {"a": "row", "b": "col", "c": "row"},
                                          "workload.mainloop": {"kind": "mma_sync", "fragments": "single"}})
    by_case = {c["case"]: c for c in cases}
    assert "2 kernels" in by_case["ffn_16_stream"]["skipped"]  # chains are written by hand
    c = by_case["gemm_128x14336x4096_grouped8"]
    assert c["skipped"] == "" and os.path.isfile(c["path"])
    assert any("from the case name" in g for g in c["guessed"])
    imported = tilesim.run(c["path"]).result["kernels"][0]
    by_hand = tilesim.run(os.path.join(ROOT, "calibration", "experiments", "gemm_128x14336x4096_grouped8.yaml"))
    assert imported["duration_ns"] == by_hand.result["kernels"][0]["duration_ns"]
    assert imported["l2"] == by_hand.result["kernels"][0]["l2"]
    with pytest.raises(tilesim.InputError, match="tile"):
        tilesim.import_ncu(ncu, tile="64x128")


def test_validate_matches_the_cli_and_tabulates(tmp_path):
    measured = os.path.join(ROOT, "calibration", "measurements", "h100", "ncu")
    exps = [os.path.join(ROOT, "calibration", "experiments", f"gemm_16x14336x4096_{o}.yaml") for o in ("row", "grouped8")]
    v = tilesim.validate(measured, exps)
    assert len(v.cases) == 2
    subprocess.run([BINARY, "validate", "-q", "-m", measured, "-e", *exps, "--json", str(tmp_path / "v.json")],
                   check=True, capture_output=True)
    cli = json.loads((tmp_path / "v.json").read_text())
    assert v.aggregate == cli["aggregate"]
    df = v.to_pandas()
    assert {"case", "measured.duration_ns", "simulated.duration_ns"} <= set(df.columns)
    with pytest.raises(tilesim.InputError):
        tilesim.validate(measured, exps, overrides={"workload.tile": "x"})
    # Nsight Compute durations only: simulated at the clock it recorded, or the arch's with "model".
    assert all(c["clock_source"] == "measured" for c in v.cases)
    model = tilesim.validate(measured, exps, clock="model")
    assert all(c["clock_source"] == "model" for c in model.cases)
    assert model.cases[0]["simulated_clock_mhz"] > v.cases[0]["simulated_clock_mhz"]
    with pytest.raises(tilesim.InputError, match="clock"):
        tilesim.validate(measured, exps, clock="fixed")
    # Two seeds: their mean, and each figure's range around it.
    two = tilesim.validate(measured, exps, seeds=2)
    for c in two.cases:
        assert c["seeds"] == 2
        assert c["simulated_min"]["duration_ns"] <= c["simulated"]["duration_ns"] <= c["simulated_max"]["duration_ns"]
    with pytest.raises(tilesim.InputError, match="seeds"):
        tilesim.validate(measured, exps, seeds=0)


def test_tune_finds_the_best_candidate_and_returns_it_as_an_experiment():
    exp = dict(GEMM, tune={"order": [{"kind": "row"}, {"kind": "grouped", "group_m": 8}],
                           "workload.tile": [[64, 64, 64], [128, 128, 64]]})
    t = tilesim.tune(exp, strategy="exhaustive")
    assert len(t.candidates) == 4 and t.best is not None
    simulated = [c for c in t.candidates if c["measured"]]
    assert t.best["measured"]["duration_ns"] == min(c["measured"]["duration_ns"] for c in simulated)
    again = tilesim.run(t.best_yaml).result["kernels"][0]["duration_ns"]
    assert again == t.best["measured"]["duration_ns"]
    assert len(t.to_pandas()) == 4
    with pytest.raises(tilesim.InputError, match="strategy"):
        tilesim.tune(exp, strategy="fastest")


def test_explore_writes_the_page_the_cli_writes(tmp_path):
    exp = os.path.join(ROOT, "experiments", "explore_gemm_3x3.yaml")
    page = tilesim.explore(exp, tmp_path / "p.html")
    subprocess.run([BINARY, "explore", exp, "-o", str(tmp_path / "cli.html"), "-q"], check=True)
    assert (tmp_path / "p.html").read_bytes() == (tmp_path / "cli.html").read_bytes()
    assert os.fspath(page).endswith("p.html")
    with pytest.raises(tilesim.InputError, match="out of range"):
        tilesim.explore(exp, tmp_path / "q.html", point=99)


def test_sweep_writes_the_output_folder_and_resumes(tmp_path):
    exp = dict(GEMM, sweep={"workload.m": [512, 1024]})
    first = tilesim.sweep(exp, tmp_path / "out")
    assert (tmp_path / "out" / "summary.json").is_file() and (tmp_path / "out" / "kernels.csv").is_file()
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 2
    again = tilesim.sweep(exp, tmp_path / "out")  # resumed: nothing simulated again, same figures
    assert [p["result"] for p in again.points] == [p["result"] for p in first.points]
    assert (tmp_path / "out" / "results.jsonl").read_text().splitlines() == lines


def test_import_cutlass_writes_experiments_that_validate(tmp_path):
    data = os.path.join(ROOT, "tests", "data", "cutlass", "profiler_gemm.csv")
    rows = tilesim.import_cutlass(data, "h100", out_dir=tmp_path)
    assert sum(1 for r in rows if r["yaml"]) == 4 and sum(1 for r in rows if r["skipped"]) == 1
    v = tilesim.validate(tmp_path / "measured.csv", tmp_path)
    assert len(v.cases) == 4
    with pytest.raises(tilesim.InputError, match="arch"):
        tilesim.import_cutlass(data, "")


def test_the_notebook_runs_on_a_small_problem():
    path = os.path.join(ROOT, "examples", "triton_autotune.ipynb")
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    try:  # Debian's python3-nbformat, where installed, checks the notebook's schema
        import nbformat
        nbformat.validate(nbformat.reads(json.dumps(nb), as_version=4))
    except ImportError:
        pass
    import matplotlib
    matplotlib.use("Agg")
    scope = {"SMALL": True, "__name__": "notebook"}
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                exec("".join(cell["source"]), scope)  # noqa: S102 (the repository's own notebook)
    finally:
        os.chdir(cwd)
    assert len(scope["kept"]) == 4 and len(scope["df"]) > 0


def test_review_findings_stay_fixed(tmp_path):
    # Names that are not UTF-8, or that would leave the output folder, come back usable.
    table = tmp_path / "t.csv"
    table.write_bytes("case,launch__block_size,median_us\n../escape_64x64x64,256,10\nbad\xe9_64x64x64,256,10\n"
                      .encode("latin-1"))
    rows = tilesim.import_ncu(str(table), out_dir=tmp_path / "out", arch="h100", tile="64x64x32")
    for r in rows:
        assert "/" not in r["file"] and not r["file"].startswith(".")
        assert os.path.dirname(os.path.abspath(r["path"])) == os.path.abspath(tmp_path / "out")
    assert any("\ufffd" in r["case"] for r in rows)
    with pytest.raises(tilesim.InputError, match="stages"):
        tilesim.import_ncu(str(table), arch="h100", tile="64x64x32", stages=1000)
    with pytest.raises(tilesim.InputError):
        tilesim.import_ncu([])
    with pytest.raises(tilesim.InputError, match="no such experiment file"):
        tilesim.run("experiments/typo")
    # prune never leaves Triton without a config.
    bad = dict(CONFIGS[2], num_stages=9)
    assert tilesim.prune(keep=1)([bad, bad], {"M": 64, "N": 64, "K": 64}) == [bad, bad]
    with pytest.raises(ValueError, match="GROUP_SIZE_M"):
        tilesim.from_triton([dict(CONFIGS[0], GROUP_SIZE_M="8")], 64, 64, 64)
    # The cutlass table is the CLI's, to the last digit.
    rows = tilesim.import_cutlass(os.path.join(ROOT, "tests", "data", "cutlass", "profiler_gemm.csv"), "h100",
                                  out_dir=tmp_path / "c")
    subprocess.run([BINARY, "import", "cutlass", os.path.join(ROOT, "tests", "data", "cutlass", "profiler_gemm.csv"),
                    "-o", str(tmp_path / "cli"), "--arch", "h100"], check=True, capture_output=True)
    assert (tmp_path / "c" / "measured.csv").read_text() == (tmp_path / "cli" / "measured.csv").read_text()
