"""The GPU benchmark scripts run only on machines lent by the minute, where
a typo costs a device call: here, without a GPU, every one is at least
parsed, and the shell scripts that source bench/lib.sh set what it needs
first."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = (ROOT / "bench", ROOT / "bench" / "experiments", ROOT / "bench" / "serving")
PY = sorted(p for d in BENCH for p in d.glob("*.py"))
SH = sorted(p for d in BENCH for p in d.glob("*.sh")) + sorted((ROOT / "scripts").glob("*.sh"))


def test_there_are_scripts_to_check():
    assert len(PY) >= 5 and len(SH) >= 5, (PY, SH)


@pytest.mark.parametrize("path", PY, ids=lambda p: p.name)
def test_python_script_parses(path: Path):
    compile(path.read_text(), str(path), "exec")


@pytest.mark.parametrize("path", SH, ids=lambda p: p.name)
def test_shell_script_parses(path: Path):
    r = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


_SOURCES_LIB = re.compile(r'^\s*\.\s+"?\$?.*lib\.sh"?\s*$')
_SETS_LOGS = re.compile(r"^\s*(export\s+)?LOGS=")


@pytest.mark.parametrize("path", [p for p in SH if p.name != "lib.sh"], ids=lambda p: p.name)
def test_logs_is_set_before_lib_sh(path: Path):
    """bench/lib.sh writes the machine's state to $LOGS: a script sourcing
    it under `set -u` without LOGS stops at once."""
    lines = path.read_text().splitlines()
    sourced = [i for i, line in enumerate(lines) if _SOURCES_LIB.match(line)]
    if not sourced:
        return
    first_set = next((i for i, line in enumerate(lines) if _SETS_LOGS.match(line)), None)
    assert first_set is not None and first_set < sourced[0], \
        f"{path.name} sources lib.sh on line {sourced[0] + 1} before setting LOGS"


# The device tool stops a command after 600 s and then returns only a few
# of its files: the maintained benchmarks built to fit one device call must
# end, worst case, before.
DEVICE_CALL_S = 600
ONE_CALL = ("allreduce.sh", "gemm-paired.sh")
_TIMEOUT = re.compile(r"\btimeout (\d+)\b")
_FOR_WORDS = re.compile(r"^\s*for \w+ in (.+); do\s*$")
_DEFAULT = re.compile(r"^(\w+)=\$\{\1:-(.*)\}$")


def worst_case_seconds(lines: list[str]) -> int:
    """The sum of the `timeout N` limits in lines, each times the number of
    words of the `for ... in ...; do` loops around it, a variable set as
    NAME=${NAME:-default} counted by its default's words."""
    defaults = {m.group(1): m.group(2) for line in lines if (m := _DEFAULT.match(line))}
    total, loops = 0, []
    for line in lines:
        if m := _FOR_WORDS.match(line):
            words = m.group(1)
            for name, value in defaults.items():
                words = words.replace(f"${name}", value)
            loops.append(len(words.split()))
            continue
        if line.strip() == "done" and loops:
            loops.pop()
            continue
        reps = 1
        for n in loops:
            reps *= n
        total += reps * sum(int(t) for t in _TIMEOUT.findall(line))
    return total


def test_worst_case_counts_loops():
    lines = ["X=${X:-a b}", "for n in 1 2 3; do", "  timeout 10 a", "  for m in $X; do", "    timeout 5 b", "  done",
             "done", "timeout 7 c"]
    assert worst_case_seconds(lines) == 3 * 10 + 3 * 2 * 5 + 7


@pytest.mark.parametrize("name", ONE_CALL)
def test_fits_one_device_call(name: str):
    s = worst_case_seconds((ROOT / "bench" / name).read_text().splitlines())
    assert 0 < s <= DEVICE_CALL_S - 30, f"bench/{name}: its timeouts add up to {s} s"


