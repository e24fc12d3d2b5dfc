"""Record, then tune what was recorded: ranks of a (CPU) program note the
kernel calls they make into one file, `symmtune search --config FILE` takes
that file as it is and tunes exactly those jobs, each once, into the cache."""

from __future__ import annotations

import multiprocessing
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import symmtune
import symmtune.record as rec
from conftest import REPO

GO_PLUGINS = ("allreduce", "agmm", "matmulrs")

# What the two ranks of the program call (world, kernel, shape); both call
# the all-reduces, and each calls one GEMM the other does not.
CALLS = {
    0: [(2, "allreduce", {"n": 4096}), (2, "allreduce", {"n": 16384}), (2, "agmm", {"m": 128, "n": 128, "k": 128})],
    1: [(2, "allreduce", {"n": 16384}), (2, "allreduce", {"n": 4096}), (2, "matmulrs", {"m": 256, "n": 128, "k": 128})],
}


@pytest.fixture(scope="module")
def plugin_dir(symmtune_bin, tmp_path_factory) -> Path:
    """The Go CPU plugins: next to the CLI when `make` built them there,
    else built from this checkout."""
    here = symmtune_bin.parent
    if all((here / f"symmtune-plugin-{p}").exists() for p in GO_PLUGINS):
        return here
    go = shutil.which("go")
    if go is None:
        pytest.fail("the Go plugins are not next to $SYMMTUNE_BIN and there is no go to build them")
    d = tmp_path_factory.mktemp("plugins")
    for p in GO_PLUGINS:
        subprocess.run([go, "build", "-o", str(d / f"symmtune-plugin-{p}"), f"./plugins/{p}"], cwd=REPO, check=True)
    return d


def _rank(path: str, rank: int, barrier) -> None:
    os.environ[rec.ENV] = path  # as SYMMTUNE_RECORD=FILE torchrun ... would set it
    barrier.wait()
    for _ in range(3):  # a training loop: the same calls every step
        for world, kernel, shape in CALLS[rank]:
            rec.note(kernel, world, "f32", shape, backend="cpu")


def test_search_tunes_exactly_the_recorded_jobs(symmtune_bin, host_env, plugin_dir, tmp_path):
    jobs = tmp_path / "jobs.toml"
    ctx = multiprocessing.get_context("spawn")  # fresh interpreters: the env is read at their first note
    barrier = ctx.Barrier(len(CALLS))
    procs = [ctx.Process(target=_rank, args=(str(jobs), r, barrier)) for r in CALLS]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * len(procs)

    want = {(k, w, "f32", symmtune.cache.shape_string(s)) for calls in CALLS.values() for w, k, s in calls}
    assert len(want) == 4 and jobs.read_text().splitlines().count("[[job]]") == 4

    sockets = tmp_path / "tmp"  # the plugins' sockets go to $TMPDIR
    sockets.mkdir()
    host_env["TMPDIR"] = str(sockets)
    cache_path = tmp_path / "configs.toml"
    r = subprocess.run([str(symmtune_bin), "search", "--plugin-dir", str(plugin_dir), "--config", str(jobs),
                        "--cache", str(cache_path), "--log", str(tmp_path / "trials.jsonl"),
                        "--budget-trials", "3", "--iters", "3", "--warmup", "1"],
                       env=host_env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr

    # One outcome per recorded job, on the recorded backend.
    tuned = re.findall(r"^(\S+)  backend=(\S+)  world=(\d+)  dtype=(\S+)  shape=(\S+)$", r.stdout, re.M)
    assert len(tuned) == len(want), r.stdout
    assert {(k, int(w), dt, symmtune.cache.shape_string(dict_of(s))) for k, b, w, dt, s in tuned} == want
    assert {b for _, b, _, _, _ in tuned} == {"cpu"}

    entries = symmtune.load(cache_path)
    assert {(e.kernel, e.world, e.dtype, symmtune.cache.shape_string(e.shape)) for e in entries} == want
    assert len(entries) == len(want) and {e.backend for e in entries} == {"cpu"}


def dict_of(shape: str) -> dict[str, int]:
    return {k: int(v) for k, v in (part.split("=") for part in shape.split(","))}
