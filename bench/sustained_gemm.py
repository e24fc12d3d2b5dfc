"""The Hopper GEMM alone against cuBLAS under sustained load, on one GPU:
each kernel runs back to back for a few seconds (as in a training step's
stream of products, where a power-capped GPU settles at a lower clock than a
short burst sees), with NVML's power and SM clock sampled meanwhile, in
alternating rounds. Energy per call = mean power x time per call: where two
kernels draw the cap, the one that needs less energy per product runs at the
higher clock.

    PYTHONPATH=python:bench python3 bench/sustained_gemm.py [--seconds 3] [--rounds 2] [--shapes ..] [--tiles ..]

Each kernel's output is first checked against torch.mm (rel err printed).
"""
from __future__ import annotations

import argparse
import threading
import time

import pynvml
import torch

from symmtune import _cublaslt, _torch_fused, hopper


class Sampler:
    """NVML power (W) and SM clock (MHz) every period seconds, in a thread,
    kept between mark() and stop()."""

    def __init__(self, index: int, period: float = 0.02) -> None:
        pynvml.nvmlInit()
        self.h = pynvml.nvmlDeviceGetHandleByIndex(index)
        self.period, self.samples, self.on = period, [], False
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self) -> None:
        while not self.done.is_set():
            w = pynvml.nvmlDeviceGetPowerUsage(self.h) / 1000
            mhz = pynvml.nvmlDeviceGetClockInfo(self.h, pynvml.NVML_CLOCK_SM)
            with self.lock:
                if self.on:
                    self.samples.append((w, mhz))
            time.sleep(self.period)

    def mark(self) -> None:
        with self.lock:
            self.samples, self.on = [], True

    def stop(self) -> tuple[float, float]:
        with self.lock:
            self.on = False
            s = self.samples
        return sum(w for w, _ in s) / len(s), sum(m for _, m in s) / len(s)

    def close(self) -> None:
        self.done.set()
        self.t.join()


def sustained(fn, seconds: float, sampler: Sampler, batch: int = 10) -> tuple[float, float, float]:
    """(µs per call, mean W, mean MHz) over the last seconds-1 of seconds of
    back-to-back calls; at most two batches are queued at a time."""
    stream = torch.cuda.current_stream()
    prev = None
    t0 = time.perf_counter()
    start, calls = None, 0
    while True:
        for _ in range(batch):
            fn()
        ev = torch.cuda.Event()
        ev.record(stream)
        if prev is not None:
            prev.synchronize()
        prev = ev
        now = time.perf_counter()
        if start is None and now - t0 >= 1.0:  # settled: measure from here
            torch.cuda.synchronize()
            start, calls = time.perf_counter(), 0
            sampler.mark()
            prev = None
            continue
        if start is not None:
            calls += batch
            if now - t0 >= seconds:
                break
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    w, mhz = sampler.stop()
    return elapsed / calls * 1e6, w, mhz


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--shapes", default="8192x3584x8192,16384x3584x8192")
    ap.add_argument("--tiles", default="128x256:s4:c2:g8,128x256:s4:c2:g4:cl2,64x224:s6:c2:g8:pp")
    args = ap.parse_args()
    dev = torch.device("cuda", torch.cuda.current_device())
    sampler = Sampler(dev.index)
    print(f"{torch.cuda.get_device_name()}: {args.seconds:.0f} s back to back per kernel and round (the first second "
          "not counted), rounds alternating; ratio = cuBLAS mm's µs in the same round / the kernel's")
    print("| M x N x K | kernel | round | µs/call | TFLOP/s | ratio | W | SM MHz | mJ/call | rel err |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for shape in args.shapes.split(","):
        m, n, k = map(int, shape.split("x"))
        a = torch.randn(m, k, dtype=torch.bfloat16, device=dev)
        bt = torch.randn(n, k, dtype=torch.bfloat16, device=dev) / k ** 0.5  # B stored [N, K]
        want = torch.mm(a, bt.t())
        fns, errs = {}, {}
        c_mm = torch.empty(m, n, dtype=torch.bfloat16, device=dev)
        fns["cublas mm"] = lambda: torch.mm(a, bt.t(), out=c_mm)
        ws = torch.empty(_cublaslt.WORKSPACE_BYTES, dtype=torch.uint8, device=dev)
        plan = _cublaslt.Plan(dev.index, m, n, k, "bf16")
        c_lt = torch.empty(m, n, dtype=torch.bfloat16, device=dev)
        fns["cublaslt algo0"] = lambda: plan.run(torch.cuda.current_stream().cuda_stream, 0, a.data_ptr(),
                                                 bt.data_ptr(), c_lt.data_ptr(), ws.data_ptr())
        status = _torch_fused.Status()
        for name in args.tiles.split(","):
            t = hopper.parse_tile(name)
            g = _torch_fused.fused_gemm(t, True, dev)
            b = bt if t.bk_major else bt.t().contiguous()
            c = torch.empty(m, n, dtype=torch.bfloat16, device=dev)
            call = _torch_fused.Call(g, m, n, k, g.sms, order=tuple(range(-(-m // t.rows_per_tile))),
                                     status=status)
            call.set(a.data_ptr(), b.data_ptr(), c.data_ptr())
            fns[name] = lambda call=call: call.launch(torch.cuda.current_stream().cuda_stream)
            errs[name] = c
        errs["cublas mm"], errs["cublaslt algo0"] = c_mm, c_lt
        for name, fn in fns.items():
            errs[name].fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            got = errs[name].float()
            errs[name] = ((got - want.float()).norm() / want.float().norm()).item()
        flops = 2 * m * n * k
        for r in range(args.rounds):
            order = list(fns) if r % 2 == 0 else list(reversed(fns))
            res = {name: sustained(fns[name], args.seconds, sampler) for name in order}
            base = res["cublas mm"][0]
            for name in fns:
                us, w, mhz = res[name]
                print(f"| {shape} | {name} | {r + 1} | {us:.1f} | {flops / us / 1e6:.0f} | {base / us:.3f} | {w:.0f} | "
                      f"{mhz:.0f} | {w * us / 1e3:.1f} | {errs[name]:.1e} |", flush=True)
    sampler.close()


if __name__ == "__main__":
    main()
