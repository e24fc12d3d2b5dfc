"""symmtune.record: note() writes a job file symmtune search takes, each
(kernel, world, dtype, shape, backend) once, also when many processes write
at once; a failed write leaves the file parseable; bad input raises an
error naming the argument; $SYMMTUNE_RECORD is read at the first note()."""

from __future__ import annotations

import errno
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

import symmtune.record as rec
from conftest import PYTHON_DIR

if sys.version_info >= (3, 11):
    import tomllib
else:  # the tests run on 3.11 or later; this keeps the type check's 3.9 target happy
    import tomli as tomllib


@pytest.fixture(autouse=True)
def stopped():
    """Every test starts and ends with nothing recording in this process."""
    rec.stop()
    yield
    rec.stop()


def jobs(path: Path) -> list[tuple]:
    """The file's [[job]] tables as (kernel, backend, world, dtype, shape) in
    file order; each recorded table has one of each."""
    doc = tomllib.loads(path.read_text())
    out: list[tuple] = []
    for j in doc["job"]:
        assert len(j["worlds"]) == len(j["dtypes"]) == len(j["shapes"]) == 1, j
        out.append((j["kernel"], j["backend"], j["worlds"][0], j["dtypes"][0], j["shapes"][0]))
    return out


def test_note_writes_a_job_file_once(tmp_path):
    p = tmp_path / "jobs.toml"
    r = rec.record(p)
    assert p.exists() and "symmtune search --config" in p.read_text()
    assert rec.note("allreduce", 8, "bf16", {"n": 1 << 20}) is True
    assert rec.note("agmm", 8, "bf16", {"m": 8192, "n": 3584, "k": 8192}) is True
    # Repeats, the shape's keys in another order, and an int type that is not int: nothing new.
    assert rec.note("allreduce", 8, "bf16", {"n": 1 << 20}) is False
    assert rec.note("agmm", 8, "bf16", {"k": 8192, "n": 3584, "m": 8192}) is False
    assert rec.note("matmulrs", 8, "bf16", {"m": 8192, "n": 3584, "k": 8192}, backend="cpu") is True
    assert jobs(p) == [("allreduce", "cuda", 8, "bf16", "n=1048576"),
                       ("agmm", "cuda", 8, "bf16", "k=8192,m=8192,n=3584"),
                       ("matmulrs", "cpu", 8, "bf16", "k=8192,m=8192,n=3584")]
    assert len(r.seen) == 3
    text = p.read_text()
    assert text.startswith("# symmtune job file") and f"symmtune search --config {p}" in text


def test_fp8_shapes_are_jobs_of_their_own_dtype(tmp_path):
    """symmtune.torch notes an FP8 GEMM under its scales' dtype (e4m3 or
    e4m3_row): a job apart from the bf16 one of the same shape."""
    p = tmp_path / "jobs.toml"
    rec.record(p)
    shape = {"m": 8192, "n": 3584, "k": 8192}
    for dt in ("bf16", "e4m3", "e4m3_row"):
        assert rec.note("agmm", 2, dt, shape) is True
    assert rec.note("agmm", 2, "e4m3_row", shape) is False
    assert [j[3] for j in jobs(p)] == ["bf16", "e4m3", "e4m3_row"]


def test_a_repeat_costs_no_io(tmp_path, monkeypatch):
    rec.record(tmp_path / "jobs.toml")
    assert rec.note("allreduce", 2, "f32", {"n": 4096}, "cpu")

    def no_io(*a, **k):
        raise AssertionError("I/O on a repeat note")
    monkeypatch.setattr(os, "open", no_io)
    for _ in range(1000):
        assert rec.note("allreduce", 2, "f32", {"n": 4096}, "cpu") is False


def test_entries_already_in_the_file_are_not_written_again(tmp_path):
    p = tmp_path / "jobs.toml"
    # A hand-written job file: top-level backend, several worlds and shapes per job.
    p.write_text('backend = "cpu"\niters = 5\n[[job]]\nkernel = "allreduce"\nworlds = [2, 4]\ndtypes = ["f32"]\n'
                 'shapes = ["n=16384", "n = 262144"]\n[[job]]\nkernel = "agmm"\nworlds = [2]\ndtypes = ["f32"]\n'
                 'shapes = ["m=256,n=128,k=128"]\nbudget_trials = 40')  # no newline at the end
    before = p.read_text()
    rec.record(p)
    assert rec.note("allreduce", 4, "f32", {"n": 262144}, "cpu") is False
    assert rec.note("agmm", 2, "f32", {"k": 128, "m": 256, "n": 128}, "cpu") is False
    assert rec.note("agmm", 2, "f32", {"k": 128, "m": 256, "n": 128}, "cuda") is True
    text = p.read_text()
    assert text.startswith(before) and "#" not in text  # appended; no header on a file that had content
    doc = tomllib.loads(text)
    assert doc["job"][1]["budget_trials"] == 40 and doc["job"][2]["backend"] == "cuda"


