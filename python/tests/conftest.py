"""Shared fixtures: the repository, the Go CLI (built once per session, or
$SYMMTUNE_BIN from `make test`), and plugin directories holding Python plugin
scripts whose #! line names this interpreter."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"


def install_plugin(src: Path, plugin_dir: Path, name: str | None = None) -> Path:
    """Copies a plugin script into plugin_dir with #! naming this Python, as
    `make python-plugins` does with the interpreter it is given."""
    text = src.read_text()
    assert text.startswith("#!"), f"{src} has no #! line"
    plugin_dir.mkdir(parents=True, exist_ok=True)
    dst = plugin_dir / (name or src.name)
    dst.write_text(f"#!{sys.executable}" + text[text.index("\n"):])
    dst.chmod(0o755)
    return dst


def has_libcuda() -> bool:
    """Whether this machine has a CUDA driver library to load."""
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.fixture(scope="session")
def symmtune_bin(tmp_path_factory) -> Path:
    """The Go CLI: $SYMMTUNE_BIN, else built from this checkout."""
    env = os.environ.get("SYMMTUNE_BIN")
    if env:
        return Path(env).resolve()
    go = shutil.which("go")
    if go is None:
        pytest.fail("the host tests need the Go CLI: set SYMMTUNE_BIN or put go on PATH")
    out = tmp_path_factory.mktemp("bin") / "symmtune"
    subprocess.run([go, "build", "-o", str(out), "./cmd/symmtune"], cwd=REPO, check=True)
    return out


@pytest.fixture()
def host_env(monkeypatch) -> dict[str, str]:
    """The environment the host and its plugins run in: the package on
    PYTHONPATH, nothing inherited that points elsewhere."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PYTHON_DIR)
    env.pop("SYMMTUNE_PLUGIN_DIR", None)
    env.pop("SYMMTUNE_CACHE", None)
    return env


@pytest.fixture(scope="session", autouse=True)
def native_library(tmp_path_factory) -> Path:
    """libsymmtune for the bindings: $SYMMTUNE_LIB (`make test` builds it),
    else built from this checkout (never a stale copy beside the package);
    the environment names it, so plugin processes load the same one."""
    env = os.environ.get("SYMMTUNE_LIB")
    if env:
        return Path(env).resolve()
    go = shutil.which("go")
    if go is None:
        pytest.fail("the bindings need libsymmtune: set SYMMTUNE_LIB or put go on PATH")
    out = tmp_path_factory.mktemp("lib") / "libsymmtune.so"
    subprocess.run([go, "build", "-tags", "cuda", "-buildmode=c-shared", "-o", str(out), "./cmd/libsymmtune"], cwd=REPO, check=True)
    os.environ["SYMMTUNE_LIB"] = str(out)
    return out