def test_every_part_of_make_bench_gpu_is_a_maintained_script():
    """bench/all.sh (make bench-gpu) runs only scripts of bench/ itself, and
    each of them exists: nothing maintained calls an experiment."""
    text = (ROOT / "bench" / "all.sh").read_text()
    called = set(re.findall(r'"\$here/([\w.-]+)"', text))
    assert called, text
    for name in called:
        assert (ROOT / "bench" / name).is_file(), name
    assert "experiments" not in text


def test_ar_force_parse():
    """bench/ar_force.py's AR_FORCE: JSON configs or cache paths by name
    (parsed without torch)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("ar_force", ROOT / "bench" / "ar_force.py")
    assert spec is not None and spec.loader is not None
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    got = m.parse('lamport={"algorithm":"one_shot_lamport","blocks":8} ; tuned=/tmp/l.toml;')
    assert got == {"lamport": {"algorithm": "one_shot_lamport", "blocks": 8}, "tuned": "/tmp/l.toml"}
    assert m.parse("") == {}
    with pytest.raises(ValueError, match="NAME=SPEC"):
        m.parse("oops")


def _search_check(*args: str) -> str:
    """bench/search_check.py's output (it reads logs through libsymmtune)."""
    import os
    import sys
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    return subprocess.run([sys.executable, str(ROOT / "bench" / "search_check.py"), *args], env=env, check=True,
                          capture_output=True, text=True).stdout


@pytest.mark.parametrize("ref_name", ["ref.jsonl", "ref.jsonl.gz"])
def test_search_check_top_labels_each_config_once(tmp_path: Path, ref_name: str):
    """search_check.py top: the winner first (the search's cache entry:
    here the default, kept though a finalist re-measured 1% faster), then
    the search's best configs, its families and best pipeline, then a
    reference log's best, each config once under its first label. The
    reference may be gzipped, as the recorded landscapes
    search-check.sh finds are."""
    import gzip
    import json

    def row(impl: str, chunks: int, score: float, refined: bool = False) -> str:
        return json.dumps({"config": {"impl": impl, "chunks": chunks}, "status": "ok", "score_us": score,
                           "refined": refined, "kernel": "agmm", "backend": "cuda", "world": 2, "dtype": "bf16",
                           "shape": "m=8192,n=3584,k=8192"})
    log, ref = tmp_path / "search.jsonl", tmp_path / ref_name
    log.write_text("\n".join([row("fused:a", 1, 100), row("fused:a", 2, 101), row("fused:b", 1, 103),
                              row("pipeline", 1, 110), row("fused:a", 2, 99, refined=True),
                              row("fused:a", 1, 100, refined=True)]) + "\n")
    cache = tmp_path / "search.toml"
    cache.write_text('version = 1\n\n[[entry]]\nkernel = "agmm"\nconfig = { impl = "fused:a", chunks = 1 }\n'
                     'median_us = 100.0\n')
    ref_text = "\n".join([row("fused:c", 4, 90), row("fused:a", 1, 95)]) + "\n"
    if ref_name.endswith(".gz"):
        ref.write_bytes(gzip.compress(ref_text.encode(), mtime=0))
    else:
        ref.write_text(ref_text)
    got = json.loads(_search_check("top", str(log), str(cache), "agmm", "8192x3584x8192", "--n", "2", "--best", "2",
                                   "--ref", str(ref), "--ref-n", "2", "--dtype", "e4m3"))
    labels = [(e["label"], e["config"]["impl"], e["config"]["chunks"]) for e in got]
    # --n 2 of three families: the best (fused:a, already in) and the worst (the pipeline).
    assert labels == [("winner", "fused:a", 1), ("best1", "fused:a", 2), ("family", "pipeline", 1),
                      ("ref1", "fused:c", 4)], labels
    assert {e["dtype"] for e in got} == {"e4m3"}


