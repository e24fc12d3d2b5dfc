"""bench/gemmalone-56.sh (issue 56's table, run on GPU machines lent by the
minute) and bench/gemmalone_table.py, its table, without a GPU: the script
run with a stand-in gemmalone that records its arguments, the table on
recorded and made-up CSVs."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_bench_scripts import DEVICE_CALL_S, ROOT


def _bench_script(script: str, *args: str) -> subprocess.CompletedProcess:
    """Runs the Python script bench/SCRIPT as CI would, output captured."""
    return subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], capture_output=True, text=True)


def _gemmalone_table(*args: str) -> str:
    done = _bench_script("gemmalone_table.py", *args)
    done.check_returncode()
    return done.stdout


@pytest.mark.parametrize("a,b,want", [(1.1, 1.0, 1.1), (None, 1.0, None), (1.0, None, None), (1.0, 0.0, None),
                                       (0.0, 2.0, 0.0)])
def test_over_is_missing_where_either_ratio_is(a, b, want):
    """The planned judges' tile-over-tile ratio: a missing or zero denominator gives no ratio, never 0 or an error."""
    sys.path.insert(0, str(ROOT / "bench"))
    import gemmalone_table
    assert gemmalone_table.over(a, b) == want


def test_gemmalone_table_on_a_recorded_run():
    """bench/gemmalone_table.py on the sustained CSV of 2026-11-28 (4 x
    H100, make bench-gpu's gemmalone part): cuBLASLt's fastest algorithm,
    the best tile and the default (no '# default' lines then: the script's
    own record of gpu.DefaultTile) per shape."""
    out = _gemmalone_table(str(ROOT / "bench/results/2026-11-28-h100x4-bench-gpu/gemmalone/gemmalone-sustained.csv"))
    assert ("| 4096x1792x4096 | bf16 | 98.5 (algo2) | 128x224:s5:c2:g4 | 1.034 | 640 (65%) | 128x256:s4:c2:g8:cl2 | "
            "0.939 | +10.1% | **no** |") in out, out
    assert ("| 8192x3584x8192 | bf16 | 701.6 (algo0) | 128x256:s4:c2:g8:cl2 | 0.987 | 672 (68%) | 128x256:s4:c2:g8:cl2 "
            "| 0.987 | +0.0% | yes |") in out, out
    assert "M 4096: 128x224:s5:c2:g4; M 8192-16384: 128x256:s4:c2:g8:cl2" in out, out


def test_gemmalone_table_reads_defaults_and_appended_runs(tmp_path: Path):
    """Two processes' output appended into one file (bench/gemmalone-56.sh):
    each shape's '# default' line names its default, a tile measured twice
    counts with the geometric mean of its ratios, a WRONG tile has no time,
    and the rule takes the tile within 3% of the best on the most shapes."""
    head = ("# NVIDIA H200, 132 SMs, bf16, each kernel 500ms back to back\n"
            "shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt,dtype,cublaslt_fp8_us,ratio_to_cublaslt_fp8\n")

    def run(shape: str, lt: float, tiles: dict) -> str:
        rows = [f"{shape},cublaslt,algo0,-,1.66e-03,{lt},1,-,bf16,-,-", f"{shape},cublaslt,algo1,-,1.66e-03,{lt + 5},1,-,bf16,-,-",
                f"# default {shape} bf16: 128x256:s4:c2:g8:cl2"]
        for tile, ratio in tiles.items():
            if ratio is None:
                rows.append(f"{shape},fused,{tile},0,1.00e+00,-,-,WRONG,bf16,-,-")
                continue
            for r in ratio if isinstance(ratio, tuple) else (ratio,):
                rows.append(f"{shape},fused,{tile},0,1.66e-03,{lt / r:.1f},1,{r:.3f} (cublaslt algo0 {lt}/{lt}; grid 132),bf16,-,-")
        return head + "\n".join(rows) + "\n"
    csv = tmp_path / "gemmalone-bf16.csv"
    csv.write_text(run("64x14336x4096", 30.0, {"128x256:s4:c2:g8:cl2": 0.65, "64x256:s5:c2:g8:pp": (0.93, 0.97),
                                               "64x128:s6:c2:g8:pp": 0.96, "128x128:s6:c2:g4:pp": None}) +
                   run("64x8192x8192", 40.0, {"128x256:s4:c2:g8:cl2": 0.70, "64x256:s5:c2:g8:pp": 0.90,
                                              "64x128:s6:c2:g8:pp": 0.99}) +
                   run("8192x3584x8192", 600.0, {"128x256:s4:c2:g8:cl2": 0.98, "64x256:s5:c2:g8:pp": 0.90}))
    out = _gemmalone_table(str(csv))
    # 64x256's two ratios: sqrt(0.93 * 0.97) = 0.950.
    assert "| 64x14336x4096 | bf16 | 30.0 (algo0) | 64x128:s6:c2:g8:pp | 0.960 |" in out, out
    assert "| 128x256:s4:c2:g8:cl2 | 0.650 | +47.7% | **no** |" in out, out
    assert "| bf16 | 64 | 2 | 64x128:s6:c2:g8:pp | 2/2 | +0.0% | 128x256:s4:c2:g8:cl2 | 0/2 | +47.7% |" in out, out
    assert "M 64: 64x128:s6:c2:g8:pp; M 8192: 128x256:s4:c2:g8:cl2" in out, out
    assert "64x14336x4096 bf16 128x128:s6:c2:g4:pp: WRONG" in out, out
    # The first bar's count: best tiles 0.960, 0.990, 0.980 (none at 1.00x,
    # median 0.980); the defaults 0.650, 0.700, 0.980.
    assert "| bf16 | 3 | 0 | 0 | 0.980 | 0 | 0 | 0.700 |" in out, out


