"""Issue 43's "Done when", checked the way a serving program runs symmtune.torch
on W GPUs, not the way a test finds convenient.

    PYTHONPATH=python torchrun --nproc-per-node W bench/serving_check.py [--quick] [--out FILE]
        [--only serving,layers,...] [--orders rotations|all] [--budget-scale F] [--timeout S]

(bench/serving-check.sh W [ARGS] unpacks the .gpu bundle and sets the
environment first.) bench/torch_ops.py warms every call up twice and drops
each graph before capturing the next, which hid the bugs of issue 43; here
every graph stays alive while the others are captured and replayed, each
(op, shape) gets ONE eager warm-up, ops and sizes are mixed, sizes grow after
the captures, and the ranks read different caches. The checks:

serving        80-layer decode steps (one all-reduce of [B, 8192] bf16 and two
               small matmuls per layer) on plain tensors and on a tensor from
               st.empty, and a TP-MLP layer (agmm, matmulrs, all-reduce, x
               [B, 4096] per rank), captured for B = 1, 2, 4, ..., 256 in
               increasing order into one shared graph pool, one warm-up each,
               all kept; then eager prefills of 512, 8192 and 32768 tokens
               (all-reduces up to 256 MiB, agmm/matmulrs at prefill sizes:
               every workspace grows); then every graph replayed 20 times in
               a random order (the same seed on every rank) on new inputs,
               interleaved with more prefills (some of sizes not seen
               before). Every replay and prefill checked.
layers         the bf16 layer (agmm -> matmulrs -> all_reduce), the FP8 pair
               (agmm + matmulrs) with tensor-wise and with row-wise scales,
               and all-reduces of 3,000 and 3*2^20 elements: each warmed up
               ONCE, in a given order, then all captured and replayed 100
               times each on new inputs. Each order runs in a process group
               of its own (nothing warmed, every workspace fresh, so the
               order decides which warm-up grows what) with shapes of its
               own. Orders: the 5 rotations of one order and of its reverse
               (every op in every position, every pair both ways); --orders
               all runs all 120 permutations.
retired        in a fresh group: graphs of each op captured and replayed,
               then larger eager calls of each op (every workspace grows,
               twice), then the graphs replayed 20 times each, synchronised
               after every replay so a fault is reported at the replay that
               made it. st.memory_stats() before and after.
capture_error  in a fresh group: the first call of each op inside
               torch.cuda.graph raises st.CaptureError (a RuntimeError) that
               names the fix (a warm-up); the next eager call is right, and
               the call then captures and replays right. A first call of a new
               size that fits what earlier calls made may instead simply be
               captured: then its replay must be right.
disagree       per-rank cache files written for this machine's fingerprint
               (case A: rank 0 tuned, a fused agmm/matmulrs tile and a
               one_shot all-reduce, the other ranks empty; B: the other
               ranks tuned differently; C: rank 0 empty, the others tuned),
               shapes unique per case: all_reduce, agmm and matmulrs right on
               every rank, no hang, and (where symmtune's internals can be
               read) one config on every rank, rank 0's.
compile        torch.compile(mode="reduce-overhead", fullgraph=True) of a
               4-layer TP model (agmm + matmulrs + all_reduce per layer) in a
               fresh group at three sequence lengths, with large eager calls
               between that grow every workspace, each length called again
               after each growth; each call checked; no cudagraph skips.
memory         a table: st.memory_stats() and the device's / torch's memory
               after the serving scenario, beside what symmtune, NCCL and
               torch symm_mem hold for the same all-reduce sizes in fresh
               groups (max over ranks).
timing         not pass/fail: per-all-reduce cost in a graphed 80-layer
               decode step at B = 1 and 16 ((step - step without all-reduces)
               / 80) for symmtune in place (st.empty), symmtune on a plain
               tensor, NCCL and torch symm_mem; and the host time of a call
               (median of back-to-back eager calls) of all_reduce 4 KiB and
               agmm / matmulrs 4096x1792x4096.

Correctness: fresh random inputs for every call (never zeros), outputs
poisoned with NaN before each replay, relative error ||got - ref|| / ||ref||
against references computed with torch ops and NCCL: float64 for small
shapes, float32 for prefill sizes; 1e-2 for one op, 2e-2 for FP8 and chains.

Each check prints `CHECK name: PASS|FAIL detail` on rank 0 (failures are
also printed on the rank that saw them) and the run ends with `N passed, M
failed`; --out FILE gets everything as JSON. A check that raises is a FAIL
and the next one runs; after a CUDA fault (a sticky error) the rest are
reported as skipped. Nothing hangs: torch.distributed's timeout (--timeout),
symmtune's agreement timeout (SYMMTUNE_AGREE_TIMEOUT, set here unless given)
and a watchdog per check that, past its budget, prints every thread's stack,
reports the check as a hang with the summary and ends the process.

--quick (for compute-sanitizer): 8 layers, B = 1, 16, 256, 3 replays, two
orders, 10 replays per layer graph, two compile lengths. Use --budget-scale
10 under the sanitizer.
"""
from __future__ import annotations