def test_search_check_best_is_the_searchs_final_order(tmp_path: Path):
    """search_check.py top --best: the re-measured finalists first, by their
    re-measured scores (timed loaded they are all slower than any first-pass
    figure), then the others by first-pass score: never sorted together."""
    import json
    rows = [("a", 100, False), ("b", 101, False), ("c", 95, False), ("b", 120, True), ("a", 130, True)]
    log = tmp_path / "search.jsonl"
    log.write_text("\n".join(json.dumps({"config": {"impl": f"fused:{t}"}, "status": "ok", "score_us": us,
                                          "refined": ref, "kernel": "agmm", "backend": "cuda", "world": 1,
                                          "dtype": "bf16", "shape": "m=1,n=1,k=1"}) for t, us, ref in rows) + "\n")
    cache = tmp_path / "search.toml"
    cache.write_text('version = 1\n\n[[entry]]\nkernel = "agmm"\nconfig = { impl = "fused:b" }\nmedian_us = 120.0\n')
    got = json.loads(_search_check("top", str(log), str(cache), "agmm", "1x1x1", "--n", "0", "--best", "3"))
    assert [(e["label"], e["config"]["impl"]) for e in got] == [("winner", "fused:b"), ("best2", "fused:a"),
                                                                 ("best3", "fused:c")], got


def test_search_check_summary_against_the_best_beside(tmp_path: Path):
    """search_check.py summary: per pass, the winner's and the untuned
    config's distance from the best ratio measured in that pass."""
    import json
    rows = [{"pass": p, "kernel": "agmm", "shape": "8192x3584x8192", "dtype": "bf16", "label": label, "config": {},
             "ratio": {"ours": r, "torch": 1.2}}
            for p, label, r in ((1, "winner", 1.10), (1, "ref1", 1.00), (1, "untuned", 1.05), (2, "winner", 1.0),
                                (2, "untuned", 1.2))]
    program = tmp_path / "program.json"
    program.write_text(json.dumps(rows))
    out = _search_check("summary", str(program), "66").splitlines()
    assert out[0] == "| agmm bf16 8192x3584x8192 | 1 | 1.100 (+10.0%) | 1.050 (+5.0%) | 1.000 (ref1) | 1.200 | 66 s | 3 |"
    assert out[1] == "| agmm bf16 8192x3584x8192 | 2 | 1.000 (+0.0%) | 1.200 (+20.0%) | 1.000 (winner) | 1.200 | 66 s | 2 |"


def test_search_check_table_names_the_winner_top_chose(tmp_path: Path):
    """search_check.py table: the winner it places in the program is the
    one top labelled (the search's cache entry), even where the log holds
    a finalist re-measured faster."""
    import json
    conf = [{"impl": "fused:a", "chunks": 1}, {"impl": "fused:a", "chunks": 2}]
    top = tmp_path / "top.json"
    top.write_text(json.dumps([{"label": "winner", "config": conf[0]}, {"label": "best1", "config": conf[1]}]))
    program = tmp_path / "program.json"
    program.write_text(json.dumps([{"pass": 2, "config": c, "ratio": {"ours": r}} for c, r in zip(conf, (1.02, 1.05))]))
    log = tmp_path / "search.jsonl"
    log.write_text("\n".join(json.dumps({"config": c, "status": "ok", "score_us": us, "refined": ref, "kernel": "agmm",
                                          "backend": "cuda", "world": 2, "dtype": "bf16", "shape": "m=1,n=1,k=1"})
                             for c, us, ref in ((conf[0], 100, False), (conf[1], 99, False), (conf[0], 100, True),
                                                (conf[1], 99, True))) + "\n")
    out = _search_check("table", str(top), str(program), str(log))
    assert "search winner `chunks=1,impl=fused:a` in the program: 1.020 (best of these 1.020: 0.0% behind)" in out, out


