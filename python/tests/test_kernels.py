"""The Python runtime's view of the CUDA kernels: the same files the Go
plugins embed, the library finder, and (where NVRTC is found) that the
sources compile as the runtime assembles them."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from symmtune import _cuda, _native, kernels

REPO = Path(__file__).resolve().parents[2]


def test_sources_are_the_go_plugins_files():
    ar = REPO / "kernels/allreduce/kernels"
    want = [[REPO / "symm/cudamem/barrier.cuh"], [ar / "common.cuh"], [ar / "allreduce.cu", ar / "algos.cu", ar / "lamport.cu"],
            [ar / "util.cu"]]
    got = kernels.kernel_sources()
    assert len(got) == len(want)
    for text, paths in zip(got, want):
        assert text == "".join(p.read_text() for p in paths), f"{paths} differ from what symmtune.kernels reads"


def test_kernel_version_is_of_the_sources_on_disk():
    """The library's version hashes the files the runtime compiles: a
    library built from other sources fails here."""
    v = kernels.kernel_version()
    assert len(v) == 12 and v == kernels.source_hash(*kernels.kernel_sources())


@pytest.mark.parametrize("major,minor,want", [(8, 0, "sm_80"), (9, 0, "sm_90a"), (10, 0, "sm_100a")])
def test_arch(major, minor, want):
    assert _cuda.arch(major, minor) == want


def test_nvrtc_candidates(monkeypatch):
    monkeypatch.setenv("SYMMTUNE_NVRTC", "/opt/x/libnvrtc.so.99")
    assert _cuda.nvrtc_candidates() == ["/opt/x/libnvrtc.so.99"]
    monkeypatch.delenv("SYMMTUNE_NVRTC")
    c = _cuda.nvrtc_candidates()
    assert c[-4:] == ["libnvrtc.so.14", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11"]


def test_compile_allreduce_as_the_runtime_does():
    try:
        _cuda._load_nvrtc()
    except Exception as e:  # no NVRTC: only `make cuda-test` points at one
        if os.environ.get("SYMMTUNE_NVRTC"):
            pytest.fail(f"SYMMTUNE_NVRTC={os.environ['SYMMTUNE_NVRTC']} but NVRTC does not load: {e}")
        pytest.skip(f"no NVRTC here: {e}")
    barrier, common, ar, _ = kernels.kernel_sources()
    for dtype in ("bf16", "f16", "f32"):
        for algo in kernels._ALGOS.values():
            opts = kernels.macros(dtype, 4) + [f"-DALGO={algo}", "-DTHREADS=256", "-DUNROLL=2"]
            assert _cuda.compile_cubin(barrier + common + ar, "allreduce.cu", opts, "sm_90")
    assert _cuda.compile_cubin(barrier, "symm_barrier.cu", [], "sm_90")


@pytest.mark.parametrize("n,elt,world,want", [
    (1, 2, 1, 8), (8, 2, 1, 8), (9, 2, 2, 16), (1000001, 2, 4, 1000032), (3, 4, 4, 16), (4097, 4, 2, 4104),
    (2048, 2, 2, 2048),
])
def test_padded(n, elt, world, want):
    got = kernels.padded(n, elt, world)
    assert got == want
    assert got >= n and got * elt % (16 * world) == 0 and got - n < world * 16 // elt


def test_default_config_matches_the_go_plugin():
    golden = json.loads((REPO / "kernels/allreduce/testdata/default-golden.json").read_text())
    assert golden["cases"]
    for c in golden["cases"]:
        assert _native.call("allreduce.default", n=c["n"], elt=c["elt"], world=c["world"])["config"] == c["config"], c


def test_compile_torch_variants():
    """What only symmtune.torch compiles: the push two-shot summing in place
    (PUSH_OUT=0) and the GEMM pipelines' gemm_util.cu."""
    try:
        _cuda._load_nvrtc()
    except Exception as e:
        if os.environ.get("SYMMTUNE_NVRTC"):
            pytest.fail(f"SYMMTUNE_NVRTC={os.environ['SYMMTUNE_NVRTC']} but NVRTC does not load: {e}")
        pytest.skip(f"no NVRTC here: {e}")
    from symmtune import gemm
    barrier, common, ar, _ = kernels.kernel_sources()
    opts = kernels.macros("bf16", 4) + [f"-DALGO={kernels._ALGOS['two_shot_push']}", "-DTHREADS=256", "-DUNROLL=2"]
    assert _cuda.compile_cubin(barrier + common + ar, "allreduce.cu", opts + ["-DPUSH_OUT=0"], "sm_90")
    # gpu.UtilOptions: bf16, f16, and the FP8 dtypes' e4m3 inputs with bf16 outputs.
    for opts in (["-DDTYPE_BF16=1"], ["-DDTYPE_BF16=0"], ["-DDTYPE_BF16=1", "-DIN_E4M3=1"]):
        assert _cuda.compile_cubin(gemm.util_source(), "gemm_util.cu", opts, "sm_90"), opts
        # As the Go Runner builds it: after the team barrier (end_barrier).
        assert _cuda.compile_cubin(barrier + gemm.util_source(), "gemm_util.cu", opts, "sm_90"), opts


def test_plugin_algorithms_and_pads() -> None:
    """The CUDA plugin's algorithms (kernels/allreduce's Algorithms, as the
    library lists them; which symmtune.torch runs is allreduce.choose's to
    say: internal/libops' TestAllreduceChoose) and the barrier's pads."""
    assert len(kernels._ALGOS) >= 6 and kernels._ALGOS["two_shot_push"] == 3
    assert kernels._MAX_BLOCKS == kernels._PAD_SLOTS - 1 and kernels._PAD_BYTES == kernels._PAD_SLOTS * 8 * 4 + 256