def test_gemmalone_table_costs_the_reduce_scatter_rows(tmp_path: Path):
    """gemmalone -rs's rows ("rs": rows by TMA stores, "rs-regs": by each
    warp's stores) are the tile again as a one-rank reduce-scatter: costed
    over the plain row just before them, each round apart, and never a
    candidate for the best tile or the rule, whatever their ratio."""
    head = ("# NVIDIA H200, 132 SMs, bf16, each kernel 200ms back to back\n"
            "shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt,dtype,cublaslt_fp8_us,ratio_to_cublaslt_fp8\n")
    rows = ["8192x3584x8192,cublaslt,algo0,-,1.66e-03,700.0,1,-,bf16,-,-",
            "# default 8192x3584x8192 bf16: 128x256:s4:c2:g8:cl2"]
    for plain, rs, regs in ((700.0, 707.0, 780.0), (690.0, 724.5, 700.0)):
        rows += [f"8192x3584x8192,fused,128x256:s4:c2:g8:cl2,0,1.66e-03,{plain},1,0.980 (cublaslt algo0 686/686; grid 132),bf16,-,-",
                 f"8192x3584x8192,fused,128x256:s4:c2:g8:cl2,rs,1.66e-03,{rs},1,0.970 (reduce-scatter epilogue),bf16,-,-",
                 f"8192x3584x8192,fused,128x256:s4:c2:g8:cl2,rs-regs,1.66e-03,{regs},1,1.200 (reduce-scatter epilogue),bf16,-,-"]
    rows.append("8192x3584x8192,fused,128x128:s6:c2:g4:pp,rs,1.00e+00,-,-,WRONG,bf16,-,-")
    csv = tmp_path / "gemmalone-bf16.csv"
    csv.write_text(head + "\n".join(rows) + "\n")
    out = _gemmalone_table(str(csv))
    assert "| 8192x3584x8192 | bf16 | 700.0 (algo0) | 128x256:s4:c2:g8:cl2 | 0.980 |" in out, out
    assert "| bf16 | 8192 | 1 | 128x256:s4:c2:g8:cl2 | 1/1 |" in out, out
    assert "| 8192x3584x8192 | bf16 | 128x256:s4:c2:g8:cl2 | +1.0%, +5.0% | +11.4%, +1.4% | **no** |" in out, out
    assert "8192x3584x8192 bf16 128x128:s6:c2:g4:pp rs: WRONG" in out, out


def test_gemmalone_56_fits_one_device_call():
    """bench/gemmalone-56.sh, every SET: no shape starts after DEADLINE and
    each runs under what is left, so the compile pass aside (also under
    what is left) it ends by DEADLINE plus timeout's grace and the table's
    20 s: within one device call."""
    text = (ROOT / "bench" / "gemmalone-56.sh").read_text()
    deadlines = [int(x) for x in re.findall(r"DEADLINE=\$\{DEADLINE:-(\d+)\}", text)]
    assert len(deadlines) == 3 and max(deadlines) + 20 + 10 <= DEVICE_CALL_S, deadlines
    assert "left < PER_SHAPE ? left : PER_SHAPE" in text and "left < 90 ? left : 90" in text