def test_search_check_table_has_the_searchs_refined_order(tmp_path: Path):
    """search_check.py table: where the search re-measured its finalists
    (--finalists, --refine-timing), a "search refined" column orders them
    by the re-measurements, apart from the first pass's scores; a config
    the search did not re-measure has no score there."""
    import json
    conf = [{"impl": f"fused:{t}", "chunks": 1} for t in "abcd"]
    top = tmp_path / "top.json"
    top.write_text(json.dumps([{"label": "winner", "config": conf[2]}] +
                              [{"label": f"best{i}", "config": c} for i, c in enumerate(conf) if i != 2]))
    program = tmp_path / "program.json"
    # The program orders them c < b < a < d, 5% apart.
    program.write_text(json.dumps([{"pass": 2, "config": c, "ratio": {"ours": r}}
                                   for c, r in zip(conf, (1.10, 1.05, 1.00, 1.16))]))
    log = tmp_path / "search.jsonl"
    rows = [(conf[0], 100, False), (conf[1], 101, False), (conf[2], 102, False), (conf[3], 90, False),
            (conf[0], 130, True), (conf[1], 120, True), (conf[2], 110, True)]
    log.write_text("\n".join(json.dumps({"config": c, "status": "ok", "score_us": us, "refined": ref, "kernel": "agmm",
                                          "backend": "cuda", "world": 1, "dtype": "bf16", "shape": "m=1,n=1,k=1"})
                             for c, us, ref in rows) + "\n")
    out = _search_check("table", str(top), str(program), str(log))
    assert "| config | search (µs) | search refined (µs) | program" in out, out
    assert "| `chunks=1,impl=fused:d` | 90.0 | — | 1.160 |" in out, out
    # First pass: every pair the wrong way round (d first, then a, b, c);
    # refined: the 3 pairs among a, b, c, all right.
    assert "| pairs 2% or more apart in the program's pass 2, ordered alike | 0/6 | 3/3 | |" in out, out


def test_every_results_file_is_in_the_index():
    """bench/results/README.md is the index of every results file: each
    results .md there is named in it."""
    results = ROOT / "bench" / "results"
    index = (results / "README.md").read_text()
    missing = [p.name for p in sorted(results.glob("*.md")) if p.name != "README.md" and f"({p.name})" not in index]
    assert not missing, f"add a line to bench/results/README.md for: {missing}"


def test_ncu_gemm_fits_one_device_call():
    """bench/ncu-gemm.sh: no shape starts after DEADLINE and each runs
    under what is left; past it only the last shape's CSV export, the
    archive (twice at most) and the table: within one device call. Its
    metric query runs before the first shape, inside DEADLINE."""
    text = (ROOT / "bench" / "ncu-gemm.sh").read_text()
    deadline = int(re.search(r"DEADLINE=\$\{DEADLINE:-(\d+)\}", text).group(1))  # type: ignore[union-attr]
    assert "left < PER_SHAPE ? left : PER_SHAPE" in text
    after = [int(t) for line in text.splitlines() if ("--import" in line or "tar czf" in line or "ncu_table.py" in line)
             for t in _TIMEOUT.findall(line)]
    assert len(after) == 4, after
    assert deadline + sum(after) + 10 <= DEVICE_CALL_S - 30, (deadline, after)
    assert '"$here/ncu-gemm.sh"' in (ROOT / "bench" / "all.sh").read_text()


# serving_check.py's run state: main() sets it in bench/serving/common.py.
SERVING_STATE = ("ARGS", "RANK", "W", "CTL", "TIMEOUT", "RESULTS", "MEM", "SAME")


