"""symmtune._cublaslt, the products of symmtune.torch's pipelines: what can
be checked without a GPU (the structure the heuristic fills, the library
search order, the argument checks before any call, and that its constants
are the Go plugins'). The GPU check, that both ask the heuristic the same
question and get the same algorithms, is bench/lt_parity.sh's."""
from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest

from symmtune import _cublaslt

REPO = Path(__file__).resolve().parents[2]


def test_heuristic_result_is_cublaslts_96_bytes():
    # cublasLtMatmulHeuristicResult_t: 64-byte algo, size_t, int, float, int[4].
    assert ctypes.sizeof(_cublaslt._Heuristic) == 96
    assert _cublaslt._Heuristic.workspace_size.offset == 64


def test_constants_are_the_go_plugins():
    go_ws = re.search(r"const workspaceBytes = (\d+) << (\d+)",
                      (REPO / "kernels/gemm/gpu/instance_cuda.go").read_text())
    assert go_ws and int(go_ws[1]) << int(go_ws[2]) == _cublaslt.WORKSPACE_BYTES
    go_algos = re.search(r"const MaxAlgos = (\d+)", (REPO / "cuda/cublaslt/cublaslt.go").read_text())
    assert go_algos and int(go_algos[1]) == _cublaslt.MAX_ALGOS
    go_src = (REPO / "cuda/cublaslt/cublaslt.go").read_text()
    for name, value in [("LT_DESC_TRANSA", _cublaslt._DESC_TRANSA), ("LT_DESC_SM_COUNT_TARGET", _cublaslt._DESC_SM_COUNT_TARGET),
                        ("LT_OP_T", _cublaslt._OP_T), ("LT_COMPUTE_32F", _cublaslt._COMPUTE_32F),
                        ("LT_R_16BF", _cublaslt._R_16BF), ("LT_R_16F", _cublaslt._R_16F)]:
        m = re.search(name + r" = (\d+)", go_src)
        assert m and int(m[1]) == value, name


def test_candidates(monkeypatch):
    monkeypatch.setenv("SYMMTUNE_CUBLASLT", "/opt/x/libcublasLt.so.99")
    assert _cublaslt.candidates() == ["/opt/x/libcublasLt.so.99"]
    monkeypatch.delenv("SYMMTUNE_CUBLASLT")
    c = _cublaslt.candidates()
    # The bare sonames first (the copy torch loaded, where it did), each once.
    assert c[:4] == ["libcublasLt.so.14", "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"]
    assert len(c) == len(set(c))


@pytest.mark.parametrize("kw,msg", [
    (dict(m=0, n=8, k=8, dtype="bf16"), "every dimension must be positive"),
    (dict(m=8, n=8, k=8, dtype="f32"), "bf16 or f16"),
    (dict(m=8, n=8, k=8, dtype="bf16", batch=2, stride_a=63, stride_d=64), "overlap"),
    (dict(m=8, n=8, k=8, dtype="bf16", batch=2, stride_a=64, stride_d=63), "overlap"),
])
def test_plan_refuses_bad_shapes_before_any_call(monkeypatch, kw, msg):
    def no_library():
        raise AssertionError("loaded the library for a bad plan")
    monkeypatch.setattr(_cublaslt, "lib", no_library)
    with pytest.raises(ValueError, match=msg):
        _cublaslt.Plan(0, **kw)
