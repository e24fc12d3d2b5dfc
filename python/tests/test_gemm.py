"""symmtune.gemm, the torch-free half of symmtune.torch's GEMMs, bound to
libsymmtune: the kernel version (of the sources on disk), the default
config, the config rules as the bindings report them and the plans'
invariants (TestPlanParity in kernels/gemm/gpu holds the plans, the space
and Validate through the bindings equal to Go's)."""
from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

import pytest

from symmtune import _native, gemm, hopper, kernels

REPO = Path(__file__).resolve().parents[2]
GPU_DIR = REPO / "kernels/gemm/gpu"


def embedded_files() -> list[str]:
    """The files version.go's //go:embed line names, in fs.WalkDir's
    lexical order: what gpu.KernelVersion hashes besides the Hopper GEMM."""
    m = re.search(r"^//go:embed (.+)$", (GPU_DIR / "version.go").read_text(), re.M)
    assert m is not None, "version.go: no //go:embed line"
    return sorted(m.group(1).split(), key=lambda path: path.split("/"))


def test_util_source_is_the_plugins_file():
    assert gemm.util_source() == (GPU_DIR / "kernels/gemm_util.cu").read_text()


def test_kernel_version_is_of_the_sources_on_disk():
    """The library's version is sdk.SourceHash of the kernel's name, the
    Hopper GEMM's source, the team barrier's and the embedded files as they
    are on disk: a library built from other sources fails here."""
    hop = REPO / "kernels/gemm/hopper"
    barrier = (REPO / "symm/cudamem/barrier.cuh").read_bytes()
    for k in gemm.KERNELS:
        want = kernels.source_hash(k.encode(), b"".join((hop / f).read_bytes() for f in hopper.PARTS), barrier,
                                   *[(GPU_DIR / f).read_bytes() for f in embedded_files()])
        assert gemm.kernel_version(k) == want
    assert gemm.kernel_version(gemm.AGMM) != gemm.kernel_version(gemm.MATMULRS)
    with pytest.raises(ValueError, match="unknown GPU GEMM kernel"):
        gemm.kernel_version("allreduce")


def test_space_offers_every_searched_tile():
    for k in gemm.KERNELS:
        impls = gemm.SPACE[k]["impl"]
        assert impls[0] == "pipeline" and [i.removeprefix("fused:") for i in impls[1:]] == list(hopper.searched())
    cfg = gemm.parse_config("matmulrs", {**gemm.default_config("matmulrs"), "impl": "fused:" + hopper.searched()[0]})
    assert (cfg.impl, str(cfg.tile)) == ("fused", hopper.searched()[0])
    assert gemm.parse_config("agmm", gemm.default_config("agmm")).tile is None


FUSED = "fused:" + hopper.searched()[0]


# space_test.go's TestValidate cases of impl=fused.
@pytest.mark.parametrize("kernel,change,m,n,k,world,msg", [
    ("agmm", {}, 8192, 3584, 8192, 4, ""),
    ("agmm", {"chunks": 8, "direction": "push"}, 1002, 1096, 520, 2, ""),
    ("agmm", {}, 8192, 3584, 1001, 4, "multiple of 8"),
    ("agmm", {}, 8192, 3583, 8192, 4, "n a multiple of 8"),
    ("agmm", {"copy": "sm"}, 8192, 3584, 8192, 4, "copy engines only"),
    ("agmm", {"streams": 2}, 8192, 3584, 8192, 4, "one persistent kernel"),
    ("agmm", {"sm_reserve": 8}, 8192, 3584, 8192, 4, "no SMs beside the GEMM"),
    ("agmm", {"streams": 3, "chunks": 1}, 8192, 64, 64, 2, "one persistent kernel"),
    ("matmulrs", {"chunks": 8}, 8192, 3584, 8192, 8, ""),
    ("matmulrs", {"push": "gemm", "sm_reserve": 16}, 8192, 3584, 8192, 4, ""),
    ("matmulrs", {}, 1002, 999, 1000, 2, "n a multiple of 8"),
    ("matmulrs", {"chunks": 8}, 16, 8, 8, 4, "exceed the 4 rows"),
])
def test_validate_fused(kernel, change, m, n, k, world, msg):
    cfg = gemm.parse_config(kernel, {**gemm.default_config(kernel), "impl": FUSED, **change})
    if not msg:
        gemm.validate(cfg, gemm.Problem(m, n, k, world))
        return
    with pytest.raises(ValueError, match=msg):
        gemm.validate(cfg, gemm.Problem(m, n, k, world))


