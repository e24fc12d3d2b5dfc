"""symmtune.torch's GEMM entry points refuse bad operands with one clear
error before touching a GPU or a process group (skipped where torch is not
installed, as in CI; the GPU runs are bench/torch_gemm.py's)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
st = pytest.importorskip("symmtune.torch")


@pytest.mark.parametrize("fn", ["all_gather_matmul", "matmul_reduce_scatter"])
@pytest.mark.parametrize("a,b,err,msg", [
    (torch.zeros(2, 3, 4, dtype=torch.bfloat16), torch.zeros(4, 5, dtype=torch.bfloat16), ValueError, "want a 2-D"),
    (torch.zeros(4, 4, dtype=torch.float32), torch.zeros(4, 5, dtype=torch.float32), TypeError, "bf16 or f16"),
    (torch.zeros(4, 4, dtype=torch.bfloat16), torch.zeros(4, 5, dtype=torch.float16), TypeError, "the other operand"),
    (torch.zeros(4, 4, dtype=torch.bfloat16), torch.zeros(4, 5, dtype=torch.bfloat16), ValueError, "current CUDA device"),
])
def test_bad_operands(fn, a, b, err, msg):
    with pytest.raises(err, match=msg):
        getattr(st, fn)(a, b)


def _f8(*shape):
    return torch.zeros(*shape).to(torch.float8_e4m3fn)


def _w(n, k):  # b as torch._scaled_mm takes it: the transpose of a contiguous [N, K]
    return _f8(n, k).t()


ONE = torch.ones(1)


@pytest.mark.parametrize("fn", ["all_gather_scaled_matmul", "scaled_matmul_reduce_scatter"])
@pytest.mark.parametrize("args,kw,err,msg", [
    ((_f8(4, 32), _w(16, 32), ONE, ONE), {"out_dtype": torch.float32}, ValueError, "out_dtype torch.float32"),
    ((torch.zeros(4, 32, dtype=torch.bfloat16), _w(16, 32), ONE, ONE), {}, TypeError, "is torch.bfloat16; want torch.float8_e4m3fn"),
    ((_f8(4, 32), _w(16, 32).to(torch.float8_e5m2), ONE, ONE), {}, TypeError, "b is torch.float8_e5m2"),
    ((_f8(2, 4, 32), _w(16, 32), ONE, ONE), {}, ValueError, "want a 2-D matrix"),
    ((_f8(4, 32), _w(16, 48), ONE, ONE), {}, ValueError, r"want b \[32, N\]"),
    ((_f8(4, 32), _f8(32, 16), ONE, ONE), {}, ValueError, r"strides \(16, 1\); want the transpose of a contiguous"),
    ((_f8(4, 32), _w(16, 32), ONE.double(), ONE), {}, TypeError, "a_scale is torch.float64; want torch.float32"),
    ((_f8(4, 32), _w(16, 32), ONE, ONE.half()), {}, TypeError, "b_scale is torch.float16"),
    ((_f8(4, 32), _w(16, 32), torch.ones(4, 1), ONE), {}, ValueError, "mix a tensor-wise and a row-wise"),
    ((_f8(4, 32), _w(16, 32), ONE, torch.ones(1, 16)), {}, ValueError, "mix a tensor-wise and a row-wise"),
    ((_f8(4, 32), _w(16, 32), torch.ones(4), torch.ones(1, 16)), {}, ValueError, r"a_scale has shape \(4,\)"),
    ((_f8(4, 32), _w(16, 32), torch.ones(4, 1), torch.ones(16, 1)), {}, ValueError, r"b_scale has shape \(16, 1\)"),
    ((_f8(4, 32), _w(16, 32), ONE, ONE), {}, ValueError, "current CUDA device"),
    ((_f8(4, 32), _w(16, 32), torch.ones(4, 1), torch.ones(1, 16)), {}, ValueError, "current CUDA device"),
])
def test_bad_fp8_operands(fn, args, kw, err, msg):
    with pytest.raises(err, match=msg):
        getattr(st, fn)(*args, **kw)


def test_scale_shapes_pick_the_dtype():
    from symmtune._torch_fp8 import scale_dtype
    assert scale_dtype("x", ONE, torch.ones(()), 4, 16) == "e4m3"
    assert scale_dtype("x", torch.ones(1, 1), torch.ones(1, 1), 1, 1) == "e4m3"
    assert scale_dtype("x", torch.ones(4, 1), torch.ones(1, 16), 4, 16) == "e4m3_row"