def _run_gemmalone_56(tmp_path: Path, **env: str) -> list[list[str]]:
    """bench/gemmalone-56.sh with a stand-in gemmalone that records its
    arguments: the timed calls' argument lists, in order."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.txt"
    fake = bin_dir / "gemmalone"
    fake.write_text(f'#!/bin/bash\necho "$*" >> {calls}\n')
    fake.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "BIN": str(bin_dir), "OUT": str(tmp_path / "out"), "DTYPES": "bf16",
           "SUSTAIN": "0.1s", **env}
    subprocess.run(["bash", str(ROOT / "bench" / "gemmalone-56.sh")], env=env, check=True, capture_output=True,
                   cwd=ROOT)
    return [line.split() for line in calls.read_text().splitlines() if "-sustain" in line]


def test_gemmalone_56_rounds_reverse_the_tiles(tmp_path: Path):
    """bench/gemmalone-56.sh ROUNDS=3: each shape three times in a row, the
    listed tiles' order reversed in the second round (paired rounds), run
    here with a stand-in gemmalone that records its arguments."""
    timed = _run_gemmalone_56(tmp_path, SHAPES="64x128x256 128x256x512", TILES="a:s1,b:s2,c:s3", ROUNDS="3")
    got = [(a[a.index("-shapes") + 1], a[a.index("-tiles") + 1]) for a in timed]
    fwd, rev = "a:s1,b:s2,c:s3", "c:s3,b:s2,a:s1"
    assert got == [("64x128x256", fwd), ("64x128x256", rev), ("64x128x256", fwd),
                   ("128x256x512", fwd), ("128x256x512", rev), ("128x256x512", fwd)], got


def test_gemmalone_56_balanced_rounds_time_the_kernel_outside(tmp_path: Path):
    """bench/gemmalone-56.sh BALANCED=1 ROUNDS=3: the even round also passes
    -kernel-outside (the tile timed around the references), the odd ones
    do not; without BALANCED no round does."""
    def outside(run: str, **env: str) -> list[bool]:
        (tmp_path / run).mkdir()
        calls = _run_gemmalone_56(tmp_path / run, SHAPES="64x128x256", TILES="a:s1,b:s2", ROUNDS="3", **env)
        return ["-kernel-outside" in a for a in calls]
    assert outside("on", BALANCED="1") == [False, True, False]
    assert outside("off") == [False, False, False]


def test_gemmalone_56_survey_reaches_every_timed_call(tmp_path: Path):
    """bench/gemmalone-56.sh SURVEY=0.5s: every timed call passes
    -survey-sustain=0.5s beside its -sustain; without SURVEY none does."""
    def surveys(run: str, **env: str) -> list[str]:
        (tmp_path / run).mkdir()
        calls = _run_gemmalone_56(tmp_path / run, SHAPES="64x128x256 128x256x512", TILES="a:s1", ROUNDS="2", **env)
        return [next((x for x in a if x.startswith("-survey-sustain")), "") for a in calls]
    assert surveys("on", SURVEY="0.5s") == ["-survey-sustain=0.5s"] * 4
    assert surveys("off") == [""] * 4


def test_gemmalone_56_bar_times_as_the_bar_is_judged(tmp_path: Path):
    """bench/gemmalone-56.sh SET=bar: the untuned tile, every product in 2 s
    windows whatever SUSTAIN says, two rounds a shape with the second timing
    the tile outside the reference, FP8 lean, and cuBLASLt's algorithms
    surveyed in 0.5 s windows except for row scales (one algorithm; their
    sustained counts ran without)."""
    calls = _run_gemmalone_56(tmp_path, SET="bar", SHAPES="64x128x256 128x256x512", DTYPES="bf16 e4m3 e4m3_row")
    got = [(a[a.index("-dtype") + 1], a[a.index("-shapes") + 1], a[a.index("-tiles") + 1], a[a.index("-sustain") + 1],
            "-kernel-outside" in a, "-fp8-ref-only" in a, next((x for x in a if x.startswith("-survey-sustain")), ""))
           for a in calls]
    want = []
    for dt in ("bf16", "e4m3", "e4m3_row"):
        survey = "" if dt == "e4m3_row" else "-survey-sustain=0.5s"
        for shape in ("64x128x256", "128x256x512"):
            for outside in (False, True):
                want.append((dt, shape, "default", "2s", outside, dt != "bf16", survey))
    assert got == want, got
    assert (tmp_path / "out" / "gemmalone-56-bar-1of1").is_dir()


def test_gemmalone_56_bar_window_is_set_apart_from_sustain(tmp_path: Path):
    """bench/gemmalone-56.sh SET=bar: SUSTAIN leaves the 2 s windows alone;
    BAR_WINDOW (a planned check of another window) sets them."""
    def windows(run: str, **env: str) -> set[str]:
        (tmp_path / run).mkdir()
        calls = _run_gemmalone_56(tmp_path / run, SET="bar", SHAPES="64x128x256", DTYPES="bf16", **env)
        return {a[a.index("-sustain") + 1] for a in calls}
    assert windows("sustain", SUSTAIN="0.2s") == {"2s"}
    assert windows("window", BAR_WINDOW="1s") == {"1s"}


@pytest.mark.parametrize("ratios, verdict", [
    ((1.06, 1.00), "2 at or above 1.00x (the bar: 2), 1 at 1.05x (the bar: 1): met"),
    ((1.20, 0.99), "1 at or above 1.00x (the bar: 2), 1 at 1.05x (the bar: 1): not met"),
    ((1.04, 1.00, 1.01), "3 at or above 1.00x (the bar: 3), 0 at 1.05x (the bar: 2): not met"),
])
def test_gemmalone_table_reads_off_the_first_bar(tmp_path: Path, ratios: tuple[float, ...], verdict: str):
    """gemmalone_table.py says whether the untuned tile's rows meet issue
    56's first bar: 1.00x on every shape and 1.05x on half (rounded up)."""
    rows = []
    for i, r in enumerate(ratios):
        shape = f"{64 * (i + 1)}x128x256"
        rows.append(f"{shape},cublaslt,algo0,-,1.0e-03,10.0,1,-,bf16,-,-\n")
        rows.append(f"{shape},fused,a:s1,0,1.0e-03,{10.0 / r:.2f},1,{r:.3f} (cublaslt algo0 10.0/10.0; grid 132),bf16,-,-\n")
    f = tmp_path / "run.csv"
    f.write_text("# NVIDIA H100 80GB HBM3, 132 SMs, bf16, each kernel 2s back to back\n"
                 "shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt,dtype,cublaslt_fp8_us,ratio_to_cublaslt_fp8\n"
                 + "".join(rows))
    out = _gemmalone_table(str(f), "--default", "a:s1")
    assert f"- bf16, the untuned tile on {len(ratios)} shapes: {verdict}" in out, out