def test_a_second_recorder_reads_what_the_first_wrote(tmp_path):
    p = tmp_path / "jobs.toml"
    a = rec.Recorder(p)
    b = rec.Recorder(p)
    assert a.note("allreduce", 2, "f32", {"n": 1}, "cpu") is True
    assert b.note("allreduce", 2, "f32", {"n": 1}, "cpu") is False
    assert b.note("allreduce", 2, "f32", {"n": 2}, "cpu") is True
    assert a.note("allreduce", 2, "f32", {"n": 3}, "cpu") is True
    assert ("allreduce", 2, "f32", (("n", 2),), "cpu") in a.seen  # read back under the lock
    assert [j[4] for j in jobs(p)] == ["n=1", "n=2", "n=3"]


def _rank(path: str, rank: int, barrier) -> None:
    r = rec.record(path)
    barrier.wait()
    # Each rank notes 50 shapes starting at its own offset, twice, in its own order:
    # neighbours overlap in 40 of them.
    shapes = [10 * rank + i for i in range(50)]
    if rank % 2:
        shapes.reverse()
    for n in shapes + shapes:
        r.note("allreduce", 8, "bf16", {"n": 1 + n})
        r.note("agmm", 8, "bf16", {"m": 1 + n, "n": 64, "k": 128})


def test_many_processes_write_the_union_once(tmp_path):
    p = tmp_path / "jobs.toml"
    ranks = 8
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(ranks)
    procs = [ctx.Process(target=_rank, args=(str(p), i, barrier)) for i in range(ranks)]
    for pr in procs:
        pr.start()
    for pr in procs:
        pr.join(120)
    assert [pr.exitcode for pr in procs] == [0] * ranks
    got = jobs(p)
    want = {("allreduce", "cuda", 8, "bf16", f"n={1 + n}") for n in range(10 * (ranks - 1) + 50)}
    want |= {("agmm", "cuda", 8, "bf16", f"k=128,m={1 + n},n=64") for n in range(10 * (ranks - 1) + 50)}
    assert len(got) == len(set(got)) == len(want) == 240
    assert set(got) == want
    assert p.read_text().count("# symmtune job file") == 1


def test_a_failed_write_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    p = tmp_path / "jobs.toml"
    rec.record(p)
    assert rec.note("allreduce", 2, "f32", {"n": 1}, "cpu")
    before = p.read_bytes()
    real = os.write

    def half(fd, data):
        real(fd, data[:len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "write", half)
    with pytest.raises(OSError, match="No space"):
        rec.note("allreduce", 2, "f32", {"n": 2}, "cpu")
    assert p.read_bytes() == before

    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, data[:7]))  # a short write
    with pytest.raises(OSError, match="short write"):
        rec.note("allreduce", 2, "f32", {"n": 2}, "cpu")
    assert p.read_bytes() == before

    monkeypatch.setattr(os, "write", real)
    assert rec.note("allreduce", 2, "f32", {"n": 2}, "cpu") is True  # not remembered as written
    assert [j[4] for j in jobs(p)] == ["n=1", "n=2"]


def test_a_file_that_is_not_a_job_file_is_left_alone(tmp_path):
    p = tmp_path / "jobs.toml"
    p.write_text("[[job]\nkernel = \n")
    with pytest.raises(rec.RecordError, match="not a job file"):
        rec.record(p)
    p.write_text('job = "x"\n')
    with pytest.raises(rec.RecordError, match="not a list"):
        rec.record(p)
    assert p.read_text() == 'job = "x"\n'


