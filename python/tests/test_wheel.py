"""make wheel's scripts/wheel.py: a platform wheel holding the package, the
CUDA C it compiles and libsymmtune.so, whose RECORD is right, and from which
Python imports symmtune and calls the library with no Go and no checkout."""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import stat
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


def fake_bin(d: Path) -> Path:
    """A --bin-dir whose host prints its arguments and plugin directory."""
    (d / "cuda").mkdir(parents=True)
    host = d / "symmtune"
    host.write_text('#!/bin/sh\necho "host $(dirname "$0") $*"\n')
    for f in (host, d / "symmtune-plugin-a", d / "cuda" / "symmtune-plugin-a"):
        if not f.exists():
            f.write_text("#!/bin/sh\nexit 0\n")
        f.chmod(0o755)
    (d / "notes.txt").write_text("not bundled")
    return d


def test_wheel_with_the_host_has_a_console_command_that_runs_it(native_library, tmp_path):
    bin_dir = fake_bin(tmp_path / "wheel-bin")
    out = tmp_path / "out"
    subprocess.run([sys.executable, str(REPO / "scripts/wheel.py"), "--out", str(out), "--lib", str(native_library),
                    "--bin-dir", str(bin_dir)], check=True, capture_output=True)
    (whl,) = out.glob("*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        bundled = {n for n in names if n.startswith("symmtune/_bin/")}
        assert bundled == {"symmtune/_bin/symmtune", "symmtune/_bin/symmtune-plugin-a", "symmtune/_bin/cuda/symmtune-plugin-a"}
        for n in bundled | {"symmtune/libsymmtune.so"}:
            # pip makes a file executable only when its entry is a regular file with x bits.
            mode = z.getinfo(n).external_attr >> 16
            assert stat.S_ISREG(mode) and mode & 0o111 == 0o111, (n, oct(mode))
        dist = next(n.split("/")[0] for n in names if n.endswith(".dist-info/WHEEL"))
        assert z.read(f"{dist}/entry_points.txt").decode() == "[console_scripts]\nsymmtune = symmtune._cli:main\n"
        z.extractall(site)
    for n in bundled:
        (site / n).chmod(0o755)  # as pip does; zipfile does not
    env = {k: v for k, v in os.environ.items() if k not in ("SYMMTUNE_LIB", "PYTHONPATH")}
    r = subprocess.run([sys.executable, "-c", "from symmtune._cli import main; main()", "plugins", "-v"],
                       env={**env, "PYTHONPATH": str(site)}, cwd=tmp_path, capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (0, f"host {site / 'symmtune' / '_bin'} plugins -v\n"), r.stderr


def test_console_command_without_a_bundled_host_is_one_line(tmp_path):
    r = subprocess.run([sys.executable, "-c", "from symmtune._cli import main; main()", "plugins"],
                       env={**os.environ, "PYTHONPATH": str(REPO / "python")}, capture_output=True, text=True)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and "no bundled host" in r.stderr