def test_tables_refuse_a_shape_of_two_cards(tmp_path: Path):
    """gemmalone_table.py and gemm_headroom.py on an H100 run's CSV and an
    H200 run's of the same shape: one line naming both cards and exit code
    2, not a ratio averaged over two cards."""
    row = "64x128x256,fused,a:s1,0,1.0e-03,10.0,1,1.000 (cublaslt algo0 10.0/10.0; grid 132),bf16,-,-\n"
    files = []
    for card in ("H100 80GB HBM3", "H200"):
        f = tmp_path / f"{card.split()[0]}.csv"
        f.write_text(f"# NVIDIA {card}, 132 SMs, bf16, each kernel 200ms back to back\n"
                     "shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt,dtype,cublaslt_fp8_us,ratio_to_cublaslt_fp8\n"
                     "64x128x256,cublaslt,algo0,-,1.0e-03,10.0,1,-,bf16,-,-\n" + row)
        files.append(str(f))
        assert _bench_script("gemmalone_table.py", str(f)).returncode == 0
    for script in ("gemmalone_table.py", "gemm_headroom.py"):
        done = _bench_script(script, *files)
        assert done.returncode == 2, (script, done.stdout, done.stderr)
        assert "H100" in done.stderr and "H200" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_gemmalone_56_times_long_products_in_long_windows(tmp_path: Path):
    """bench/gemmalone-56.sh times a product of LONG_GFLOP or more in
    LONG_SUSTAIN windows (its ratio moved with a 0.2 s window on 1 x H200),
    every other one in SUSTAIN's: by FLOPs, at the boundary too."""
    # 2 x 1000 x 1000 x 1250 = 2.5e9 FLOP: at LONG_GFLOP 2.5, long.
    timed = _run_gemmalone_56(tmp_path, SHAPES="16384x8192x28672 64x128x256 1000x1000x1250 1000x1000x1249",
                              TILES="a:s1", LONG_SUSTAIN="3s", LONG_GFLOP="2.5")
    got = [(a[a.index("-shapes") + 1], a[a.index("-sustain") + 1]) for a in timed]
    assert got == [("16384x8192x28672", "3s"), ("64x128x256", "0.1s"), ("1000x1000x1250", "3s"),
                   ("1000x1000x1249", "0.1s")], got


