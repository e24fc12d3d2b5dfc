"""Issue 54: a first call of symmtune.torch passes through at most 5 of the
package's modules. Measured as bench/runtime_check.py's `modules` check
measures it on the GPU (its `entered`: sys.setprofile over the call and the
threads it starts), here on the CPU: symmtune.torch's real Python path,
with torch and the library's GPU runtime stood in for (tests/faketorch.py),
in a subprocess so the fake never meets pytest's imports. Recording
(SYMMTUNE_RECORD) is checked on the same path: off, the call never enters
symmtune.record; on, it writes the bucket's problem."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON_DIR

ROOT = PYTHON_DIR.parent
TESTS = Path(__file__).resolve().parent

SCRIPT = r"""
import json, os, sys, warnings
sys.path[:0] = [{tests!r}, {bench!r}]
import faketorch
faketorch.install()
faketorch.fake_runtime({fingerprint!r})
import torch
import runtime_check  # the GPU check's own helper, and symmtune.torch as the check imports it
import symmtune.torch as st

warnings.simplefilter("ignore")
bf16 = torch.bfloat16
dev = torch.device("cuda", 0)
a = torch.empty(48, 1024, dtype=bf16, device=dev)
w = torch.empty(2048, 1024, dtype=bf16, device=dev)  # an nn.Linear weight [N, K]
out = {{}}
c, out["agmm"] = runtime_check.entered(st.all_gather_matmul, a, w.t())
out["agmm_shape"] = list(c.shape)
_, out["agmm_warm_bucket"] = runtime_check.entered(st.all_gather_matmul, torch.empty(40, 1024, dtype=bf16, device=dev), w.t())
_, out["agmm_new_bucket"] = runtime_check.entered(st.all_gather_matmul, torch.empty(300, 1024, dtype=bf16, device=dev), w.t())
_, out["matmulrs"] = runtime_check.entered(st.matmul_reduce_scatter, c, w)
_, out["allreduce"] = runtime_check.entered(st.all_reduce, torch.empty(12297, dtype=bf16, device=dev))
f8 = torch.float8_e4m3fn
one = torch.empty(1, dtype=torch.float32, device=dev)
_, out["agmm_e4m3"] = runtime_check.entered(st.all_gather_scaled_matmul, torch.empty(64, 1024, dtype=f8, device=dev),
                                            torch.empty(2048, 1024, dtype=f8, device=dev).t(), one, one)
out["opened"] = [kind for kind, _ in faketorch.opened]
out["enqueued"] = [e[0] for e in faketorch.enqueued]
out["max"] = runtime_check.MAX_MODULES
print(json.dumps(out))
"""


def fingerprint() -> dict:
    from test_cache import GPU
    return GPU.as_dict()


def run(tmp_path: Path, **env: str) -> dict:
    e = {k: v for k, v in os.environ.items() if k != "SYMMTUNE_RECORD"}
    e.update(PYTHONPATH=str(PYTHON_DIR), SYMMTUNE_CACHE=str(tmp_path / "none.toml"), **env)
    code = SCRIPT.format(tests=str(TESTS), bench=str(ROOT / "bench"), fingerprint=fingerprint())
    r = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def lib() -> None:
    if not (os.environ.get("SYMMTUNE_LIB") or (PYTHON_DIR / "symmtune" / "libsymmtune.so").is_file()):
        pytest.fail("libsymmtune is not built: make lib (make test builds it)")


def test_first_calls_enter_at_most_five_modules(lib, tmp_path):
    got = run(tmp_path)
    five = ["symmtune._torch_gemm", "symmtune._torchrt", "symmtune._group", "symmtune._native", "symmtune._arena"]
    assert got["max"] == 5
    # The process's first call: the first of everything (the library loaded, the workspace made).
    assert sorted(got["agmm"]) == sorted(five), got["agmm"]
    assert got["agmm_shape"] == [48, 2048]
    # A new row count of a warm bucket: no round, no workspace.
    assert set(got["agmm_warm_bucket"]) <= set(five) and "symmtune._group" not in got["agmm_warm_bucket"]
    # A new bucket: a round, and the workspace grows.
    assert sorted(got["agmm_new_bucket"]) == sorted(five), got["agmm_new_bucket"]
    assert sorted(got["matmulrs"]) == sorted(five), got["matmulrs"]
    assert sorted(got["allreduce"]) == sorted(["symmtune.torch"] + five[1:]), got["allreduce"]
    # The FP8 forms: their own module on top of the GEMMs'.
    assert sorted(got["agmm_e4m3"]) == sorted(["symmtune._torch_fp8"] + five), got["agmm_e4m3"]
    assert got["opened"].count("gemm") >= 3 and "allreduce" in got["opened"]
    assert got["enqueued"] == ["gemm", "gemm", "gemm", "gemm", "allreduce", "gemm_scaled"]


def test_recording_on_the_first_call_path(lib, tmp_path):
    jobs = tmp_path / "jobs.toml"
    got = run(tmp_path, SYMMTUNE_RECORD=str(jobs))
    assert "symmtune.record" in got["agmm"]  # on, it records, so it enters
    text = jobs.read_text()
    # Each bucket's problem once: agmm's two buckets (the warm bucket's new
    # row count is no new job), matmulrs, the all-reduce and agmm in e4m3.
    assert text.count("\n[[job]]\n") == 5, text
    for shape in ('"k=1024,m=64,n=2048"', '"k=1024,m=512,n=2048"', '"k=2048,m=64,n=1024"', '"n=12297"'):
        assert f"shapes = [{shape}]" in text, (shape, text)
    assert 'dtypes = ["e4m3"]' in text
