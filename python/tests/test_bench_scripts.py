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


# The device tool stops a command after 600 s and then returns only a few
# of its files: each part of bench/pending.sh must end, worst case, before.
DEVICE_CALL_S = 600
_TIMEOUT = re.compile(r"\btimeout (\d+)\b")
_FOR_WORDS = re.compile(r"^\s*for \w+ in (.+); do\s*$")


def worst_case_seconds(lines: list[str]) -> int:
    """The sum of the `timeout N` limits in lines, each times the number of
    words of the literal `for ... in ...; do` loops around it."""
    total, loops = 0, []
    for line in lines:
        if m := _FOR_WORDS.match(line):
            loops.append(len(m.group(1).split()))
            continue
        if line.strip() == "done" and loops:
            loops.pop()
            continue
        reps = 1
        for n in loops:
            reps *= n
        total += reps * sum(int(t) for t in _TIMEOUT.findall(line))
    return total


def pending_parts() -> dict[str, list[str]]:
    lines = (ROOT / "bench" / "pending.sh").read_text().splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("case $PART in"))
    parts: dict[str, list[str]] = {}
    name = None
    for line in lines[start + 1:]:
        if line == "esac":
            break
        if m := re.match(r"^(\w+)\)$", line):
            name = m.group(1)
            parts[name] = []
        elif name:
            parts[name].append(line)
    return parts


def test_worst_case_counts_loops():
    lines = ["for n in 1 2 3; do", "  timeout 10 a", "  for m in x y; do", "    timeout 5 b", "  done", "done", "timeout 7 c"]
    assert worst_case_seconds(lines) == 3 * 10 + 3 * 2 * 5 + 7


def test_every_pending_part_fits_one_device_call():
    parts = pending_parts()
    assert set(parts) == {"allreduce", "gemm", "torch", "diag"}, parts.keys()
    for name, lines in parts.items():
        s = worst_case_seconds(lines)
        assert 0 < s <= DEVICE_CALL_S - 30, f"bench/pending.sh {name}: its timeouts add up to {s} s"
