"""The CPU example plugin through the real Go host: discovery, searches at
worlds 2 and 4 with the winner in the cache (read back by the Go CLI and by
symmtune.lookup alike), SHA-256 pinning, a local search strategy, and
nothing left behind."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import symmtune
from symmtune import triallog
from conftest import REPO, install_plugin
from symmtune.plugin.shm import FILE_PREFIX, shm_dir

EXAMPLE = REPO / "python" / "examples" / "allreduce_cpu" / "symmtune-plugin-pyallreduce"


@pytest.fixture()
def plugin_dir(tmp_path) -> Path:
    d = tmp_path / "plugins"
    install_plugin(EXAMPLE, d)
    return d


def run(bin_: Path, env, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_), *args], env=env, capture_output=True, text=True, timeout=timeout)


def live_plugins(script: Path) -> list[int]:
    pids = []
    for d in glob.glob("/proc/[0-9]*"):
        try:
            args = Path(d, "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(args) > 1 and args[1] == str(script).encode():
            pids.append(int(os.path.basename(d)))
    return pids


def wait_gone(script: Path, seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while live_plugins(script):
        assert time.monotonic() < deadline, f"plugin processes {live_plugins(script)} outlive the search"
        time.sleep(0.05)


def test_plugins_lists_it(symmtune_bin, host_env, plugin_dir):
    r = run(symmtune_bin, host_env, "plugins", "--plugin-dir", str(plugin_dir), "--backend", "cpu")
    assert r.returncode == 0, r.stderr
    assert "pyallreduce  [cpu]" in r.stdout
    assert "algorithm      one_shot two_shot" in r.stdout and "space          8 configs" in r.stdout


@pytest.mark.parametrize("world", [2, 4])
def test_search_lands_in_the_cache(symmtune_bin, host_env, plugin_dir, tmp_path, world):
    shm_before = set(glob.glob(os.path.join(shm_dir(), FILE_PREFIX + "*")))
    cache_path, log = tmp_path / "configs.toml", tmp_path / "trials.jsonl"
    sockets = tmp_path / "tmp"  # the plugins' sockets go to $TMPDIR
    sockets.mkdir()
    host_env["TMPDIR"] = str(sockets)
    r = run(symmtune_bin, host_env, "search", "--plugin-dir", str(plugin_dir), "--kernel", "pyallreduce",
            "--world", str(world), "--shape", "n=65536", "--backend", "cpu", "--strategy", "exhaustive",
            "--iters", "5", "--cache", str(cache_path), "--log", str(log))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "winner:" in r.stdout and "start-up: ranks" in r.stdout

    trials = triallog.read(log).results
    first = [t for t in trials if not t.get("refined")]
    assert len(first) == 5 and all(t["status"] == "ok" and len(t["ranks_us"]) == world for t in first)

    lookup = run(symmtune_bin, host_env, "lookup", "--plugin-dir", str(plugin_dir), "--kernel", "pyallreduce",
                 "--world", str(world), "--shape", "n=65536", "--backend", "cpu", "--cache", str(cache_path), "--json")
    assert lookup.returncode == 0, lookup.stderr
    go = json.loads(lookup.stdout)
    m = symmtune.lookup("pyallreduce", world, "f32", {"n": 65536}, backend="cpu", cache=cache_path)
    assert m.exact and m.to_json() == go
    assert m.config["algorithm"] in ("one_shot", "two_shot") and m.entry.trials == 5
    assert m.entry.hardware == symmtune.hardware.cpu().id()

    wait_gone(plugin_dir / EXAMPLE.name)
    assert set(glob.glob(os.path.join(shm_dir(), FILE_PREFIX + "*"))) <= shm_before
    assert list(sockets.iterdir()) == [], "plugin sockets were left behind"


def job_file(tmp_path: Path, pin: str) -> Path:
    p = tmp_path / "job.toml"
    p.write_text(f"""backend = "cpu"
strategy = "pattern"
budget_trials = 4
iters = 3
[plugins]
pyallreduce = "{pin}"
[[job]]
kernel = "pyallreduce"
worlds = [2]
dtypes = ["f32"]
shapes = ["n=262144"]
""")
    return p


def test_pinned_script_and_a_local_strategy(symmtune_bin, host_env, plugin_dir, tmp_path):
    script = plugin_dir / EXAMPLE.name
    good = "sha256:" + hashlib.sha256(script.read_bytes()).hexdigest()
    r = run(symmtune_bin, host_env, "search", "--plugin-dir", str(plugin_dir), "--config", str(job_file(tmp_path, good)),
            "--cache", str(tmp_path / "c.toml"), "--log", str(tmp_path / "t.jsonl"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert len([t for t in triallog.read(tmp_path / "t.jsonl").results if not t.get("refined")]) == 4

    bad = "sha256:" + "0" * 64
    r = run(symmtune_bin, host_env, "search", "--plugin-dir", str(plugin_dir), "--config", str(job_file(tmp_path, bad)),
            "--cache", str(tmp_path / "c2.toml"), "--log", str(tmp_path / "t2.jsonl"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "does not match the pinned checksum" in r.stderr
    assert not (tmp_path / "c2.toml").exists() and not (tmp_path / "t2.jsonl").exists()
    assert not live_plugins(script)
