"""The GPU benchmark scripts run only on machines lent by the minute, where
a typo costs a device call: here, without a GPU, every one is at least
parsed, and the shell scripts that source bench/lib.sh set what it needs
first."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PY = sorted((ROOT / "bench").glob("*.py"))
SH = sorted((ROOT / "bench").glob("*.sh")) + sorted((ROOT / "scripts").glob("*.sh"))


def test_there_are_scripts_to_check():
    assert len(PY) >= 5 and len(SH) >= 5, (PY, SH)


@pytest.mark.parametrize("path", PY, ids=lambda p: p.name)
def test_python_script_parses(path: Path):
    compile(path.read_text(), str(path), "exec")


@pytest.mark.parametrize("path", SH, ids=lambda p: p.name)
def test_shell_script_parses(path: Path):
    r = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


_SOURCES_LIB = re.compile(r'^\s*\.\s+"?\$?.*lib\.sh"?\s*$')
_SETS_LOGS = re.compile(r"^\s*(export\s+)?LOGS=")


@pytest.mark.parametrize("path", [p for p in SH if p.name != "lib.sh"], ids=lambda p: p.name)
def test_logs_is_set_before_lib_sh(path: Path):
    """bench/lib.sh writes the machine's state to $LOGS: a script sourcing
    it under `set -u` without LOGS stops at once."""
    lines = path.read_text().splitlines()
    sourced = [i for i, line in enumerate(lines) if _SOURCES_LIB.match(line)]
    if not sourced:
        return
    first_set = next((i for i, line in enumerate(lines) if _SETS_LOGS.match(line)), None)
    assert first_set is not None and first_set < sourced[0], \
        f"{path.name} sources lib.sh on line {sourced[0] + 1} before setting LOGS"