def test_gemmalone_56_fp8_ref_only_in_fp8_runs_alone(tmp_path: Path):
    """bench/gemmalone-56.sh FP8_REF_ONLY=1: FP8 runs' timed calls pass
    -fp8-ref-only, bf16 runs' do not; without it no run does."""
    def flags(run: str, **env: str) -> dict[str, bool]:
        (tmp_path / run).mkdir()
        calls = _run_gemmalone_56(tmp_path / run, SHAPES="64x128x256", TILES="a:s1", DTYPES="bf16 e4m3 e4m3_row", **env)
        return {a[a.index("-dtype") + 1]: "-fp8-ref-only" in a for a in calls}
    assert flags("on", FP8_REF_ONLY="1") == {"bf16": False, "e4m3": True, "e4m3_row": True}
    assert flags("off") == {"bf16": False, "e4m3": False, "e4m3_row": False}


def test_gemmalone_table_reads_fp8_rows_without_the_bf16_ratio(tmp_path: Path):
    """gemmalone -fp8-ref-only writes '-' for the ratio to cuBLASLt bf16
    (its note names cuBLASLt FP8's times): the table reads the ratio to
    cuBLASLt FP8, as with both references."""
    csv = tmp_path / "gemmalone-e4m3.csv"
    csv.write_text("# NVIDIA H100 80GB HBM3, 132 SMs, e4m3, each kernel 200ms back to back\n"
                   "shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt,dtype,cublaslt_fp8_us,ratio_to_cublaslt_fp8\n"
                   "4096x8192x8192,cublaslt-fp8,algo0,0,2.5e-03,400.0,1374,-,e4m3,-,-\n"
                   "4096x8192x8192,fused,128x256:s4:c2:g8:cl2,0,2.5e-03,380.0,1447,"
                   "- (cublaslt-fp8 algo0 399.0/401.0; grid 132),e4m3,400.0,1.053\n")
    out = _gemmalone_table(str(csv))
    assert "| 4096x8192x8192 | e4m3 |" in out and "1.053" in out, out


def test_gemmalone_table_names_what_limits_the_best_tile(tmp_path: Path):
    """The limit column: HBM where the shape's least bytes take longer at
    the run's GPU's bandwidth than its multiply-adds at the peak (with the
    share of the bandwidth the tile reached), else the tensor cores, with
    the last wave where its tiles leave it under 90% full."""
    def run(gpu: str, rows: list) -> str:
        return (f"# NVIDIA {gpu}, 132 SMs, bf16, each kernel 200ms back to back\n"
                "shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt,dtype,cublaslt_fp8_us,ratio_to_cublaslt_fp8\n"
                + "\n".join(rows) + "\n")

    def row(shape: str, tile: str, us: float) -> str:
        return f"{shape},fused,{tile},0,1.66e-03,{us},1,1.000 (cublaslt algo0 {us}/{us}; grid 132),bf16,-,-"
    csv = tmp_path / "gemmalone-bf16.csv"
    # 64 x 8192 x 8192: 136 MB at least, 28.3 µs at 4.8 TB/s, 8.7 µs of
    # multiply-adds; 8192 x 3584 x 8192: 896 tiles of 128x256 in 7 waves
    # (the last 104 of 132: 97% of the waves filled); 8192 x 8192 x 8192:
    # 2,048 tiles, but stream-K shares the last wave out; 4096 x 1280 x 8192
    # with 128x256: 160 tiles in 2 waves, 61%.
    csv.write_text(run("H200 (141 GB)", [row("64x8192x8192", "64x64:s10:c2:g8:pp", 35.4),
                                         row("8192x3584x8192", "128x256:s4:c2:g8:cl2", 700.0),
                                         row("8192x8192x8192", "128x256:s4:c2:g8:st", 1600.0)]) +
                   run("H100 80GB HBM3", [row("64x14336x4096", "64x128:s8:c2:g8:pp", 45.0),
                                          row("4096x1280x8192", "128x256:s4:c2:g8", 100.0)]))
    out = _gemmalone_table(str(csv))
    # 136.3 MB in 35.4 µs: 3.85 TB/s, 80% of 4.8.
    assert "| 64x8192x8192 | bf16 |" in out and "| memory: 80% of 4.8 TB/s |" in out, out
    assert "| 8192x3584x8192 | bf16 | - | 128x256:s4:c2:g8:cl2 | 1.000 | 687 (69%) | 128x256:s4:c2:g8:cl2 | 1.000 | +0.0% | yes | tensor |" in out, out
    assert "| tensor (stream-K) |" in out, out
    assert "Counts above mix cards: H100 2 shapes, H200 3 shapes." in out, out
    # The H100's run: 119.6 MB at least in 45 µs, 2.66 TB/s, 79% of 3.35.
    assert "| memory: 79% of 3.4 TB/s |" in out, out
    assert "| tensor; 2 waves, the last 28/132 |" in out, out