def test_validate_fused_rejects_tiles():
    cfg = gemm.parse_config("agmm", {**gemm.default_config("agmm"), "impl": FUSED})
    with pytest.raises(ValueError, match=r"^impl=fused: block_n 104: wgmma tiles are \[48 64 80 96 112 128 160 192 224 256\] wide$"):
        gemm.validate(replace(cfg, tile=hopper.Tile(128, 104)), gemm.Problem(8192, 3584, 8192, 4))
    # A typed config the library cannot plan is bad input too, not a crash.
    with pytest.raises(ValueError, match="chunks 0"):
        gemm.validate(replace(cfg, chunks=0), gemm.Problem(8192, 3584, 8192, 4))


@pytest.mark.parametrize("kernel", gemm.KERNELS)
def test_default_parses_and_fits(kernel):
    c = gemm.default_config(kernel)
    cfg = gemm.parse_config(kernel, c)
    assert cfg.chunks == 2 and cfg.streams == 1
    p = gemm.Problem(8192, 3584, 8192, 4)
    gemm.validate(cfg, p)


@pytest.mark.parametrize("change,msg", [
    ({"chunks": 3}, r'parameter "chunks": 3 is not one of \[1 2 4 8\]'),
    ({"direction": "sideways"}, 'parameter "direction"'),
    ({"batch": True}, 'parameter "batch": value true: want an integer or a string'),
    ({"colour": 1}, 'unknown parameter "colour"'),
])
def test_parse_config_errors(change, msg):
    c = {**gemm.default_config(gemm.AGMM), **change}
    with pytest.raises(ValueError, match=msg):
        gemm.parse_config(gemm.AGMM, c)
    c = gemm.default_config(gemm.MATMULRS)
    del c["push"]
    with pytest.raises(ValueError, match='parameter "push" missing'):
        gemm.parse_config(gemm.MATMULRS, c)


@pytest.mark.parametrize("m,world,chunks,streams,batch", [
    (8192, 4, 4, 2, False), (8192, 4, 4, 2, True), (999 * 3, 3, 8, 3, True), (16, 8, 2, 1, False)])
def test_plans_cover_every_row_once(m, world, chunks, streams, batch):
    """The library's plans (Python keeps none: the launch sequences run in Go)."""
    rows = m // world

    def covered(products: list) -> list:
        return sorted((s["start"], s["rows"]) for st in products
                      for s in _native.call("gemm.step_spans", step=st, rows=rows))

    for r in range(world):
        o = {"m": m, "world": world, "rank": r, "chunks": chunks, "streams": streams, "batch": batch}
        ag = _native.call("gemm.plan", kernel=gemm.AGMM, **o)
        got = covered(ag["products"])
        assert sum(n for _, n in got) == m and got[0][0] == 0
        assert all(a + n == b for (a, n), (b, _) in zip(got, got[1:]))
        assert ag["products"][0]["owner"] == r  # the own shard first
        rs = _native.call("gemm.plan", kernel=gemm.MATMULRS, **o)
        got = covered(rs["products"])
        assert sum(n for _, n in got) == m
        assert [s["owner"] for s in rs["reduces"]] == [r] * chunks
        assert all(0 <= st["stream"] < streams for st in ag["products"] + rs["products"])


def test_layout():
    assert gemm.PAYLOAD_OFFSET == 8192 and gemm.PAYLOAD_OFFSET % 4096 == 0
    c = _native.constants()["gemm"]
    assert c["partial_flag"][3][2] == 26 and c["ready_flag"][1] == 65 and c["start_flag"][1] == 73


# gemm.choose: the config a first call runs, from a cache like `symmtune search` writes.
from test_cache import GPU, T0, write_cache  # noqa: E402