import argparse
import datetime
import faulthandler
import json
import os
import sys
import threading
import time
import traceback
import warnings
from typing import Any, Callable, Optional

# Before torch and symmtune load: never multicast (forbidden on the shared
# machines), and a bounded wait for the group's config agreement (seconds).
for _k, _v in (("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NCCL_NVLS_ENABLE", "0"), ("NVSHMEM_DISABLE_NVLS", "1"),
               ("SYMMTUNE_AGREE_TIMEOUT", "60"), ("PYTHONUNBUFFERED", "1")):
    os.environ.setdefault(_k, _v)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

# The checks, in modules of bench/serving/ (bench/ is on the path: this
# script's directory). The run's state lives in serving.common: main sets it
# there, and everything reads it as common.NAME.
from serving import common  # noqa: E402
from serving.common import BUDGETS, Check, log  # noqa: E402
from serving.costs import check_compile, check_memory, check_timing  # noqa: E402
from serving.errors import check_capture_error, check_disagree  # noqa: E402
from serving.graphs import check_layers, check_retired, check_serving  # noqa: E402


# ----------------------------------------------------------------- driver
CHECKS: dict[str, Callable[[Check], None]] = {
    "serving": check_serving, "layers": check_layers, "retired": check_retired,
    "capture_error": check_capture_error, "disagree": check_disagree, "compile": check_compile,
    "memory": check_memory, "timing": check_timing,
}


def summary_and_out() -> int:
    npass = sum(1 for r in common.RESULTS if r["pass"])
    nfail = len(common.RESULTS) - npass
    if common.RANK == 0:
        if common.ARGS.out:
            with open(common.ARGS.out, "w") as f:
                json.dump({"world": common.W, "device": torch.cuda.get_device_name(), "torch": torch.__version__,
                           "args": vars(common.ARGS), "checks": common.RESULTS}, f, indent=1, default=str)
        print(f"{npass} passed, {nfail} failed", flush=True)
    return nfail


class Watchdog:
    """Ends the process, with a report, when a check outlives its budget."""

    def __init__(self) -> None:
        self.timer: Optional[threading.Timer] = None

    def arm(self, name: str, seconds: float) -> None:
        self.cancel()
        self.timer = threading.Timer(seconds, self._fire, args=(name, seconds))
        self.timer.daemon = True
        self.timer.start()

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _fire(self, name: str, seconds: float) -> None:
        print(f"[rank {common.RANK}] watchdog: check {name} still running after {seconds:.0f} s; every thread's stack:",
              flush=True)
        try:
            faulthandler.dump_traceback(file=sys.stdout, all_threads=True)
        except Exception:  # noqa: BLE001
            pass
        detail = f"hang: no end after {seconds:.0f} s (a collective or a kernel never finished; stacks above)"
        common.RESULTS.append({"name": name, "pass": False, "detail": detail})
        if common.RANK == 0:
            print(f"CHECK {name}: FAIL {detail}", flush=True)
            for other in CHECKS:
                if other not in {r["name"] for r in common.RESULTS} and other in selected():
                    common.RESULTS.append({"name": other, "pass": False, "detail": f"not run: {name} hung"})
                    print(f"CHECK {other}: FAIL not run: {name} hung", flush=True)
        else:
            time.sleep(30)  # rank 0's own watchdog reports first: torchrun ends every rank once one exits
        summary_and_out()
        sys.stdout.flush()
        os._exit(3)


def selected() -> list[str]:
    if not common.ARGS.only:
        return list(CHECKS)
    return [n for n in CHECKS if n in common.ARGS.only.split(",")]