def test_ab_gemmalone_alternates_the_builds(tmp_path: Path):
    """bench/experiments/ab-gemmalone.sh: each shape ROUNDS times by each
    build, A first in odd rounds and B first in even ones, with the same
    dtype, tiles and window, each build's rows in its own CSV."""
    calls = tmp_path / "calls.txt"
    bins = {}
    for build in "AB":
        d = tmp_path / build / "bin"
        d.mkdir(parents=True)
        fake = d / "gemmalone"
        fake.write_text(f'#!/bin/bash\necho "{build} $*" >> {calls}\necho "row {build}"\n')
        fake.chmod(0o755)
        bins[build] = str(d)
    env = {"PATH": "/usr/bin:/bin", "BIN_A": bins["A"], "BIN_B": bins["B"], "OUT": str(tmp_path / "out"),
           "SHAPES": "64x128x256 128x256x512", "TILES": "t1,t2", "ROUNDS": "3", "DTYPE": "e4m3_row", "SUSTAIN": "0.1s"}
    subprocess.run(["bash", str(ROOT / "bench" / "experiments" / "ab-gemmalone.sh")], env=env, check=True,
                   capture_output=True, cwd=ROOT)
    got = [line.split() for line in calls.read_text().splitlines()]
    assert [(a[0], a[a.index("-shapes") + 1]) for a in got] == [
        (b, s) for s in ("64x128x256", "128x256x512") for b in "ABBAAB"], got
    assert all(a[a.index("-dtype") + 1] == "e4m3_row" and a[a.index("-tiles") + 1] == "t1,t2"
               and a[a.index("-sustain") + 1] == "0.1s" for a in got), got
    assert (tmp_path / "out/ab/A.csv").read_text() == "row A\n" * 6


def _ab_table(*args: str) -> subprocess.CompletedProcess:
    return _bench_script("experiments/ab_table.py", *args)


def test_ab_table_compares_builds(tmp_path):
    """bench/experiments/ab_table.py: per shape and tile timed by both
    builds, each round's ratio (FP8: to cuBLASLt FP8, the last column) and
    time, B's mean time over A's, and the checks' errors; a tile only one
    build timed is left out."""
    head = "shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt,dtype,cublaslt_fp8_us,ratio_to_cublaslt_fp8\n"
    a = tmp_path / "A.csv"
    a.write_text("# a comment\n" + head
                 + "64x128x256,cublaslt-fp8,algo0,-,1e-03,5.0,1,-,e4m3,-,-\n"
                 + "64x128x256,fused,t1,0,1.70e-03,10.0,1,2.0 (cublaslt),e4m3,9.0,0.900\n"
                 + "64x128x256,fused,t1,0,1.70e-03,12.0,1,2.0 (cublaslt),e4m3,9.0,0.750\n"
                 + "64x128x256,fused,t2,0,1.70e-03,20.0,1,2.0 (cublaslt),e4m3,9.0,0.450\n")
    b = tmp_path / "B.csv"
    b.write_text(head + "64x128x256,fused-plain,t1,0,1.70e-03,9.9,1,2.0 (cublaslt),e4m3,9.0,0.909\n"
                 + "64x128x256,fused,t1,0,1.70e-03,9.9,1,2.0 (cublaslt),e4m3,9.0,0.909\n"
                 + "128x128x128,fused,t1,0,2.00e-03,4.0,1,1.100 (cublaslt),bf16,-,-\n")
    got = _ab_table(str(a), str(b))
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[2] == "| 64x128x256 | t1 | 0.900/10.0 0.750/12.0 | 0.909/9.9 0.909/9.9 | 0.900 | 1.70e-03; 1.70e-03 |", lines
    assert len(lines) == 3, lines  # t2 (A only) and 128x128x128 (B only) left out
    c = tmp_path / "C.csv"
    c.write_text(head + "128x128x128,fused,t1,0,2.00e-03,5.0,1,0.880 (cublaslt),bf16,-,-\n")
    assert "| 128x128x128 | t1 | 0.880/5.0 | 1.100/4.0 | 0.800 |" in _ab_table(str(c), str(b)).stdout
    none = _ab_table(str(a), str(c))
    assert none.returncode == 1 and "no shape and tile timed by both builds" in none.stderr