from symmtune import CacheError, cache  # noqa: E402


def gemm_entry(kernel: str, m: int, config: dict, version: str | None = None, **kw) -> dict:
    e = {"kernel": kernel, "kernel_version": version or gemm.kernel_version(kernel), "backend": "cuda",
         "hardware": GPU.id(), "world": 4, "dtype": "bf16", "shape": {"m": m, "n": 3584, "k": 8192},
         "config": config, "median_us": 512.5, "min_us": 500.0, "p90_us": 530.0, "default_median_us": 600.0,
         "trials": 40, "tuned_at": T0, "hardware_info": GPU.as_dict()}
    e.update(kw)
    return e


def choose(kernel: str, p: gemm.Problem, dtype: str, path, **gpu) -> dict:
    """What symmtune.torch's first call asks (one gemm.choose request, as
    _torch_gemm._pipeline makes it, on GPU's fingerprint) and takes of the
    answer (cache.chosen: the error raised, the warnings given once)."""
    return cache.chosen(_native.call("gemm.choose", kernel=kernel, **p.request(), dtype=dtype, cache=str(path),
                                     env=dict(os.environ), hardware=GPU.as_dict(), **gpu))


def median(c: dict) -> tuple:
    return c["config"], c["source"], c["median_us"]


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(_native, "_warned", set())


def test_choose(tmp_path, recwarn):
    tuned = {**gemm.default_config("agmm"), "chunks": 8, "streams": 2, "direction": "push"}
    path = write_cache(tmp_path / "c.toml", [gemm_entry("agmm", 8192, tuned),
                                             gemm_entry("matmulrs", 8192, gemm.default_config("matmulrs"), "0ld")])
    p = gemm.Problem(8192, 3584, 8192, 4)
    c = choose("agmm", p, "bf16", path)
    assert median(c) == (tuned, "tuned", 512.5)
    assert (c["symmetric_bytes"], c["b_kn"]) == (gemm.PAYLOAD_OFFSET + 8192 * 8192 * 2, False)
    assert choose("agmm", gemm.Problem(4096, 3584, 8192, 4), "bf16", path)["source"] == "nearest"
    assert not recwarn.list
    # Tuned for another version of the sources: the default, and one warning.
    for _ in range(2):
        c = choose("matmulrs", p, "bf16", path)
        assert median(c) == (gemm.default_config("matmulrs"), "default", None)
    assert len(recwarn.list) == 1
    msg = str(recwarn.pop().message)
    assert "no tuned matmulrs" in msg and "symmtune search --backend cuda --kernel matmulrs --world 4 " \
        "--shape m=8192,n=3584,k=8192 --dtype bf16" in msg
    # The nearest shape's config does not fit (8 chunks of 2 rows per rank): the default, fitted.
    c = choose("agmm", gemm.Problem(8, 3584, 8192, 4), "bf16", path)
    assert (c["source"], c["config"]["chunks"]) == ("default", 2)
    assert "does not run on m=8,n=3584,k=8192 (chunks 8 exceed the 2 rows" in str(recwarn.pop().message)
    # No cache at all: the default.
    assert choose("agmm", p, "f16", tmp_path / "none.toml")["source"] == "default"


@pytest.mark.filterwarnings("ignore:symmtune. no tuned")
@pytest.mark.parametrize("kernel", ["agmm", "matmulrs"])
@pytest.mark.parametrize("dtype", ["bf16", "e4m3", "e4m3_row"])
def test_untuned_default_knows_the_gpu(tmp_path, kernel, dtype):
    """With no cache entry the runtime's default is the GPU family's (Go's
    DefaultOn): a fused tile on sm_90, the pipeline elsewhere and when the
    GPU is not given."""
    p, none = gemm.Problem(8192, 3584, 8192, 2), tmp_path / "none.toml"
    hopper = choose(kernel, p, dtype, none, major=9, minor=0, sms=132)
    assert hopper["source"] == "default" and hopper["config"]["impl"].startswith("fused:")
    gemm.validate(gemm.parse_config(kernel, hopper["config"]), p, dtype)
    for gpu in ({"major": 8, "minor": 9}, {}):
        c = choose(kernel, p, dtype, none, **gpu)
        assert c["config"]["impl"] == "pipeline", gpu


