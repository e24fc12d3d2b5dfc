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
