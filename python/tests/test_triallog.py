"""symmtune.triallog: trial logs read by Go's internal/triallog through
libsymmtune, so Python sees a log as the host, the replay and the report
do."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from symmtune import triallog

REPO = Path(__file__).resolve().parents[2]


def test_reads_a_recorded_landscape():
    logs = sorted((REPO / "tuner" / "testdata").glob("landscape-*.jsonl"))
    assert logs
    log = triallog.read(logs[0])
    lines = [n for n, text in enumerate(logs[0].read_text().splitlines(), 1) if text.strip()]
    assert log.lines == lines and log.torn == 0 and log.path == str(logs[0])
    assert all(r["config"] and r["status"] for r in log.results)


def test_torn_last_line_is_skipped(tmp_path: Path):
    p = tmp_path / "t.jsonl"
    p.write_text('{"config":{"a":1},"status":"ok","score_us":3.5}\n{"config":{"a":')
    log = triallog.read(p)
    assert [r["score_us"] for r in log.results] == [3.5] and log.lines == [1] and log.torn == 2


def test_malformed_line_names_file_and_line(tmp_path: Path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"config":{"a":1},"status":"ok"}\nnot json\n{"config":{"a":2},"status":"ok"}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl: line 2: not a symmtune trial"):
        triallog.read(p)


def test_missing_file(tmp_path: Path):
    with pytest.raises(ValueError, match="no such file"):
        triallog.read(tmp_path / "none.jsonl")


@pytest.mark.parametrize("name", ["t.jsonl.gz", "t.gz"])
def test_gzipped_log_reads_as_the_plain_one(tmp_path: Path, name: str):
    text = '{"config":{"a":1},"status":"ok","score_us":3.5}\n\n{"config":{"a":2},"status":"hang"}\n{"config":'
    plain, gz = tmp_path / "t.jsonl", tmp_path / name
    plain.write_text(text)
    gz.write_bytes(gzip.compress(text.encode(), mtime=0))
    a, b = triallog.read(plain), triallog.read(gz)
    assert (b.results, b.lines, b.torn, b.path) == (a.results, a.lines, a.torn, str(gz))
    assert b.lines == [1, 3] and b.torn == 4


@pytest.mark.parametrize("data", [b"", b"not gzip at all\n", gzip.compress(b'{"config":{"a":1},"status":"ok"}\n' * 50)[:40]])
def test_corrupt_gzip_is_one_error_naming_the_file(tmp_path: Path, data: bytes):
    p = tmp_path / "bad.jsonl.gz"
    p.write_bytes(data)
    with pytest.raises(ValueError, match=r"bad\.jsonl\.gz: corrupt gzip data: ") as e:
        triallog.read(p)
    assert "\n" not in str(e.value)