def test_choose_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("version = 1\n[[entry]\nkernel = 3\n")
    p = gemm.Problem(8192, 3584, 8192, 4)
    with pytest.raises(CacheError, match=f"{bad}: line "):
        choose("agmm", p, "bf16", bad)
    with pytest.raises(ValueError, match="take bf16 or f16"):
        choose("agmm", p, "f32", bad)
    with pytest.raises(ValueError, match="not divisible by world 4"):
        choose("matmulrs", gemm.Problem(8190, 8, 8, 4), "bf16", bad)
    for dt in ("e5m2", "fp8", "E4M3", "e4m3_col"):
        with pytest.raises(ValueError, match=f'dtype "{dt}"'):
            choose("agmm", p, dt, bad)
    with pytest.raises(ValueError, match="multiples of 16"):  # FP8 takes n and k in multiples of 16 bytes
        choose("agmm", gemm.Problem(12, 16, 24, 4), "e4m3", bad)
    # A forced config (benchmarks: symmtune._torch_gemm.forced) is checked on the problem.
    with pytest.raises(ValueError, match="chunks 8 exceed the 2 rows"):
        choose("agmm", gemm.Problem(8, 3584, 8192, 4), "bf16", bad, config={**gemm.default_config("agmm"), "chunks": 8})
    c = choose("agmm", p, "bf16", bad, config=gemm.default_config("agmm"))
    assert median(c) == (gemm.default_config("agmm"), "forced", None)


SM80 = {"major": 8, "minor": 0, "sms": 108}
NO_FUSED = "the fused GEMM needs an sm_90 GPU (wgmma, TMA); this one is sm_80"


def test_choose_runs_the_default_for_a_fused_config_the_gpu_cannot_run(tmp_path, recwarn):
    fused = {**gemm.default_config("agmm"), "impl": FUSED, "chunks": 4}
    rs_fused = {**gemm.default_config("matmulrs"), "impl": FUSED, "push": "gemm"}
    piped = {**gemm.default_config("agmm"), "chunks": 8}
    path = write_cache(tmp_path / "c.toml", [gemm_entry("agmm", 8192, fused), gemm_entry("agmm", 512, piped),
                                             gemm_entry("agmm", 4, {**fused, "chunks": 1}),
                                             gemm_entry("matmulrs", 8192, rs_fused)])
    p = gemm.Problem(8192, 3584, 8192, 4)
    assert choose("agmm", p, "bf16", path)["config"] == fused  # without the GPU, the lookup keeps it
    for shape in (p, gemm.Problem(4096, 3584, 8192, 4)):  # tuned, then nearest: the same config, one warning
        c = choose("agmm", shape, "bf16", path, **SM80)
        assert median(c) == (gemm.default_config("agmm"), "default", None)
    assert len(recwarn.list) == 1
    msg = str(recwarn.pop().message)
    assert f"the tuned agmm config for 4 ranks, bf16, m=8192,n=3584,k=8192 is impl={FUSED} (" in msg
    assert "chunks=4" in msg and f"; {NO_FUSED}, so symmtune.torch" in msg
    assert "runs the default pipeline config" in msg
    # A pipeline config passes through, with no warning.
    c = choose("agmm", gemm.Problem(512, 3584, 8192, 4), "bf16", path, **SM80)
    assert (c["config"], c["source"]) == (piped, "tuned") and not recwarn.list
    # matmulrs alike.
    c = choose("matmulrs", p, "bf16", path, **SM80)
    assert (c["config"], c["source"]) == (gemm.default_config("matmulrs"), "default")
    assert f"impl={FUSED}" in str(recwarn.pop().message) and not recwarn.list
    # Another fused config warns again; the default is fitted to the problem (one row per rank: one chunk).
    c = choose("agmm", gemm.Problem(4, 3584, 8192, 4), "bf16", path, **SM80)
    assert (c["config"], c["source"]) == ({**gemm.default_config("agmm"), "chunks": 1}, "default")
    assert "chunks=1" in str(recwarn.pop().message) and not recwarn.list
    # Where the fused GEMM runs, a fused config is what runs.
    c = choose("agmm", p, "bf16", path, major=9, minor=0, sms=132)
    assert (c["config"], c["source"]) == (fused, "tuned") and not recwarn.list


