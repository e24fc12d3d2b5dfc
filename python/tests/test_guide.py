"""docs/plugins.md's Python example (python/examples/allgather): every valid
config verifies in-process (verify_local); its kernel version is the same
wherever the script lies and whichever Python its #! line names; the cpu
backend fingerprints the CPU as the library does, so a CPU search through
the host needs no libsymmtune."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys

import pytest

from conftest import REPO, install_plugin
from symmtune import hardware
from symmtune.plugin import Problem, script_version, source_hash, verify_local
from symmtune.plugin.shm import cpu_fingerprint
from test_examples import load

EXAMPLE = REPO / "python" / "examples" / "allgather" / "symmtune-plugin-pyallgather"


def test_every_valid_config_verifies_in_process():
    k = load(EXAMPLE).AllGather()
    d = k.describe()
    p = Problem({"n": 70000}, "f32")  # every chunk fits
    configs = [dict(zip([q.name for q in d.params], vs)) for vs in itertools.product(*[q.values for q in d.params])]
    valid = [c for c in configs if k.validate(c, p, 2, "cpu") is None]
    assert d.default in valid and len(valid) == len(configs)
    for c in valid:
        assert all(v.ok and v.rel_err == 0 for v in verify_local(k, 2, p, c, seed=7)), c


def test_default_is_valid_for_every_shape():
    k = load(EXAMPLE).AllGather()
    for n, world in itertools.product([1, 3, 1000, 1 << 20], [1, 2, 8]):
        assert k.validate(k.describe().default, Problem({"n": n}, "f32"), world, "cpu") is None


def test_version_ignores_the_interpreter_line(tmp_path):
    """A copy elsewhere, its #! line naming another Python, is the same
    kernel: `make python-plugins` rewrites that line on every machine."""
    mine = install_plugin(EXAMPLE, tmp_path / "a")
    other = tmp_path / "b" / EXAMPLE.name
    other.parent.mkdir()
    other.write_text("#!/opt/other/python3.12 -u\n" + EXAMPLE.read_text().split("\n", 1)[1])
    versions = {load(p).AllGather().describe().kernel_version for p in (EXAMPLE, mine, other)}
    assert len(versions) == 1
    # The body still counts: an edit is a new version.
    other.write_text(other.read_text() + "\n# edited\n")
    assert load(other).AllGather().describe().kernel_version not in versions


def test_script_version(tmp_path):
    f = tmp_path / "k"
    f.write_bytes(b"#!/usr/bin/python3\nbody\n")
    assert script_version(f) == source_hash(b"body\n")
    f.write_bytes(b"body\n")  # no #! line: the whole file
    assert script_version(f) == source_hash(b"body\n")


def test_cpu_fingerprint_is_the_librarys():
    assert cpu_fingerprint() == hardware.cpu()


def test_cpu_search_needs_no_library(symmtune_bin, host_env, tmp_path):
    """The guide's search and lookup with no libsymmtune to be found."""
    plugins = tmp_path / "plugins"
    install_plugin(EXAMPLE, plugins)
    env = dict(host_env, SYMMTUNE_LIB=str(tmp_path / "absent" / "libsymmtune.so"))
    common = ["--plugin-dir", str(plugins), "--cache", str(tmp_path / "c.toml")]
    job = ["--kernel", "pyallgather", "--world", "2", "--shape", "n=4096", "--backend", "cpu"]
    r = subprocess.run([str(symmtune_bin), "search", *common, *job, "--iters", "3", "--log", str(tmp_path / "t.jsonl")],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(symmtune_bin), "lookup", *common, *job], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "order=" in r.stdout and "chunk=" in r.stdout


class _Failing:
    """The example with one rank's verify raising before the barrier its
    peers wait in."""

    def __init__(self, kernel, rank: int) -> None:
        self.kernel, self.rank = kernel, rank

    def __getattr__(self, name):
        return getattr(self.kernel, name)

    def open(self, team, problem):
        inst = self.kernel.open(team, problem)
        if team.rank == self.rank:
            def verify(config, seed):
                raise RuntimeError("boom")
            inst.verify = verify
        return inst


def test_verify_local_reports_a_failing_rank_and_frees_the_others():
    k = load(EXAMPLE).AllGather()
    p = Problem({"n": 4096}, "f32")
    with pytest.raises(RuntimeError, match="rank 1: boom"):
        verify_local(_Failing(k, 1), 3, p, k.describe().default)
    with pytest.raises(ValueError, match="exceeds"):
        verify_local(k, 2, Problem({"n": 100}, "f32"), {"order": "rank", "chunk": 8192})


def test_the_host_sees_one_version_for_copies_with_other_interpreter_lines(symmtune_bin, host_env, tmp_path):
    a = install_plugin(EXAMPLE, tmp_path / "a")
    b = tmp_path / "b" / EXAMPLE.name
    b.parent.mkdir()
    b.write_text(f"#!/usr/bin/env -S {sys.executable} -u\n" + EXAMPLE.read_text().split("\n", 1)[1])
    b.chmod(0o755)
    versions = set()
    for d in (a.parent, b.parent):
        r = subprocess.run([str(symmtune_bin), "plugins", "--plugin-dir", str(d)], env=host_env, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        versions |= set(re.findall(r"^pyallgather  \[cpu\]  version (\w+)", r.stdout, re.M))
    assert len(versions) == 1, versions
