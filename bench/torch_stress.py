"""symmtune.torch's fused GEMMs called back to back many times, as a
training loop calls them, to catch a rare timed-out wait (FusedError) and
the slow calls around it.

    PYTHONPATH=python:bench torchrun --nproc-per-node W bench/torch_stress.py \
        [--shape MxNxK] [--calls N] [--rounds R] [--variants KERNEL/TILE/MODE/GRAPH,...]

Per variant (KERNEL/TILE/MODE/GRAPH: a config forced with chunks 2, MODE
agmm's direction, push or pull, or matmulrs's reduce, kernel or epilogue),
--rounds rounds of --calls calls enqueued without a sync, each between CUDA
events; after each round: the call times (median, p99, max, calls over 3x
the median) and the status word. A variant whose wait timed out stops
there, and the flag words of every rank's region are printed as the GPUs
left them: the call clears them after its GEMM, so a word still set is a
flag that arrived after its GEMM had given up on it (the late chunk). The
flags and the status are then cleared on every rank, so the next variant
starts clean. Exit code 1 when any wait timed out.

--watchdog S: a variant still running after S seconds (a hang no bound
catches) has every thread's Python stack dumped, which of its streams
still have work, and the words their waits read (see stuck), copied on a
stream of their own (a spinning kernel does not hold the copy engines);
the process then exits with code 3.

--profile DIR: after its rounds, each variant runs 20 more calls under
torch.profiler (CUDA activity), exported as DIR/VARIANT-rankR.json; read
them with bench/trace_timeline.py (which stream ran what, copy engines or
SMs, in which order).
"""
import argparse
import ctypes
import faulthandler
import os
import sys
import threading

import torch
import torch.distributed as dist

from symmtune import _cuda, _torch_fused, _torch_gemm, fusedplan, gemm, kernels
from torch_fused import forced
from torch_gemm import inputs, join_group, ours

DEFAULT_VARIANTS = ("agmm/64x256:s5:c2:g8:pp/push/1,agmm/64x256:s5:c2:g8:pp/push/0,agmm/64x256:s5:c2:g8:pp/pull/1,"
                    "agmm/64x224:s6:c2:g8:pp/push/1,agmm/128x256:s4:c2:g8/push/1,"
                    "matmulrs/128x256:s4:c2:g4/epilogue/1,matmulrs/128x256:s4:c2:g4/epilogue/0,"
                    "matmulrs/128x256:s4:c2:g4/kernel/1")


def read_u32(ptr: int, n: int) -> list[int]:
    """n words at device address ptr, copied to the host on a new
    non-blocking stream, whatever runs on the others."""
    drv = _cuda.driver()
    stream = ctypes.c_void_p()
    drv.cuStreamCreate(ctypes.byref(stream), 1)  # CU_STREAM_NON_BLOCKING
    host = (ctypes.c_uint32 * n)()
    drv.cuMemcpyDtoHAsync_v2(host, ctypes.c_uint64(ptr), ctypes.c_size_t(4 * n), stream)
    drv.cuStreamSynchronize(stream)
    drv.cuStreamDestroy_v2(stream)
    return list(host)


def nonzero_flags(ptr: int, n: int, name=str) -> list[str]:
    """The nonzero ones of the n flag words at ptr (FLAG_STRIDE apart), each
    as name(index)=value."""
    step = gemm.FLAG_STRIDE // 4
    return [f"{name(i // step)}={v}" for i, v in enumerate(read_u32(ptr, n * step)) if v and i % step == 0]


def region_flag(i: int) -> str:
    """Flag i of a region by what it announces (layout.go)."""
    chunks, world = gemm.MAX_WORLD * gemm.MAX_CHUNKS, gemm.MAX_WORLD
    if i < chunks:
        return f"partial(src {i // gemm.MAX_CHUNKS}, chunk {i % gemm.MAX_CHUNKS})"
    if i < chunks + world:
        return f"ready({i - chunks})"
    return f"start({i - chunks - world})"