def test_a_config_cached_before_reduce_existed_reduces_with_the_kernel():
    c = gemm.default_config(gemm.MATMULRS)
    del c["reduce"]
    assert gemm.parse_config(gemm.MATMULRS, c).reduce == "kernel"
    with pytest.raises(ValueError, match='unknown parameter "reduce"'):
        gemm.parse_config(gemm.AGMM, {**gemm.default_config(gemm.AGMM), "reduce": "kernel"})


@pytest.mark.parametrize("change,rows,msg", [
    ({}, 2048, None),
    ({"impl": "pipeline"}, 2048, "only the fused GEMM"),
    ({"reduce_blocks": 64}, 2048, "reduce_blocks and sm_reserve"),
    ({"sm_reserve": 8}, 2048, "reduce_blocks and sm_reserve"),
    ({}, 1000, "would wait on a peer that waits on it"),
    ({"impl": "fused:256x128:s4:c2:g8:cl2"}, 2048, "swizzle groups"),  # 4 peer tile rows of 512, groups of 8
    ({"impl": "fused:256x128:s4:c2:g8:cl2"}, 4096, None),
])
def test_epilogue_reduction_validate(change, rows, msg):
    c = {**gemm.default_config(gemm.MATMULRS), "impl": f"fused:{hopper.searched()[0]}", "reduce": "epilogue", **change}
    p = gemm.Problem(2 * rows, 3584, 8192, 2)
    if msg is None:
        gemm.validate(gemm.parse_config(gemm.MATMULRS, c), p)
    else:
        with pytest.raises(ValueError, match=msg):
            gemm.validate(gemm.parse_config(gemm.MATMULRS, c), p)


@pytest.mark.parametrize("change,m,world,rank,want", [
    ({"direction": "pull"}, 4096, 2, 1, False),  # peers read the shard from the workspace
    ({"direction": "push"}, 999, 3, 2, True),  # the pipeline's products take any rows
    ({"direction": "push", "impl": "fused:128x224:s4:c2:g8"}, 4096, 2, 1, True),
    ({"direction": "push", "impl": "fused:128x224:s4:c2:g8"}, 2 * 328, 2, 1, False),  # tile 2 holds rows of both
    ({"direction": "push", "impl": "fused:128x224:s4:c2:g8"}, 2 * 328, 2, 0, False),  # so does rank 0's last
    ({"direction": "push", "impl": "fused:128x224:s4:c2:g8"}, 2 * 256 + 2, 2, 1, False),
    ({"direction": "push", "impl": "fused:128x224:s4:c2:g8"}, 3 * 320, 3, 2, True),  # rows 640-959: a tail tile
    ({"direction": "push", "impl": "fused:128x224:s4:c2:g8"}, 3 * 320, 3, 1, False),
])
def test_shard_in_place(change, m, world, rank, want):
    c = gemm.parse_config(gemm.AGMM, {**gemm.default_config(gemm.AGMM), **change})
    p = gemm.Problem(m, 1792, 4096, world)
    assert _native.call("gemm.shard_in_place", config=c.request(), problem=p.request(), rank=rank)["in_place"] is want


# FP8 (docs/fp8.md): the dtype names e4m3 (tensor scales) and e4m3_row (row scales).
def test_fp8_dtype_names():
    assert gemm.DTYPES == ("bf16", "f16", "e4m3", "e4m3_row")
    assert gemm.SCALED_DTYPES == ("e4m3", "e4m3_row")  # their errors: test_choose_errors


