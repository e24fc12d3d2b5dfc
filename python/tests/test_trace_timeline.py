"""bench/experiments/trace_timeline.py splits a torch.profiler trace into calls of the
fused GEMM: what it prints is what a GPU session reads to tell copy
engines from SM copies, so its grouping is checked here."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "experiments"))
import trace_timeline  # noqa: E402


def ev(cat: str, name: str, ts: float, dur: float, **args) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "args": args}


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    evs = [
        ev("gpu_memcpy", "Memcpy PtoP (Device -> Device)", 90, 20, stream=20, bytes=4_000_000),
        ev("kernel", "hopper_gemm", 100, 50, stream=7),
        ev("kernel", "symm_barrier", 151, 2, stream=7),
        ev("gpu_memcpy", "Memcpy PtoP (Device -> Device)", 155, 30, stream=20, bytes=6_000_000),
        ev("kernel", "hopper_gemm", 160, 50, stream=7),
        ev("cpu_op", "aten::mm", 160, 50),  # not a GPU event
        ev("kernel", "copy_kernel", 215, 5, stream=9),  # after the last GEMM: in no call
    ]
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": evs}))
    return p


def test_calls_group_events_between_gemms(trace: Path):
    cs = trace_timeline.calls(trace_timeline.gpu_events(str(trace)), "hopper_gemm")
    assert [a["ts"] for a, _ in cs] == [100, 160]
    assert [[e["name"] for e in evs] for _, evs in cs] == [
        ["Memcpy PtoP (Device -> Device)", "hopper_gemm"],
        ["symm_barrier", "Memcpy PtoP (Device -> Device)", "hopper_gemm"],
    ]


def test_line_gives_offset_stream_and_rate(trace: Path):
    evs = trace_timeline.gpu_events(str(trace))
    copy, gemm = evs[0], evs[1]
    assert trace_timeline.line(copy, gemm["ts"]).split() == [
        "-10.0", "20.0", "s", "20", "Memcpy", "PtoP", "(Device", "->", "Device)", "4.0", "MB", "200", "GB/s"]


def test_sleep_segments_split_queued_calls():
    evs = [
        ev("kernel", "hopper_gemm", 0, 5),  # before the first sleep: in no call
        ev("kernel", "void at::cuda::spin_kernel(long)", 10, 100),
        ev("gpu_memcpy", "Memcpy DtoD", 111, 4),
        ev("kernel", "hopper_gemm", 112, 30),  # overlaps the copy: the span is not the sum
        ev("kernel", "void at::cuda::spin_kernel(long)", 150, 100),
        ev("kernel", "void at::cuda::spin_kernel(long)", 251, 100),  # a call that ran nothing
        ev("kernel", "nvjet_mm", 352, 20),
    ]
    segs = trace_timeline.sleep_segments(evs)
    assert [[e["name"] for e in s] for s in segs] == [["Memcpy DtoD", "hopper_gemm"], [], ["nvjet_mm"]]
    assert [trace_timeline.call_times(s) for s in segs] == [(31, 34), (0, 0), (20, 20)]