def test_serving_state_is_read_through_common():
    """bench/serving_check.py and the modules of bench/serving/ other than
    common.py name the run's state only as common.NAME: a from-import (or a
    global of their own) would keep the values of import time, rank 0 of a
    world of 1, on every rank."""
    import ast
    common = ast.parse((ROOT / "bench" / "serving" / "common.py").read_text())
    defined: set[str] = set()
    for s in common.body:
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            defined |= {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assert set(SERVING_STATE) <= defined, set(SERVING_STATE) - defined
    paths = [ROOT / "bench" / "serving_check.py"] + [p for p in (ROOT / "bench" / "serving").glob("*.py")
                                                      if p.name != "common.py"]
    assert len(paths) >= 4, paths
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            where = f"{path.name}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Name):
                assert node.id not in SERVING_STATE, f"{where}: {node.id}, not common.{node.id}"
            elif isinstance(node, ast.ImportFrom):
                assert not {a.name for a in node.names} & set(SERVING_STATE), where
            elif isinstance(node, ast.Global):
                assert not set(node.names) & set(SERVING_STATE), where


_SERVING_STUB = """
import json, os, sys
from unittest import mock
sys.path[:0] = [sys.argv[1] + "/bench", sys.argv[1] + "/python"]
torch = mock.MagicMock(name="torch")
torch.__version__ = "stub"
sys.modules.update({"torch": torch, "torch.distributed": torch.distributed,
                    "torch.distributed._symmetric_memory": torch.distributed._symmetric_memory,
                    "symmtune.torch": mock.MagicMock(name="symmtune.torch")})
dist = torch.distributed
dist.get_rank.return_value, dist.get_world_size.return_value = 0, 4
dist.all_gather_object.side_effect = lambda out, obj, group=None: out.__setitem__(slice(None), [obj] * len(out))
import serving_check
from serving import common, graphs
seen = {}
def probe(c):
    seen.update(rank=[common.RANK, common.W], ctl=common.CTL is dist.new_group.return_value,
                same=common.SAME is not None, timeout=common.TIMEOUT.total_seconds(), bs=graphs.serving_bs())
    c.detail = "probed"
serving_check.CHECKS.clear()
serving_check.CHECKS["probe"] = probe
common.BUDGETS["probe"] = 10
sys.argv = ["serving_check.py", "--quick", "--out", sys.argv[2], "--timeout", "7", "--budget-scale", "2"]
def _exit(code):
    raise SystemExit(code)
with mock.patch.object(os, "_exit", side_effect=_exit):
    try:
        serving_check.main()
    except SystemExit as e:
        seen["exit"] = e.code
print(json.dumps(seen))
"""


def test_serving_check_main_sets_the_state_every_module_reads(tmp_path: Path):
    """bench/serving_check.py's imports and main() without a GPU (torch and
    symmtune.torch stubbed, in a process of their own): the state main sets
    is what a check in another module of bench/serving/ reads, and the
    driver's results reach --out."""
    import json
    import sys
    out = tmp_path / "serving.json"
    r = subprocess.run([sys.executable, "-c", _SERVING_STUB, str(ROOT), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    seen = json.loads(r.stdout.splitlines()[-1])
    assert seen == {"rank": [0, 4], "ctl": True, "same": True, "timeout": 14.0, "bs": [1, 16, 256], "exit": 0}, seen
    got = json.loads(out.read_text())
    assert got["world"] == 4 and [(c["name"], c["pass"]) for c in got["checks"]] == [("probe", True)], got
    assert "CHECK probe: PASS probed" in r.stdout and "1 passed, 0 failed" in r.stdout, r.stdout


@pytest.mark.parametrize("world", [1, 2, 4, 8])
def test_serving_disagree_sets_validate_at_every_world(world: int):
    """bench/serving/errors.py's disagree check writes, per rank, the first
    candidate of its config set that Validate takes at the case's problem;
    a set with none fails the check on the GPU before it tests anything
    (it did at world 1 when a fused matmulrs of one rank took only the
    default push). Rank 0 writes set1, the others set2 (world 2 and up)."""
    import ast
    from symmtune import gemm as st_gemm
    tree = ast.parse((ROOT / "bench" / "serving" / "errors.py").read_text())
    sets = next(ast.literal_eval(n.value) for n in tree.body
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id == "GEMM_SET"
                and n.value is not None)
    for ci in range(3):  # check_disagree's cases A, B, C
        problems = {"agmm": st_gemm.Problem(512 * world * (ci + 1), 1536 + 256 * ci, 2048, world),
                    "matmulrs": st_gemm.Problem(512 * world * (ci + 1), 2048, 1024 + 256 * ci, world)}
        for which in ["set1"] + (["set2"] if world > 1 else []):
            for kernel, p in problems.items():
                why = []
                for extra in sets[which][kernel]:
                    try:
                        st_gemm.validate(st_gemm.parse_config(kernel, dict(st_gemm.default_config(kernel), **extra)), p,
                                         "bf16")
                        break
                    except ValueError as e:
                        why.append(str(e))
                else:
                    pytest.fail(f"{which} {kernel} at {p}: no candidate validates: {why}")


_FAKE_GEMMALONE = """#!/bin/sh
# A stand-in for bin/gemmalone: $FAKE says what each run prints.
echo "shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt"
case $FAKE in
ok) echo "256x1280x1024,fused,128x256:s4:c2:g8:sa2,0,1.7e-03,11.5,70,1.01" ;;
wrong) echo "256x1280x1024,fused,128x256:s4:c2:g8:sa2,0,9.9e-01,11.5,70,WRONG" ;;
crash) echo "256x1280x1024,fused,128x256:s4:c2:g8:sa2,0,1.7e-03,11.5,70,1.01"; echo boom >&2; exit 3 ;;
none) ;;
esac
"""


@pytest.mark.parametrize("fake,want", [("ok", 0), ("wrong", 1), ("crash", 1), ("none", 1)])
def test_tile_smoke_stops_the_timing_on_any_failure(tmp_path: Path, fake: str, want: int):
    """bench/experiments/tile-smoke.sh gates a device call's timing on a new
    tile's correctness: a WRONG row, a failed run or no rows at all end it."""
    binary = tmp_path / "bin" / "gemmalone"
    binary.parent.mkdir()
    binary.write_text(_FAKE_GEMMALONE)
    binary.chmod(0o755)
    r = subprocess.run(["bash", str(ROOT / "bench" / "experiments" / "tile-smoke.sh")], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "BIN": str(binary.parent), "OUT": str(tmp_path / "out"),
                            "TILES": "128x256:s4:c2:g8:sa2", "DTYPES": "e4m3_row bf16", "FAKE": fake})
    assert r.returncode == want, r.stdout + r.stderr
    assert (tmp_path / "out" / "smoke-e4m3_row.csv").exists()
    assert ("smoke e4m3_row" in r.stdout) and (("smoke bf16" in r.stdout) == (want == 0)), r.stdout


def test_tile_smoke_wants_its_arguments(tmp_path: Path):
    r = subprocess.run(["bash", str(ROOT / "bench" / "experiments" / "tile-smoke.sh")], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "OUT": str(tmp_path)})
    assert r.returncode != 0 and "TILES" in r.stderr, r.stderr


def test_device_setup_unpacks_the_bundle_and_writes_the_card(tmp_path: Path):
    """bench/experiments/device-setup.sh, sourced by the device calls' scripts: the bundle unpacked where
    BIN points, the results folder made afresh (nothing of an earlier call's left in it) with machine.txt."""
    fake = tmp_path / "path"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/bin/sh\necho name\necho NVIDIA H100 80GB HBM3\n")
    (fake / "nvidia-smi").chmod(0o755)
    src = tmp_path / "src" / "bin"
    src.mkdir(parents=True)
    (src / "gemmalone").write_text("#!/bin/sh\n")
    bundle = tmp_path / "gm.txz"
    subprocess.run(["tar", "cJf", str(bundle), "-C", str(src.parent), "bin"], check=True)
    results = tmp_path / "results"
    results.mkdir()
    (results / "stale.csv").write_text("from an earlier call\n")
    script = f'. bench/experiments/device-setup.sh {bundle} {results} && echo "BIN=$BIN" && ls "$BIN"'
    r = subprocess.run(["bash", "-c", script], cwd=ROOT, capture_output=True, text=True,
                       env={"PATH": f"{fake}:/usr/bin:/bin", "GM": str(tmp_path / "gm")})
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"BIN={tmp_path}/gm/bin" in r.stdout and "gemmalone" in r.stdout and "NVIDIA H100" in r.stdout
    assert not (results / "stale.csv").exists()
    assert "H100" in (results / "machine.txt").read_text()


def test_device_setup_wants_its_arguments():
    r = subprocess.run(["bash", "-c", ". bench/experiments/device-setup.sh only-one"], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 2 and "usage" in r.stderr, r.stderr
