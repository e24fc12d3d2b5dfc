"""The example plugins as templates: both import and describe themselves
without torch or triton, their default configs are valid, their spaces prune
as documented, and the host lists the Triton one (and refuses, with one
line, to search it where there is no GPU). The CPU example runs end to end
in test_host.py; the Triton one needs GPUs."""

from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import subprocess

import pytest

from conftest import REPO, install_plugin
from symmtune.plugin import Problem, check_config

EXAMPLES = REPO / "python" / "examples"
CPU = EXAMPLES / "allreduce_cpu" / "symmtune-plugin-pyallreduce"
TRITON = EXAMPLES / "allreduce_triton" / "symmtune-plugin-tritonallreduce"


def load(path):
    loader = importlib.machinery.SourceFileLoader(path.name.replace("-", "_"), str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def triton_plugin():
    return load(TRITON)


def configs(desc):
    out = [{}]
    for p in desc.params:
        out = [dict(c, **{p.name: v}) for c in out for v in p.values]
    return out


@pytest.mark.parametrize("path,kernel", [(CPU, "AllReduce"), (TRITON, "AllReduce")])
def test_describes_itself_without_a_gpu_stack(path, kernel):
    k = getattr(load(path), kernel)()
    d = k.describe()
    assert d.name == path.name.removeprefix("symmtune-plugin-")
    assert len(d.kernel_version) == 12 and check_config(d.params, d.default) is None


@pytest.mark.parametrize("n", [2048, 524288, 8388608, 67108864])
@pytest.mark.parametrize("world", [2, 4, 8])
def test_triton_space(triton_plugin, n, world):
    k = triton_plugin.AllReduce()
    d = k.describe()
    p = Problem({"n": n}, "bf16")
    assert k.validate(d.default, p, world, "cuda") is None
    valid = [c for c in configs(d) if k.validate(c, p, world, "cuda") is None]
    tiles = lambda c: -(-n // c["BLOCK_SIZE"])  # noqa: E731
    assert valid and all(c["BLOCK_SIZE"] % (32 * c["num_warps"]) == 0 for c in valid)
    # No two valid configs launch the same kernel the same way.
    launched = {(c["BLOCK_SIZE"], c["num_warps"], c["num_stages"], min(c["blocks"], tiles(c))) for c in valid}
    assert len(launched) == len(valid)
    assert all(c["num_stages"] == 1 for c in valid if tiles(c) <= c["blocks"])
    assert all((c["blocks"] + 1) * world * 4 <= triton_plugin.PAD_BYTES <= 2048 for c in valid)


@pytest.mark.parametrize("problem,world,backend,reason", [
    (Problem({"n": 4096}, "bf16"), 4, "cpu", "cuda backend"),
    (Problem({"n": 4096}, "f16"), 4, "cuda", "bf16 or f32"),
    (Problem({"n": 4096}, "bf16"), 3, "cuda", "1, 2, 4 or 8"),
    (Problem({"n": 4096}, "bf16"), 16, "cuda", "1, 2, 4 or 8"),
])
def test_triton_refuses(triton_plugin, problem, world, backend, reason):
    k = triton_plugin.AllReduce()
    assert reason in k.validate(k.describe().default, problem, world, backend)


def _has_gpu() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def test_host_lists_the_triton_plugin(symmtune_bin, host_env, tmp_path):
    d = tmp_path / "plugins"
    install_plugin(TRITON, d / "cuda")
    r = subprocess.run([str(symmtune_bin), "plugins", "--plugin-dir", str(d), "--backend", "cuda"],
                       env=host_env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "tritonallreduce  [cuda]" in r.stdout and "space          360 configs" in r.stdout
    if _has_gpu():
        return
    r = subprocess.run([str(symmtune_bin), "search", "--plugin-dir", str(d), "--backend", "cuda", "--kernel",
                        "tritonallreduce", "--world", "2", "--shape", "n=4096", "--dtype", "bf16",
                        "--cache", str(tmp_path / "c.toml"), "--log", str(tmp_path / "t.jsonl")],
                       env=host_env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and "libcuda.so.1" in r.stderr
    assert not (tmp_path / "c.toml").exists() and not (tmp_path / "t.jsonl").exists()
