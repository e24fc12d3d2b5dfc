"""NVLink traffic leaving each GPU in an all-to-all: SM stores, copy engines, or both at once.

    torchrun --nproc-per-node W bench/experiments/link_mix.py [--mib 64] [--reps 10]

Issue 45's in-place all-reduce bar at W = 4 (128 MiB in 540 us) needs about 373 GB/s leaving each
GPU for the whole call. The push two-shot's SM stores ran at 345-360 GB/s and copy engines
all-to-all at 282 (ce_bw.py, 2026-11-21). Whether SMs and copy engines moving disjoint parts at the
same time add up past either alone decides whether a split two-shot can reach the bar; this
measures it before any kernel is written.

Each rank writes MIB MiB to every peer, into its slot of the peer's torch symm_mem buffer
(multicast off: run it after sourcing bench/lib.sh). Modes:
- sm_push / sm_pull: an elementwise kernel (16-byte vectors) storing into the peers' slots, or
  loading from them into local memory; one stream per peer.
- ce_push / ce_pull: the same bytes by cudaMemcpyAsync (copy engines); one stream per peer.
- mix_F: fraction F of each peer's bytes by sm_push, the rest by ce_push, all at once.
- mixpull_F: F by sm_push, the rest by ce_pull.
Every mode's received slots are checked against the senders' data (the buffer is poisoned with NaN
first). Each rep times BATCH calls back to back (no barrier between them: the ranks' calls overlap
as in a busy program). Printed per mode: the median over REPS of the slowest rank's time per call,
and GB/s leaving each GPU.
"""
import argparse
import os
import statistics
from typing import Callable

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=64, help="MiB each rank sends to each peer")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=5, help="calls back to back per timed rep")
    ap.add_argument("--fractions", default="0.25,0.5,0.75", help="SM shares of the mixed modes")
    args = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group("nccl")
    group = dist.group.WORLD
    n = args.mib << 18  # float32 elements per slot
    buf = symm_mem.empty(world * n, dtype=torch.float32, device="cuda")
    hdl = symm_mem.rendezvous(buf, group.group_name)
    peers = [q for q in range(world) if q != rank]
    # Peer q's buffer as mapped here; slot r of a buffer is what rank r sends.
    remote = {q: hdl.get_buffer(q, (world * n,), torch.float32) for q in peers}
    src = torch.arange(n, device="cuda", dtype=torch.float32).mul_(1e-3).add_(rank + 1)
    # Each peer's data as it lies in its own slot q of its buffer, for the pulls.
    mine = buf[rank * n:(rank + 1) * n]
    streams = {q: torch.cuda.Stream() for q in peers}
    main_stream = torch.cuda.current_stream()

    def slot(t: torch.Tensor, r: int) -> torch.Tensor:
        return t[r * n:(r + 1) * n]

    def sm_store(dst: torch.Tensor, s: torch.Tensor) -> None:
        torch.mul(s, 1.0, out=dst)  # an elementwise kernel: SMs move the bytes

    def ce_copy(dst: torch.Tensor, s: torch.Tensor) -> None:
        dst.copy_(s)  # same dtype, contiguous, same device: cudaMemcpyAsync

    def push(q: int, lo: int, hi: int, how: Callable[[torch.Tensor, torch.Tensor], None]) -> None:
        how(slot(remote[q], rank)[lo:hi], src[lo:hi])

    def pull(q: int, lo: int, hi: int, how: Callable[[torch.Tensor, torch.Tensor], None]) -> None:
        # Rank q's data in its own slot q, read into my slot q.
        how(slot(buf, q)[lo:hi], slot(remote[q], q)[lo:hi])

    def mode(sm_share: float, sm: str, ce: str) -> Callable[[int], None]:
        cut = int(n * sm_share) // 1024 * 1024
        parts = []
        if cut > 0:
            parts.append((0, cut, sm_store, push if sm == "push" else pull))
        if cut < n:
            parts.append((cut, n, ce_copy, push if ce == "push" else pull))

        def run(q: int) -> None:
            for lo, hi, how, way in parts:
                way(q, lo, hi, how)
        return run

    fractions = [float(f) for f in args.fractions.split(",") if f]
    modes = {"sm_push": mode(1, "push", "push"), "sm_pull": mode(1, "pull", "pull"),
             "ce_push": mode(0, "push", "push"), "ce_pull": mode(0, "pull", "pull")}
    for f in fractions:
        modes[f"mix_{f:g}"] = mode(f, "push", "push")
        modes[f"mixpull_{f:g}"] = mode(f, "push", "pull")

    def once(run: Callable[[int], None]) -> tuple[torch.cuda.Event, torch.cuda.Event]:
        # Back-to-back calls of a push mode rewrite the same slots: the
        # bytes are what counts here, not the order they land in.
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(main_stream)
        for q in peers:
            streams[q].wait_stream(main_stream)
            with torch.cuda.stream(streams[q]):
                run(q)
        for q in peers:
            main_stream.wait_stream(streams[q])
        end.record(main_stream)
        return start, end

    def aligned() -> None:
        torch.cuda.synchronize()
        dist.barrier()
        torch.cuda.synchronize()

    if rank == 0:
        print(f"# link_mix: {torch.cuda.get_device_name()} x{world}, {args.mib} MiB to each peer, "
              f"torch {torch.__version__}", flush=True)
        print("mode,us (slowest rank, median),GB/s out per GPU,check", flush=True)
    for name, run in modes.items():
        # Poison, fill my own slot (the pulls' source), run once, check what arrived.
        buf.fill_(float("nan"))
        mine.copy_(src)
        aligned()
        once(run)
        aligned()
        ok = all(torch.equal(slot(buf, q), torch.arange(n, device="cuda", dtype=torch.float32).mul_(1e-3).add_(q + 1))
                 for q in peers)
        times = []
        for _ in range(args.reps):
            aligned()
            # BATCH calls back to back between the events: the link busy,
            # the clocks up, launch gaps hidden behind the previous call.
            first, _ = once(run)
            for _ in range(args.batch - 1):
                _, end = once(run)
            end.synchronize()
            t = torch.tensor([first.elapsed_time(end) * 1e3 / args.batch], device="cuda")
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            times.append(t.item())
        bad = torch.tensor([0 if ok else 1], device="cuda")
        dist.all_reduce(bad)
        us = statistics.median(times)
        gbs = len(peers) * n * 4 / (us * 1e-6) / 1e9
        if rank == 0:
            print(f"{name},{us:.1f},{gbs:.1f},{'ok' if bad.item() == 0 else f'WRONG on {bad.item()} ranks'}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
