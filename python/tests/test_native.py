"""symmtune._native, the loader of libsymmtune and the bindings' error
handling: codes become ValueError (bad input, the library's message naming
the argument) or NativeError; answers larger than the first buffer are
asked for again; the ABI version is checked; nothing loads at import; a
forked child gets an error instead of a hang."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from symmtune import _native, gemm, hopper, kernels

PYTHON_DIR = Path(__file__).resolve().parents[1]


def test_import_loads_nothing():
    """import symmtune (and the binding modules) loads neither libsymmtune
    nor any CUDA library."""
    code = ("import symmtune, symmtune.gemm, symmtune.hopper, symmtune.kernels, symmtune.hardware, sys\n"
            "from symmtune import _native\n"
            "maps = open('/proc/self/maps').read()\n"
            "assert _native._lib is None and 'libsymmtune' not in maps, 'loaded at import'\n"
            "assert 'libcuda' not in maps and 'nvrtc' not in maps, 'CUDA loaded at import'\n")
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


@pytest.mark.parametrize("call,match", [
    (lambda: hopper.parse_tile("128x25x"), r'^tile "128x25x": want BMxBN'),
    (lambda: hopper.parse_tile("128x256:q4"), r'^tile "128x256:q4", part "q4"'),
    (lambda: hopper.Tile(128, 100).check(), r"^block_n 100: wgmma tiles"),
    (lambda: hopper.check_shape(8, 12), r"^k=12:"),
    (lambda: _native.call("gemm.choose", kernel="agmm", m=6, n=8, k=8, world=4, dtype="bf16"), "m=6 is not divisible by world 4"),
    (lambda: _native.call("gemm.choose", kernel="nope", m=8, n=8, k=8, world=4, dtype="bf16"), 'kernel "nope"'),
    (lambda: _native.call("gemm.plan", kernel="agmm", m=8, world=2, rank=5, chunks=1, streams=1), "rank 5 outside 0..1"),
    (lambda: gemm.parse_config("agmm", {**gemm.default_config("agmm"), "chunks": 1.5}), 'parameter "chunks"'),
    (lambda: _native.call("gemm.fused_plan", m=8, world=2, rank=0, chunks=1, rows_per_tile=0), "rows_per_tile 0"),
    (lambda: _native.call("gemm.rs_table", bounds=[0, 64], owner=[1], index=[0], expect=[1], dst=[0] * 9, flag=[0]),
     "9 owners"),
    (lambda: _native.call("allreduce.default", n=1024, elt=3, world=2), "elt 3"),
    (lambda: kernels.macros("f64", 2), 'dtype "f64"'),
    (lambda: _native.call("gemm.plan", kernel="agmm", rows=3), 'unknown field "rows"'),
    (lambda: _native.call("no.such.op"), 'unknown operation "no.such.op"'),
])
def test_bad_input_is_value_error_naming_it(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_answer_larger_than_the_first_buffer_is_asked_for_again():
    big = _native.call("ops")  # a few KiB of answer
    code, text = _native.raw_call("ops", b"{}", cap=16)
    assert code == _native.OK and len(text) > 16
    assert _native.call("ops") == big
    # An error message that does not fit comes back whole too.
    code, text = _native.raw_call("hopper.tile", b'{"name":"' + b"9" * 100 + b'"}', cap=8)
    assert code == _native.BAD_INPUT and text.startswith(b'tile "999') and len(text) > 100


def test_abi_version_mismatch_says_what_to_do(monkeypatch):
    with pytest.raises(_native.NativeError, match=r"has ABI version 7, this symmtune package needs 4: rebuild it "
                                                  r"\(`make lib`\)"):
        _native.check_abi(7, Path("/x/libsymmtune.so"))
    # The loader checks it on load.
    monkeypatch.setattr(_native, "ABI_VERSION", 99)
    with pytest.raises(_native.NativeError, match="needs 99"):
        _native._Library(_native.library_path())


def test_missing_library_says_how_to_get_one(monkeypatch, tmp_path):
    monkeypatch.setenv(_native.ENV_LIB, str(tmp_path / "none.so"))
    with pytest.raises(_native.NativeError, match="does not exist: build it with `make lib`"):
        _native._Library(_native.library_path())
    bad = tmp_path / "bad.so"
    bad.write_text("not a library")
    with pytest.raises(_native.NativeError, match="cannot load"):
        _native._Library(bad)


def test_constants_are_the_librarys():
    c = _native.constants()["gemm"]
    assert gemm.PAYLOAD_OFFSET == c["payload_offset"] and gemm.MAX_STREAMS == 3
    assert gemm.SPACE["matmulrs"]["reduce"] == ("kernel", "epilogue")
    assert gemm._ADDED_LATER == {"reduce": "kernel", "fast_accum": 1}  # fast_accum=0: FP8 pipelines only
    rs = _native.call("gemm.fused_plan", m=64, n=64, world=2, rank=0, chunks=1, block_m=64, block_n=128,
                      rows_per_tile=64)["rs"]
    table = _native.call("gemm.rs_table", **{k: rs[k] for k in ("bounds", "owner", "index", "expect")}, dst=[0, 0],
                         flag=[0, 0])
    assert c["rs_table_bytes"] == len(bytes.fromhex(table["hex"]))
    assert hopper.SMEM_LIMIT == 232448 and hopper.PARTS[-1] == "hopper_gemm.cu"
    with pytest.raises(AttributeError):
        gemm.NO_SUCH_CONSTANT  # noqa: B018


def test_tile_defaults_are_parse_tiles():
    """Tile's dataclass defaults are ParseTile's for a bare BMxBN."""
    assert hopper.parse_tile("128x256") == hopper.Tile(128, 256)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_gets_an_error_not_a_hang():
    _native.call("constants")  # loaded in this process
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: must not call into the Go runtime
        try:
            _native.call("ops")
            os.write(w, b"called")
        except _native.NativeError as e:
            os.write(w, str(e).encode()[:200])
        finally:
            os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    msg = os.read(r, 400).decode()
    os.close(r)
    assert "does not survive fork" in msg, msg


def test_gemm_open_without_a_gpu_says_so():
    """The library checks a runner's request, then (no GPU, or a library
    built without CUDA) says why it runs no kernel."""
    req = {"kernel": "agmm", "m": 4096, "n": 1024, "k": 1024, "world": 2, "rank": 1, "dtype": "bf16", "device": 0,
           "config": {"algo": 0, "batch": 0, "chunks": 2, "copy": "ce", "copy_blocks": 4, "direction": "pull",
                      "graph": 1, "impl": "pipeline", "sm_reserve": 0, "streams": 1}}
    with pytest.raises(ValueError, match="rank 2"):
        _native.gemm_open({**req, "rank": 2}, [4096, 8192], 4096)
    with pytest.raises(ValueError, match="2 regions for world 2|1 regions for world 2"):
        _native.gemm_open(req, [4096], 4096)
    with pytest.raises(_native.NativeError, match="CUDA"):
        _native.gemm_open(req, [4096, 8192], 4096)
    with pytest.raises(ValueError, match="handle 99: not open"):
        _native.gemm_enqueue(99, 0, 64, 1, 2, 3)
    with pytest.raises(ValueError, match="handle 99: not open"):
        _native.gemm_enqueue_scaled(99, 0, 64, 1, 2, 3, 0, 4, 5)
    # An FP8 request is checked as a bf16 one is, then needs the GPU too.
    with pytest.raises(ValueError, match='dtype "e5m2"'):
        _native.gemm_open({**req, "dtype": "e5m2"}, [4096, 8192], 4096)
    for dt in ("e4m3", "e4m3_row"):
        with pytest.raises(_native.NativeError, match="CUDA"):
            _native.gemm_open({**req, "dtype": dt}, [4096, 8192], 4096)


def test_allreduce_open_without_a_gpu_says_so():
    """Likewise for the all-reduce runner: the request checked (a config
    the runner does not run, a region count), then no kernel without a GPU."""
    req = {"region_bytes": 6 << 20, "world": 2, "rank": 1, "dtype": "bf16", "device": 0,
           "config": {"algorithm": "two_shot_push", "threads": 128, "blocks": 1, "unroll": 1}}
    with pytest.raises(ValueError, match="two_shot_ce_ag"):
        _native.allreduce_open({**req, "config": {**req["config"], "algorithm": "two_shot_ce_ag"}}, [4096, 8192], 4096)
    with pytest.raises(ValueError, match="1 regions for world 2"):
        _native.allreduce_open(req, [4096], 4096)
    with pytest.raises(_native.NativeError, match="CUDA"):
        _native.allreduce_open(req, [4096, 8192], 4096)
    with pytest.raises(ValueError, match="handle 99: not open"):
        _native.allreduce_enqueue(99, 0, 1, 10)
