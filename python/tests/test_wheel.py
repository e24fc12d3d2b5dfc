"""make wheel's scripts/wheel.py: a platform wheel holding the package, the
CUDA C it compiles and libsymmtune.so, whose RECORD is right, and from which
Python imports symmtune and calls the library with no Go and no checkout."""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, native_library) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, str(REPO / "scripts/wheel.py"), "--out", str(out), "--lib", str(native_library)],
                   check=True, capture_output=True)
    (whl,) = out.glob("symmtune-*-py3-none-linux_x86_64.whl")
    return whl


def test_wheel_holds_the_package_the_sources_and_the_library(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for n in ("symmtune/__init__.py", "symmtune/_native.py", "symmtune/libsymmtune.so",
                  "symmtune/_kernels/barrier.cuh", "symmtune/_kernels/allreduce/allreduce.cu",
                  "symmtune/_kernels/allreduce/algos.cu", "symmtune/_kernels/allreduce/lamport.cu",
                  "symmtune/_kernels/gemm/kernels/gemm_util.cu", "symmtune/_kernels/hopper/hopper_gemm.cu",
                  "symmtune/plugin/_pb/kernel_pb2.py"):
            assert n in names, n
        dist = next(n.split("/")[0] for n in names if n.endswith(".dist-info/WHEEL"))
        assert "Tag: py3-none-linux_x86_64" in z.read(f"{dist}/WHEEL").decode()
        rows = list(csv.reader(io.StringIO(z.read(f"{dist}/RECORD").decode())))
        assert {r[0] for r in rows} == names
        for name, digest, size in rows:
            if name.endswith("RECORD"):
                continue
            b = z.read(name)
            want = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == (f"sha256={want}", len(b)), name


def test_python_imports_from_the_wheel_and_calls_the_library(wheel, tmp_path):
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    code = ("import symmtune.hopper as h, symmtune._native as n, symmtune.kernels as k\n"
            f"assert str(n.library_path()).startswith({str(site)!r}), n.library_path()\n"
            "print(h.parse_tile('128x256'), k.kernel_version(), k.padded(9, 2, 2))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("SYMMTUNE_LIB", "PYTHONPATH")}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={**env, "PYTHONPATH": str(site)},
                         check=True, capture_output=True, text=True).stdout.split()
    assert out[0] == "128x256:s4:c2:g8" and len(out[1]) == 12 and out[2] == "16"