def test_gemm_headroom_from_the_runs_own_ceilings(tmp_path: Path):
    """bench/gemm_headroom.py: the ceilings are the most TFLOP/s and TB/s
    of least bytes any kernel reached (cuBLASLt at 8192^3, our tile at 64
    rows), TB/s only where the product is too large to stay in L2 (a 33
    MiB one "reading" 8 TB/s back to back sets none); a shape's floor is
    the longer of its two roofline times there, and cuBLASLt's time over it
    is its headroom."""
    head = ("# NVIDIA H200, 132 SMs, bf16, each kernel 200ms back to back\n"
            "shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt,dtype,cublaslt_fp8_us,ratio_to_cublaslt_fp8\n")
    rows = ["8192x8192x8192,cublaslt,algo0,-,1.66e-03,1570.7,700,-,bf16,-,-",  # 2 * 8192^3 flop: 700 TFLOP/s
            "# default 8192x8192x8192 bf16: 128x256:s4:c2:g8:cl2",
            "8192x8192x8192,fused,128x256:s4:c2:g8:cl2,0,1.66e-03,1600.0,687,0.982 (cublaslt algo0),bf16,-,-",
            # 2 * (64 + 8192) * 8192 + 2 * 64 * 8192 = 136,314,880 least bytes
            "64x8192x8192,cublaslt,algo0,-,1.66e-03,34.0,253,-,bf16,-,-",
            "# default 64x8192x8192 bf16: 64x64:s10:c2:g8:pp",
            "64x8192x8192,fused,64x64:s10:c2:g8:pp,0,1.66e-03,32.0,268,1.063 (cublaslt algo0),bf16,-,-",
            # 2 * (64 + 8192) * 2048 + 2 * 64 * 8192 = 34,865,152 bytes in 4.4 µs: 7.9 "TB/s" from L2
            "64x8192x2048,cublaslt,algo0,-,1.66e-03,10.0,215,-,bf16,-,-",
            "64x8192x2048,fused,64x64:s10:c2:g8:pp,0,1.66e-03,4.4,488,2.273 (cublaslt algo0),bf16,-,-"]
    csv = tmp_path / "gemmalone-bf16.csv"
    csv.write_text(head + "\n".join(rows) + "\n")
    done = _bench_script("gemm_headroom.py", "--shapes", str(csv))
    done.check_returncode()
    out = done.stdout
    assert "## bf16: 3 shapes; ceilings 700 TFLOP/s and 4.26 TB/s" in out, out
    assert "at least 1.05x cuBLASLt on 2 of 3 shapes" in out, out
    # 64 rows: memory-bound, floor 32.0 µs (our tile's), cuBLASLt 34.0:
    # 1.0625; the small one's floor 34,865,152 B at 4.26 TB/s, 8.19 µs: 1.222.
    assert "| 64 | 2 | 2 (1) | 1.142 (1.062-1.222) | 2 | 143% |" in out, out
    # 8192^3: tensor-bound, floor cuBLASLt's own time; ours 1570.7 / 1600.
    assert "| 8192 | 1 | 0 (0) | 1.000 (1.000-1.000) | 0 | 98% |" in out, out
    assert "| 64x8192x8192 | memory | 32.0 | 34.0 | 1.062 | 64x64:s10:c2:g8:pp | 100% |" in out, out
    assert "| 64x8192x2048 | memory, under 2x L2 | 8.2 | 10.0 | 1.222 | 64x64:s10:c2:g8:pp | 186% |" in out, out
    bad = _bench_script("gemm_headroom.py", str(tmp_path / "none.csv"))
    assert bad.returncode == 2 and "none.csv: no such file" in bad.stderr, bad