@pytest.mark.parametrize("algorithm,dtype,source,warning", [
    ("two_shot_push", "bf16", "tuned", None),
    ("two_shot_ce_ag", "bf16", "default", "is algorithm=two_shot_ce_ag, which symmtune.torch does not run here (its host"),
    ("two_shot_push", "f16", "default", "no tuned all-reduce for 4 ranks, f16, n=4194304 (for these kernel sources"),
])
def test_allreduce_choice(tmp_path, recwarn, monkeypatch, algorithm, dtype, source, warning):
    """What symmtune.torch's first all-reduce asks (one allreduce.choose
    request) and takes of the answer (cache.chosen): the tuned config it
    runs, else the default with a warning given once; n padded. 8 MiB:
    past the Lamport rules, so the default stages through the workspace."""
    from symmtune import cache
    from test_cache import GPU, entry, write_cache
    monkeypatch.setattr(_native, "_warned", set())
    tuned = {"algorithm": algorithm, "threads": 512, "blocks": 16, "unroll": 2}
    e = entry(1 << 22, "x", GPU, kernel_version=kernels.kernel_version(), dtype="bf16", config=tuned)
    path = write_cache(tmp_path / "c.toml", [e])
    for _ in range(2):
        c = cache.chosen(_native.call("allreduce.choose", n=1 << 22, dtype=dtype, world=4, cache=path,
                                      hardware=GPU.as_dict()))
        assert c["source"] == source and c["padded"] == kernels.padded(1 << 22, 2, 4)
        assert c["workspace"] == "staging" and c["region_bytes"] == 3 * c["padded"] * 2
        if source == "default":
            assert c["config"] == _native.call("allreduce.default", n=1 << 22, elt=2, world=4)["config"]
    msgs = [str(w.message) for w in recwarn.list]
    assert msgs == [] if warning is None else len(msgs) == 1 and warning in msgs[0], msgs


@pytest.mark.parametrize("n,config,source,warning,workspace", [
    # A tuned entry of the nearest size may name a Lamport algorithm past its cap.
    (256 * 8192, {"algorithm": "one_shot_lamport"}, "tuned", None, "one_shot_lamport"),
    (256 * 8192 + 8, {"algorithm": "one_shot_lamport"}, "default", "its buffers take messages up to 4194304 bytes",
     "staging"),
    (256 * 8192 + 8, {"algorithm": "two_shot_push"}, "nearest", None, "staging"),
    (256 * 8192 + 8, {"algorithm": "two_shot_lamport"}, "nearest", None, "two_shot_lamport"),
    (1024 * 8192 + 8, {"algorithm": "two_shot_lamport"}, "default", "its buffers take messages up to 16777216 bytes",
     "staging"),
])
def test_allreduce_choice_lamport_cap(tmp_path, recwarn, monkeypatch, n, config, source, warning, workspace):
    from symmtune import cache
    from test_cache import GPU, entry, write_cache
    monkeypatch.setattr(_native, "_warned", set())
    tuned = {"threads": 256, "blocks": 4, "unroll": 1, **config}
    e = entry(256 * 8192, "x", GPU, kernel_version=kernels.kernel_version(), dtype="bf16", config=tuned)
    path = write_cache(tmp_path / "c.toml", [e])
    c = cache.chosen(_native.call("allreduce.choose", n=n, dtype="bf16", world=4, cache=path, hardware=GPU.as_dict()))
    assert c["source"] == source, c
    # A Lamport algorithm's buffers are a workspace of their own, named after
    # it (Go's TestArRegion has the sizes).
    assert c["workspace"] == workspace, c
    msgs = [str(w.message) for w in recwarn.list]
    assert msgs == [] if warning is None else len(msgs) == 1 and warning in msgs[0], msgs


@pytest.mark.parametrize("config,n,want,warning", [
    # Laid over the size's default; past the cap the default runs, warned.
    ({"algorithm": "one_shot_lamport", "blocks": 8}, 8192, {"algorithm": "one_shot_lamport", "blocks": 8}, None),
    ({"algorithm": "two_shot_push"}, 8192, {"algorithm": "two_shot_push"}, None),
    ({"algorithm": "one_shot_lamport"}, 1 << 22, None, "does not run for n=4194304"),
    ({"algorithm": "two_shot_lamport", "blocks": 4}, 16 * 8192, {"algorithm": "two_shot_lamport", "blocks": 4}, None),
    ({"algorithm": "two_shot_lamport"}, 1 << 22, {"algorithm": "two_shot_lamport"}, None),
    ({"algorithm": "two_shot_lamport"}, (1 << 23) + 8, None, "does not run for n=8388616"),
])
def test_allreduce_choice_forced(recwarn, monkeypatch, config, n, want, warning):
    from symmtune import cache
    monkeypatch.setattr(_native, "_warned", set())
    c = cache.chosen(_native.call("allreduce.choose", n=n, dtype="bf16", world=2, config=config))
    default = _native.call("allreduce.default", n=n, elt=2, world=2)["config"]
    if want is None:
        assert c["source"] == "default" and c["config"] == default
    else:
        assert c["source"] == "forced" and c["config"] == {**default, **want}
    msgs = [str(w.message) for w in recwarn.list]
    assert msgs == [] if warning is None else len(msgs) == 1 and warning in msgs[0], msgs