@pytest.mark.parametrize("args, exc, msg", [
    (("allreduce", 0, "bf16", {"n": 1}), ValueError, "world must be >= 1, got 0"),
    (("allreduce", -2, "bf16", {"n": 1}), ValueError, "world must be >= 1, got -2"),
    (("allreduce", 2.0, "bf16", {"n": 1}), TypeError, "world must be an int, got float"),
    (("allreduce", True, "bf16", {"n": 1}), TypeError, "world must be an int, got bool"),
    (("", 2, "bf16", {"n": 1}), ValueError, "kernel must be a plain name"),
    (("../x", 2, "bf16", {"n": 1}), ValueError, "kernel must be a plain name"),
    (("all.reduce", 2, "bf16", {"n": 1}), ValueError, "kernel must be a plain name"),
    ((None, 2, "bf16", {"n": 1}), TypeError, "kernel must be a str, got NoneType"),
    (("allreduce", 2, "bf 16", {"n": 1}), ValueError, "dtype must be a plain name"),
    (("allreduce", 2, 16, {"n": 1}), TypeError, "dtype must be a str, got int"),
    (("allreduce", 2, "bf16", {}), ValueError, "shape must name at least one dimension"),
    (("allreduce", 2, "bf16", [("n", 1)]), TypeError, "shape must be a dict"),
    (("allreduce", 2, "bf16", {"n": 0}), ValueError, r"shape\['n'\] must be between 1 and"),
    (("allreduce", 2, "bf16", {"n": 1 << 41}), ValueError, r"shape\['n'\] must be between 1 and"),
    (("allreduce", 2, "bf16", {"n": "8"}), TypeError, r"shape\['n'\] must be an int, got str"),
    (("allreduce", 2, "bf16", {"n=1,m": 1}), ValueError, "shape dimension names must be identifiers"),
    (("allreduce", 2, "bf16", {1: 1}), ValueError, "shape dimension names must be identifiers"),
    (("allreduce", 2, "bf16", {"n": 1}, "gpu"), ValueError, "backend must be one of cpu, cuda, got 'gpu'"),
])
def test_bad_input_names_the_argument(tmp_path, args, exc, msg):
    p = tmp_path / "jobs.toml"
    rec.record(p)
    before = p.read_bytes()
    with pytest.raises(exc, match="^symmtune.record: " + msg):
        rec.note(*args)
    assert p.read_bytes() == before


def test_the_header_stays_a_comment_whatever_the_path(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.argv", ["train.py\n[[job]]\nkernel = 1", "--lr=3"])
    p = tmp_path / "jobs\n[[job]] #.toml"
    rec.record(p)
    assert rec.note("allreduce", 2, "f32", {"n": 1}, "cpu")
    assert jobs(p) == [("allreduce", "cpu", 2, "f32", "n=1")]
    assert p.read_text().count("\n[[job]]\n") == 1


def test_bad_path(tmp_path):
    with pytest.raises(TypeError, match="path must be a str"):
        rec.record(3)
    with pytest.raises(ValueError, match="path must be a non-empty"):
        rec.record("")
    with pytest.raises(FileNotFoundError):
        rec.record(tmp_path / "missing" / "jobs.toml")


def test_nothing_records_without_record_or_the_env(tmp_path):
    assert rec.note("allreduce", 2, "f32", {"n": 1}) is False
    assert rec.note("anything", 0, "", {}) is False  # off: the arguments are not even looked at


def py(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_the_env_is_read_at_the_first_note(tmp_path):
    p = tmp_path / "jobs.toml"
    env = {k: v for k, v in os.environ.items() if k != rec.ENV}
    env["PYTHONPATH"] = str(PYTHON_DIR)
    # Set after import: still used; nothing is created before the first note.
    r = py(f"""
import os, sys
import symmtune.record as rec
assert 'torch' not in sys.modules
os.environ[{rec.ENV!r}] = {str(p)!r}
assert not os.path.exists({str(p)!r})
assert rec.note("allreduce", 4, "f32", {{"n": 64}}, "cpu")
assert not rec.note("allreduce", 4, "f32", {{"n": 64}}, "cpu")
""", env)
    assert r.returncode == 0, r.stderr
    assert jobs(p) == [("allreduce", "cpu", 4, "f32", "n=64")]

    # Set at import, changed before the first note: the value at the first note counts.
    q = tmp_path / "other.toml"
    env[rec.ENV] = str(q)
    r = py(f"""
import os
import symmtune.record as rec
os.environ[{rec.ENV!r}] = {str(p)!r}
assert not rec.note("allreduce", 4, "f32", {{"n": 64}}, "cpu")
assert rec.note("allreduce", 4, "f32", {{"n": 128}}, "cpu")
rec.stop()
assert not rec.note("allreduce", 4, "f32", {{"n": 256}}, "cpu")
""", env)
    assert r.returncode == 0, r.stderr
    assert not q.exists()
    assert [j[4] for j in jobs(p)] == ["n=64", "n=128"]

    # Read once: unset at the first note means off for good.
    r = py(f"""
import os
import symmtune.record as rec
os.environ.pop({rec.ENV!r}, None)
assert not rec.note("allreduce", 4, "f32", {{"n": 512}}, "cpu")
os.environ[{rec.ENV!r}] = {str(p)!r}
assert not rec.note("allreduce", 4, "f32", {{"n": 512}}, "cpu")
""", env)
    assert r.returncode == 0, r.stderr
    assert len(jobs(p)) == 2