def run_checks() -> int:
    wd = Watchdog()
    lost = ""
    for name in selected():
        if lost:
            common.RESULTS.append({"name": name, "pass": False, "detail": f"skipped: {lost}"})
            log(f"CHECK {name}: FAIL skipped: {lost}")
            continue
        c = Check(name)
        wd.arm(name, BUDGETS[name] * common.ARGS.budget_scale)
        t0 = time.time()
        try:
            CHECKS[name](c)
        except Exception as e:  # noqa: BLE001 - a failing check must not stop the later ones
            c.fail(f"{type(e).__name__}: {str(e)[:400]}")
            traceback.print_exc(file=sys.stdout)
        ok_cuda = ""
        try:
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - a sticky CUDA error: nothing after it can run
            ok_cuda = f"CUDA error on rank {common.RANK} after check {name}: {type(e).__name__}: {str(e)[:200]}"
            c.fail(ok_cuda)
        mine = {"fails": c.fails[:4], "nfails": len(c.fails), "lost": ok_cuda, "detail": c.detail, "data": c.data}
        every: list[Any] = [None] * common.W
        try:
            dist.all_gather_object(every, mine, group=common.CTL)
        except Exception as e:  # noqa: BLE001 - a rank died: report what this one knows and stop
            every = [mine]
            lost = f"the control group failed after {name}: {type(e).__name__}: {str(e)[:200]}"
        wd.cancel()
        passed = all(e["nfails"] == 0 for e in every)
        bad = [(r, e) for r, e in enumerate(every) if e["nfails"]]
        if passed:
            detail = every[0]["detail"] or "ok"
        else:
            r, e = bad[0]
            detail = (f"{sum(x['nfails'] for _, x in bad)} failures on ranks {','.join(str(q) for q, _ in bad)}; "
                      f"rank {r}: " + " | ".join(e["fails"][:2]))
        detail += f" [{time.time() - t0:.0f} s]"
        common.RESULTS.append({"name": name, "pass": passed, "detail": detail, "seconds": round(time.time() - t0, 1),
                        "per_rank": [{k: v for k, v in e.items() if k != "data"} for e in every],
                        "data": every[0]["data"]})
        log(f"CHECK {name}: {'PASS' if passed else 'FAIL'} {detail}")
        for e in every:
            if e["lost"]:
                lost = e["lost"]
    return summary_and_out()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a short run (for compute-sanitizer)")
    p.add_argument("--out", default="", help="write every result as JSON to this file (rank 0)")
    p.add_argument("--only", default="", help="comma-separated checks: " + ",".join(CHECKS))
    p.add_argument("--orders", choices=("rotations", "all"), default="rotations",
                   help="layers: the rotations of one warm-up order and its reverse, or all 120 permutations")
    p.add_argument("--layers", type=int, default=0, help="decode layers (default 80; --quick 8)")
    p.add_argument("--seed", type=int, default=43)
    p.add_argument("--budget-scale", type=float, default=1.0, help="multiplies every check's watchdog budget")
    p.add_argument("--timeout", type=float, default=600.0, help="torch.distributed's timeout, seconds")
    common.ARGS = p.parse_args()
    common.ARGS.layers = common.ARGS.layers or (8 if common.ARGS.quick else 80)
    unknown = [n for n in common.ARGS.only.split(",") if n and n not in CHECKS]
    if unknown:
        p.error(f"unknown checks {unknown}; the checks: {','.join(CHECKS)}")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    common.TIMEOUT = datetime.timedelta(seconds=common.ARGS.timeout * common.ARGS.budget_scale)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local), timeout=common.TIMEOUT)
    common.RANK, common.W = dist.get_rank(), dist.get_world_size()
    common.CTL = dist.new_group(backend="gloo", timeout=common.TIMEOUT)
    common.SAME = torch.Generator(device="cuda").manual_seed(common.ARGS.seed)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 references in fp32
    warnings.filterwarnings("ignore", message=r"symmtune: no tuned")
    log(f"# serving_check: {torch.cuda.get_device_name()} x{common.W}, torch {torch.__version__}, "
        f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, checks {','.join(selected())}"
        f"{' (quick)' if common.ARGS.quick else ''}, SYMMTUNE_AGREE_TIMEOUT={os.environ.get('SYMMTUNE_AGREE_TIMEOUT')}")
    nfail = run_checks()
    try:
        dist.destroy_process_group()
    except Exception:  # noqa: BLE001
        pass
    sys.stdout.flush()
    os._exit(1 if nfail else 0)  # no teardown of symmtune's or torch's state in a process that may have faulted


if __name__ == "__main__":
    main()
