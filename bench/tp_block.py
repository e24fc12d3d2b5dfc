"""A Llama-style tensor-parallel MLP block on W GPUs, three ways: NCCL +
cuBLAS, torch's fused symm_mem ops, and symmtune.torch.

    PYTHONPATH=python:bench torchrun --nproc-per-node 2 bench/tp_block.py [--tokens 1024,4096,16384]
        [--modes eager,graph,compile] [--compile-tokens 4096] [--rounds 5]

The block (sequence parallel, hidden H = 8192, intermediate I = 28672):
x_shard [T/W, H] -> all-gather + matmul with W1 [H, I/W] -> SiLU -> matmul +
reduce-scatter with W2 [I/W, H] -> [T/W, H]. Each implementation runs
    eager:   the block called back to back (throughput mode: many calls
             enqueued, the host ahead of the GPU);
    graph:   one block captured in a torch.cuda.graph, replayed back to back;
    compile: torch.compile(fullgraph=True) of the block, called back to back.
Each implementation's output is checked against NCCL + cuBLAS eager on the
same inputs (relative error under 2e-2) before it is timed. Timing: rounds
that each time N calls of every implementation in turn (the order rotating),
CUDA events around the N calls, per-call time = span / N; the median over
rounds (--rounds, default 5; two runs of the same configs on 2 x H200 differed
by up to 7% at 16,384 tokens in a graph, so close calls want more), the max
over ranks. The two local matmuls alone (cuBLAS, same
shapes) are timed in the same rounds: "x mm" is each row over them.

With SYMMTUNE_RECORD=FILE set, symmtune's calls write their shapes to FILE
(symmtune.record), for `symmtune search --config FILE`.
Prints "tp_block,T,mode,impl,us,x mm" lines and FAIL lines; exits 1 on failure.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem
import torch.nn.functional as F

import symmtune.torch as st
from peer_method import warm_and_capture

FAILS: list[str] = []


def fail(msg: str) -> None:
    FAILS.append(msg)
    print(f"FAIL rank {dist.get_rank()}: {msg}", flush=True)


def impls(group: str, w1: torch.Tensor, w2: torch.Tensor, tokens: int, hidden: int) -> dict:
    w = dist.get_world_size()
    gathered = torch.empty(tokens, hidden, dtype=torch.bfloat16, device="cuda")
    rs_out = torch.empty(tokens // w, hidden, dtype=torch.bfloat16, device="cuda")
    w1t, w2t = w1.t().contiguous().t(), w2.t().contiguous().t()  # nn.Linear-style storage: [out, in], used .t()

    def nccl(x):
        dist.all_gather_into_tensor(gathered, x)
        h = F.silu(gathered @ w1)
        dist.reduce_scatter_tensor(rs_out, h @ w2)
        return rs_out

    def nccl_functional(x):  # what torch.compile traces (functional collectives)
        import torch.distributed._functional_collectives as fc
        a = fc.all_gather_tensor(x, 0, group)
        h = F.silu(a @ w1)
        return fc.reduce_scatter_tensor(h @ w2, "sum", 0, group)

    def torch_fused(x):
        _, (c,) = torch.ops.symm_mem.fused_all_gather_matmul(x, [w1], 0, group, return_A=False)
        return torch.ops.symm_mem.fused_matmul_reduce_scatter(F.silu(c), w2, "sum", 0, group)

    def symmtune(x):
        h = F.silu(st.all_gather_matmul(x, w1t, group))
        return st.matmul_reduce_scatter(h, w2t, group)

    return {"nccl+cublas": nccl, "nccl_functional": nccl_functional, "torch_fused": torch_fused, "symmtune": symmtune}


def timed(fns: dict, n: int, rounds: int) -> dict[str, float]:
    """Per-call µs of each fn: rounds of n back-to-back calls each, order
    rotating, events around each batch; median over rounds, max over ranks."""
    names = list(fns)
    for f in fns.values():
        f()
    torch.cuda.synchronize()
    dist.barrier()
    per: dict[str, list[float]] = {k: [] for k in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        evs = []
        for name in order:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(n):
                fns[name]()
            b.record()
            evs.append((name, a, b))
        torch.cuda.synchronize()
        for name, a, b in evs:
            per[name].append(a.elapsed_time(b) * 1000 / n)
    med = torch.tensor([statistics.median(per[k]) for k in names], device="cuda")
    dist.all_reduce(med, op=dist.ReduceOp.MAX)
    return dict(zip(names, med.tolist()))


def run(tokens: int, modes: list[str], hidden: int, inter: int, rounds: int) -> None:
    rank, w = dist.get_rank(), dist.get_world_size()
    group = dist.group.WORLD.group_name
    gen = torch.Generator(device="cuda").manual_seed(100 + rank)
    x = torch.randn(tokens // w, hidden, dtype=torch.bfloat16, device="cuda", generator=gen)
    w1 = torch.randn(hidden, inter // w, dtype=torch.bfloat16, device="cuda", generator=gen) * hidden ** -0.5
    w2 = torch.randn(inter // w, hidden, dtype=torch.bfloat16, device="cuda", generator=gen) * (inter // w) ** -0.5
    fns = impls(group, w1, w2, tokens, hidden)
    want = fns["nccl+cublas"](x).double().clone()
    a_full = torch.randn(tokens, hidden, dtype=torch.bfloat16, device="cuda", generator=gen)
    h_full = torch.randn(tokens, inter // w, dtype=torch.bfloat16, device="cuda", generator=gen)

    def mm_alone():
        torch.mm(a_full, w1)
        torch.mm(h_full, w2)

    n = max(2, 16384 // tokens * 2)
    for mode in modes:
        calls: dict = {"mm alone": mm_alone}
        for name, fn in fns.items():
            if mode != "compile" and name == "nccl_functional":
                continue  # what torch.compile traces; eagerly it is NCCL + cuBLAS again
            try:
                if mode == "graph":
                    g, out = warm_and_capture(lambda fn=fn: fn(x))
                    g.replay()
                    got, call = out, g.replay
                elif mode == "compile":
                    torch._dynamo.reset()
                    cf = torch.compile(fn, fullgraph=True)
                    got, call = cf(x), (lambda cf=cf: cf(x))
                else:
                    got, call = fn(x), (lambda fn=fn: fn(x))
                torch.cuda.synchronize()
                err = ((got.double() - want).norm() / want.norm()).item()
                if not err <= 2e-2:
                    fail(f"T={tokens} {mode} {name}: rel err {err:.3g} against nccl+cublas eager")
                    continue
                calls[name] = call
            except Exception as e:  # noqa: BLE001 - reported, the others still run
                fail(f"T={tokens} {mode} {name}: {type(e).__name__}: {str(e)[:300]}")
        try:
            t = timed(calls, n, rounds=rounds)
        except Exception as e:  # noqa: BLE001
            fail(f"T={tokens} {mode}: timing: {type(e).__name__}: {str(e)[:300]}")
            continue
        if rank == 0:
            for name, us in t.items():
                print(f"tp_block,{tokens},{mode},{name},{us:.1f},{us / t['mm alone']:.3f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", default="1024,4096,16384")
    ap.add_argument("--modes", default="eager,graph,compile")
    ap.add_argument("--compile-tokens", default="4096", help="token counts compile mode runs at (each compile takes seconds)")
    ap.add_argument("--hidden", type=int, default=8192)
    ap.add_argument("--inter", type=int, default=28672)
    ap.add_argument("--rounds", type=int, default=5, help="timing rounds per mode (median over them)")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds {args.rounds}: want 1 or more")
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    try:
        symm_mem.enable_symm_mem_for_group(dist.group.WORLD.group_name)  # torch's fused ops need it before 2.9
    except AttributeError:
        pass
    if rank == 0:
        print(f"# {torch.cuda.get_device_name()} x{dist.get_world_size()}, torch {torch.__version__}, "
              f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}", flush=True)
        print("tp_block,tokens,mode,impl,us per block,x mm alone", flush=True)
    compile_at = {int(v) for v in args.compile_tokens.split(",")}
    for t in (int(v) for v in args.tokens.split(",")):
        modes = [m for m in args.modes.split(",") if m != "compile" or t in compile_at]
        run(t, modes, args.hidden, args.inter, args.rounds)
    nf = torch.tensor([len(FAILS)], device="cuda")
    dist.all_reduce(nf)
    if rank == 0:
        print(f"# failures over ranks: {int(nf.item())}", flush=True)
    dist.destroy_process_group()
    sys.exit(1 if nf.item() else 0)


if __name__ == "__main__":
    main()
