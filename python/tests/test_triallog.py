"""symmtune.triallog: trial logs read by Go's internal/triallog through
libsymmtune, so Python sees a log as the host, the replay and the report
do."""
from __future__ import annotations

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
