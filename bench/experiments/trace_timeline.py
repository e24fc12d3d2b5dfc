"""Print the calls of a fused GEMM from a PyTorch profiler trace (the
Chrome trace torch.profiler exports; Kineto records what CUPTI sees, graph
replays included). Nsight Systems is no use on the GPU machines: it writes
a .qdstrm it cannot turn into a report (the device library's KINDS.md).

    python3 bench/experiments/trace_timeline.py TRACE.json [ANCHOR]

A call is what ran on the GPU after the previous ANCHOR kernel (default
hopper_gemm, the fused GEMM) ended, up to the end of its own. Each call
prints one line per operation: start in µs from the ANCHOR's start (a
negative start ran before the GEMM), duration, stream, name, and for a
copy its MB and GB/s. A copy engine's copy shows as "Memcpy ..."; a copy
the driver ran on SMs shows as a kernel, beside the persistent GEMM that
holds every SM.
"""
import json
import sys

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def gpu_events(path: str) -> list[dict]:
    with open(path) as f:
        evs = json.load(f)["traceEvents"]
    return sorted((e for e in evs if e.get("ph") == "X" and e.get("cat") in GPU_CATS), key=lambda e: e["ts"])


def calls(evs: list[dict], anchor: str) -> list[tuple[dict, list[dict]]]:
    """(anchor event, the events of its call) for every anchor in evs."""
    out, since = [], float("-inf")
    for a in (e for e in evs if e["name"].startswith(anchor)):
        end = a["ts"] + a["dur"]
        out.append((a, [e for e in evs if since < e["ts"] + e["dur"] and e["ts"] < end + 1]))
        since = end
    return out


SLEEP = "spin_kernel"  # at::cuda::sleep's kernel (torch.cuda._sleep)


def sleep_segments(evs: list[dict]) -> list[list[dict]]:
    """The events after each sleep kernel up to the next one: one list per
    call when every call was queued behind a torch.cuda._sleep (what ran
    before the first sleep is in none)."""
    segs: list[list[dict]] = []
    for e in evs:
        if SLEEP in e["name"]:
            segs.append([])
        elif segs:
            segs[-1].append(e)
    return segs


def call_times(seg: list[dict]) -> tuple[float, float]:
    """A call's span (first start to last end) and busy time (the sum of
    its events' durations), µs; (0, 0) when it ran nothing."""
    if not seg:
        return 0.0, 0.0
    span = max(e["ts"] + e["dur"] for e in seg) - min(e["ts"] for e in seg)
    return span, sum(e["dur"] for e in seg)


def line(e: dict, t0: float) -> str:
    extra = ""
    b = e.get("args", {}).get("bytes")
    if b and e["dur"] > 0:
        extra = f" {b / 1e6:.1f} MB {b / 1e3 / e['dur']:.0f} GB/s"
    return f"{e['ts'] - t0:9.1f} {e['dur']:8.1f} s{e.get('args', {}).get('stream', e.get('tid')):>3} {e['name'][:60]}{extra}"


def main(path: str, anchor: str = "hopper_gemm") -> None:
    cs = calls(gpu_events(path), anchor)
    print(f"== {path}: {len(cs)} calls of {anchor}")
    for i, (a, evs) in enumerate(cs):
        print(f"-- call {i}: {anchor} {a['dur']:.1f} µs")
        for e in evs:
            print(line(e, a["ts"]))


if __name__ == "__main__":
    main(*sys.argv[1:3])