def region_flags(ws, rank: int) -> list[str]:
    """The nonzero flags of rank's region, by name."""
    return nonzero_flags(ws.ptrs[rank], gemm.PAYLOAD_OFFSET // gemm.FLAG_STRIDE, region_flag)


def stuck(pipe, rank: int) -> str:
    """Which of the pipeline's streams still have work, and the words its
    waits read: this rank's flags, the local "staged" flags, the reduce-
    scatter table's tile counts, the team barrier's pad and timeout flag."""
    drv = _cuda.driver()
    streams = {"main": torch.cuda.current_stream().cuda_stream}
    streams.update({f"gemm{i}": st.cuda_stream for i, st in enumerate(pipe.gemm_streams)})
    streams.update({f"side{i}": st for i, st in enumerate(pipe.side)})
    streams["reduce"] = pipe.reduce
    busy = [name for name, st in streams.items() if drv.cuStreamQuery(ctypes.c_void_p(st)) != 0]
    out = [f"busy streams {busy}", f"flags {region_flags(pipe.ws, rank)}"]
    if getattr(pipe, "local_flags", None) is not None:
        out.append(f"local flags {nonzero_flags(pipe.local_flags.data_ptr(), gemm.MAX_WORLD * gemm.MAX_CHUNKS)}")
    call = getattr(pipe, "fused_call", None)
    if call is not None and call.rs is not None:
        out.append(f"rs counts {[c for c in read_u32(call.rs.data_ptr() + fusedplan.RS_COUNT_OFFSET, fusedplan.RS_COUNT_BYTES // 4) if c]}")
    pad = pipe.ws.hdl.signal_pad_ptrs[rank]
    # The team barrier's slot is the last (barrier.cuh); its timeout flag follows the pads.
    slots, width = kernels._PAD_SLOTS, kernels._MAX_WORLD
    out.append(f"barrier pad {read_u32(pad + 4 * width * (slots - 1), width)} "
               f"timeout flag {read_u32(pad + 4 * width * slots, 1)}")
    return "; ".join(out)


def watch(seconds: float, rank: int, what: list, status) -> threading.Event:
    """Starts the watchdog of --watchdog; set the returned event to disarm it."""
    done = threading.Event()

    def bite():
        if done.wait(seconds):
            return
        pipe = what[1]
        print(f"stress,rank {rank}: {what[0]} still running after {seconds:.0f} s; status word "
              f"{status.word.value}; {stuck(pipe, rank) if pipe else 'no pipeline yet'}", flush=True)
        faulthandler.dump_traceback(all_threads=True)
        os._exit(3)

    threading.Thread(target=bite, daemon=True).start()
    return done


def profiled(fn, a, bt, calls: int, path: str) -> None:
    """calls more calls of fn under torch.profiler, its trace exported to path."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(a, bt)
        torch.cuda.synchronize()
    prof.export_chrome_trace(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="8192x3584x8192")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--variants", default=DEFAULT_VARIANTS)
    ap.add_argument("--watchdog", type=float, default=0)
    ap.add_argument("--profile", default="")
    args = ap.parse_args()
    rank, world, group = join_group()
    say = (lambda *a: print(*a, flush=True)) if rank == 0 else (lambda *a: None)
    m, n, k = map(int, args.shape.split("x"))
    status = _torch_fused.status(group, torch.device("cuda", rank))
    timeouts = 0
    for v in args.variants.split(","):
        kernel, tile, mode, graph = v.split("/")
        cfg = {**gemm.default_config(kernel), "impl": f"fused:{tile}", "graph": int(graph), "chunks": 2,
               ("direction" if kernel == gemm.AGMM else "reduce"): mode}
        gemm.validate(gemm.parse_config(kernel, cfg), gemm.Problem(m, n, k, world))
        a, b = inputs(kernel, m, n, k, world, rank, 3)
        bt = b.t().contiguous().t()
        what = [v, 0]
        dog = watch(args.watchdog, rank, what, status) if args.watchdog else threading.Event()
        with forced(cfg):
            fn = ours(kernel)
            fn(a, bt)
            what[1] = next(iter(_torch_gemm._pipes.values()))
            for _ in range(4):
                fn(a, bt)
            torch.cuda.synchronize()
            dist.barrier()
            for r in range(args.rounds):
                evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                       for _ in range(args.calls)]
                failed = ""
                for s, e in evs:
                    s.record()
                    try:
                        fn(a, bt)
                    except _torch_fused.FusedError:
                        failed = "raised"
                        break
                    e.record()
                torch.cuda.synchronize()
                timed_out = failed or ("word" if status.word.value else "")
                ts = sorted(s.elapsed_time(e) * 1000 for s, e in evs if e.query() and s.query()) if not failed else []
                med = ts[len(ts) // 2] if ts else 0.0
                stats = torch.tensor([med, ts[int(len(ts) * 0.99)] if ts else 0.0, ts[-1] if ts else 0.0,
                                      sum(t > 3 * med for t in ts), 1.0 if timed_out else 0.0], device="cuda")
                every = [torch.zeros_like(stats) for _ in range(world)]
                dist.all_gather(every, stats)
                say(f"stress,{v},{args.shape},round {r}," + ";".join(
                    f"rank {q}: median {x[0]:.1f} p99 {x[1]:.1f} max {x[2]:.1f} slow {int(x[3])} timeout {int(x[4])}"
                    for q, x in enumerate(t.tolist() for t in every)))
                if any(x[4].item() for x in every):
                    timeouts += 1
                    ws = next(iter(_torch_gemm._pipes.values())).ws
                    for q in range(world):
                        if q == rank:
                            print(f"stress,{v},rank {rank} flags left set: {region_flags(ws, rank) or 'none'}", flush=True)
                        dist.barrier()
                    _cuda.memset_d8(ws.ptrs[rank], 0, gemm.PAYLOAD_OFFSET, torch.cuda.current_stream().cuda_stream)
                    torch.cuda.synchronize()
                    status.word._word.value = 0
                    dist.barrier()
                    break
            else:
                if args.profile:
                    os.makedirs(args.profile, exist_ok=True)
                    profiled(fn, a, bt, 20, os.path.join(args.profile, f"{v.replace('/', '_').replace(':', '_')}-rank{rank}.json"))
        dog.set()
    say(f"stress: {timeouts} variant(s) timed out")
    dist.destroy_process_group()
    sys.exit(1 if timeouts else 0)


if __name__ == "__main__":
    main()