@pytest.mark.parametrize("dtype, capability, why", [
    ("bf16", (8, 0), None),
    ("e4m3", (9, 0), None),
    ("e4m3_row", (8, 9), None),
    ("e4m3", (8, 0), "dtype e4m3 needs FP8 tensor cores .* this GPU is 8.0"),
    ("e4m3_row", (8, 6), "this GPU is 8.6"),
    ("e5m2", (9, 0), 'dtype "e5m2"'),
])
def test_check_device(dtype, capability, why):
    # The rule is Go's (gpu.Dtype.CheckDevice), asked through the library.
    if why is None:
        gemm.check_device(dtype, capability)
    else:
        with pytest.raises(ValueError, match=why):
            gemm.check_device(dtype, capability)


@pytest.mark.filterwarnings("ignore:symmtune. no tuned")
def test_fp8_layout(tmp_path):
    """The workspace of an FP8 problem, as gemm.choose answers it: agmm
    gathers 1-byte rows of A (and, row-wise, their fp32 scales after them,
    16-byte aligned); matmulrs' slots hold bf16 partials as for bf16 (C is
    bf16 in every path)."""
    def size(kernel: str, p: gemm.Problem, dtype: str) -> int:
        return choose(kernel, p, dtype, tmp_path / "none.toml")["symmetric_bytes"]
    assert size("agmm", gemm.Problem(12, 20, 3, 4), "bf16") == 8192 + 12 * 3 * 2
    assert size("matmulrs", gemm.Problem(12, 5, 3, 4), "bf16") == 8192 + 4 * 16 * 2  # slots of 16 elements
    p = gemm.Problem(16, 16, 16, 4)
    assert size("agmm", p, "e4m3") == 8192 + 16 * 16
    p = gemm.Problem(64, 16, 48, 4)
    assert size("agmm", p, "e4m3_row") == 8192 + 64 * 48 + 64 * 4
    for dt in gemm.SCALED_DTYPES:
        assert size("matmulrs", p, dt) == size("matmulrs", p, "bf16") == 8192 + 4 * (16 * 16) * 2  # world slots of rows x n


def test_choose_keeps_fp8_winners_apart(tmp_path, recwarn):
    """The cache's dtype is part of the key: bf16, e4m3 and e4m3_row each
    get their own winner, and an FP8 dtype with none gets the default with
    a warning naming the search to run for that dtype."""
    base = gemm.default_config("agmm")
    bf16, e4m3 = {**base, "chunks": 8}, {**base, "chunks": 4, "direction": "push"}
    path = write_cache(tmp_path / "c.toml", [gemm_entry("agmm", 8192, bf16),
                                             gemm_entry("agmm", 8192, e4m3, dtype="e4m3", median_us=300.0)])
    p = gemm.Problem(8192, 3584, 8192, 4)
    assert choose("agmm", p, "bf16", path)["config"] == bf16
    assert median(choose("agmm", p, "e4m3", path)) == (e4m3, "tuned", 300.0)
    c = choose("agmm", gemm.Problem(4096, 3584, 8192, 4), "e4m3", path)
    assert (c["config"], c["source"]) == (e4m3, "nearest")
    assert not recwarn.list
    c = choose("agmm", p, "e4m3_row", path, **SM80)
    assert (c["config"], c["source"]) == (_native.call("gemm.default", kernel="agmm", problem=p.request(dtype="e4m3_row")),
                                          "default")
    msg = str(recwarn.pop().message)
    assert "no tuned agmm for 4 ranks, e4m3_row" in msg and "--dtype e4m3_row" in msg and not recwarn.list


def test_choose_fp8_fused_on_a_gpu_without_it(tmp_path, recwarn):
    fused = {**gemm.default_config("matmulrs"), "impl": FUSED, "push": "gemm"}
    path = write_cache(tmp_path / "c.toml", [gemm_entry("matmulrs", 8192, fused, dtype="e4m3_row")])
    p = gemm.Problem(8192, 3584, 8192, 4)
    assert choose("matmulrs", p, "e4m3_row", path)["config"] == fused
    c = choose("matmulrs", p, "e4m3_row", path, **SM80)
    assert (c["config"], c["source"]) == (gemm.default_config("matmulrs"), "default")
    assert "matmulrs config for 4 ranks, e4m3_row, m=8192,n=3584,k=8192 is impl=" in str(recwarn.pop().message)
