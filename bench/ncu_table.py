#!/usr/bin/env python3
"""bench/ncu_table.py: what limits each GEMM kernel bench/ncu-gemm.sh profiled,
as Markdown tables (issue 56: "compare each kernel with the peak, and write
down what limits it").

    python3 bench/ncu_table.py [--gemmalone gemmalone.csv] ncu-MxNxK.csv ...

Each ncu-MxNxK.csv is Nsight Compute's raw page of one shape's report
(`ncu --import R --page raw --csv`): a header row (ID, Process ID, Process
Name, Host Name, Kernel Name, Context, Stream, Block Size, Grid Size, Device,
CC, then one column per metric), a row of units, then one row per profiled
launch; numbers may carry thousands separators. The shape is the file
name's MxNxK. --gemmalone is bin/gemmalone's output for those shapes (run
with -profile): its '# profiled SHAPE cublaslt algoN' and '# profiled SHAPE
fused TILE' lines name the launches in order (our kernel is hopper_gemm,
anything else cuBLASLt's), and its rows give each kernel's time by CUDA
events outside the profiled range ("timed").

Per shape, one row per kernel (the mean over its profiled launches): ncu's
duration; TFLOP/s = 2MNK / duration and its share of the dense peak (989.4
TFLOP/s bf16 / f16, 1978.9 FP8: H100 / H200 SXM at 1.83 GHz); the SM clock;
SM throughput % (SpeedOfLight); the tensor pipe's active cycles as a share
of the SMs' active cycles (the largest of the gmma, hmma and tensor pipe
metrics ncu gave: on Hopper the hmma pipe's cycles count wgmma too); the
SMs' active share of the elapsed cycles; DRAM bytes read + written over the
duration in GB/s and as a share of the card's DRAM peak (its memory bus
width times twice its memory clock, from the page's device attributes:
3.35 TB/s on an H100 SXM, 4.8 on an H200; 4.8 where a page lacks them), and as a
multiple of the bytes the product must move (A, B and C once); the L2 hit
rate; achieved occupancy; registers per thread and shared memory per block;
grid and, for our tiles, output tiles per SM; the top three warp stall
reasons (warps stalled per issued instruction, WarpStateStats); and

the limit, by this rule, first match:
  memory   DRAM at >= 70% of that peak (bytes over duration) or ncu's DRAM
           throughput >= 70%: the bytes set the time
  tensor   tensor pipe busy >= 85% of the active cycles and the SMs active
           >= 90% of the elapsed cycles: at the pipe's speed; what is left
           is the clock
  tail     SMs active < 90% of the elapsed cycles: SMs idle for part of the
           kernel (fewer tiles than SMs, uneven tiles per SM, start and end)
  latency  otherwise: the SMs are busy but neither the tensor pipe nor DRAM
           near its peak: the main loop waits (on loads, barriers, the
           epilogue: the stall columns say which)
"""

import argparse
import csv
import math
import re
import sys
from typing import Dict, List, Optional, Tuple

PEAK_TFLOPS = {"bf16": 989.4, "f16": 989.4, "e4m3": 1978.9, "e4m3_row": 1978.9}
DRAM_PEAK_GBS = 4800.0  # H200's HBM3e: a page without the device's memory attributes
MEMORY_PCT, TENSOR_PCT, ACTIVE_SHARE = 70.0, 85.0, 0.90
OURS = "hopper_gemm"

TENSOR_METRICS = ("sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
                  "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                  "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")
# Warp stall reasons: WarpStateStats' warps stalled per issued instruction,
# else (an ncu without them) the share of active warp cycles.
_STALLS = (re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$"),
           re.compile(r"^smsp__warp_issue_stalled_(\w+?)_per_warp_active\.pct$"))
_SHAPE = re.compile(r"(\d+)x(\d+)x(\d+)")
_PROFILED = re.compile(r"^# profiled (\d+x\d+x\d+) (cublaslt|cublaslt-fp8|fused) (\S+): (\d+) launches")
_RUN = re.compile(r"^# [^,]+, (\d+) SMs, (\w+),")

# Unit prefixes and the base units ncu writes (raw page, auto or base units).
_PREFIX = {"": 1.0, "n": 1e-9, "u": 1e-6, "m": 1e-3, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BASES = ("second", "byte", "hz", "cycle", "inst", "warp", "thread", "block", "register", "sector", "request", "s")


def unit_scale(unit: str) -> Tuple[str, float]:
    """A unit as (base unit, factor to it): 'usecond' or 'us' -> ('second',
    1e-6), 'Gbyte/second' or 'Gbyte/s' -> ('byte/second', 1e9), 'Ghz' ->
    ('hz', 1e9) (ncu 2025+ writes the short forms on the raw page); units it
    does not know ('%', 'register/thread') keep factor 1."""
    parts = unit.strip().split("/")
    bases, factor = [], 1.0
    for i, part in enumerate(parts):
        base, f = part, 1.0
        for p, v in _PREFIX.items():
            if part.startswith(p) and part[len(p):].lower() in _BASES:
                base, f = part[len(p):].lower(), v
                base = "second" if base == "s" else base
                break
        bases.append(base)
        factor = factor * f if i == 0 else factor / f
    return "/".join(bases), factor


def number(cell: str) -> Optional[float]:
    """A raw page's number ('1,234.5', '93.8'), or None ('n/a', '')."""
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return None


Launch = Dict[str, object]


def read_raw(text: str) -> List[Launch]:
    """The launches of one raw page: per launch 'Kernel Name', 'ID', 'Grid
    Size', 'Block Size' as text and every metric as a float in base units
    (seconds, bytes, hz, ...). Lines outside the table (ncu's ==PROF==
    lines) are skipped; a second header starts a new table."""
    launches: List[Launch] = []
    header: Optional[List[str]] = None
    units: Optional[List[str]] = None
    for row in csv.reader(line for line in text.splitlines() if line.startswith('"')):
        if row and row[0] == "ID" and "Kernel Name" in row:
            header, units = row, None
            continue
        if header is None:
            continue
        if units is None:
            units = row
            continue
        if len(row) != len(header):
            continue
        launch: Launch = {}
        for name, unit, cell in zip(header, units, row):
            if name in ("ID", "Kernel Name", "Grid Size", "Block Size", "Device", "CC", "Process Name", "Host Name"):
                launch[name] = cell
                continue
            v = number(cell)
            if v is not None:
                launch[name] = v * unit_scale(unit)[1]
        launches.append(launch)
    if header is None:
        raise ValueError("not an ncu raw page: no header row with ID and Kernel Name")
    return launches


class Gemmalone:
    """What bench/ncu-gemm.sh's gemmalone output says: the profiled ranges
    in order per shape, the CUDA-event times, the SM count and dtype."""

    def __init__(self) -> None:
        self.profiled: Dict[str, List[Tuple[str, str, int]]] = {}  # shape -> [(impl, config, launches)]
        self.timed: Dict[Tuple[str, str, str], float] = {}  # (shape, impl, config) -> µs
        self.sms, self.dtype = 132, "bf16"

    def read(self, text: str) -> "Gemmalone":
        for line in text.splitlines():
            if m := _PROFILED.match(line):
                self.profiled.setdefault(m.group(1), []).append((m.group(2), m.group(3), int(m.group(4))))
            elif m := _RUN.match(line):
                self.sms, self.dtype = int(m.group(1)), m.group(2)
            elif _SHAPE.match(line) and line.count(",") >= 6:
                cells = line.split(",")
                us = number(cells[5])
                if us is not None and cells[1] in ("cublaslt", "cublaslt-fp8", "fused"):
                    self.timed[(cells[0], cells[1], cells[2])] = us
        return self


class Kernel:
    """One kernel of a shape: the mean of its profiled launches."""

    def __init__(self, label: str, name: str, launches: List[Launch]):
        self.label, self.name, self.n = label, name, len(launches)
        self.grid = str(launches[0].get("Grid Size", ""))
        self.block = str(launches[0].get("Block Size", ""))
        keys = {k for launch in launches for k, v in launch.items() if isinstance(v, float)}
        self.m: Dict[str, float] = {}
        for k in keys:
            vals = [v for launch in launches if isinstance(v := launch.get(k), float)]
            self.m[k] = sum(vals) / len(vals)
        self.timed_us: Optional[float] = None
        self.tile: Optional[str] = None

    def get(self, *names: str) -> Optional[float]:
        for n in names:
            if n in self.m:
                return self.m[n]
        return None

    @property
    def us(self) -> Optional[float]:
        s = self.get("gpu__time_duration.sum")
        return None if s is None else s * 1e6

    @property
    def tensor(self) -> Optional[float]:
        vals = [self.m[n] for n in TENSOR_METRICS if n in self.m]
        return max(vals) if vals else None

    @property
    def active_share(self) -> Optional[float]:
        a, e = self.get("sm__cycles_active.avg"), self.get("sm__cycles_elapsed.avg")
        return a / e if a is not None and e else None

    @property
    def dram_bytes(self) -> Optional[float]:
        r, w = self.get("dram__bytes_read.sum"), self.get("dram__bytes_write.sum")
        if r is not None and w is not None:
            return r + w
        return self.get("dram__bytes.sum")

    @property
    def dram_gbs(self) -> Optional[float]:
        b, s = self.dram_bytes, self.get("gpu__time_duration.sum")
        return b / s / 1e9 if b is not None and s else None

    @property
    def dram_peak_gbs(self) -> float:
        """The card's DRAM peak in GB/s: bus width (bits) / 8 x memory
        clock (the CUDA attribute's kHz) x 2 transfers a clock, as CUDA's
        samples compute it (5,120 bits at 2.619 GHz: 3,352 GB/s, an H100
        SXM); DRAM_PEAK_GBS where the page lacks either attribute."""
        bits = self.get("device__attribute_global_memory_bus_width")
        khz = self.get("device__attribute_memory_clock_rate")
        if not bits or not khz:
            return DRAM_PEAK_GBS
        return bits / 8 * khz * 1e3 * 2 / 1e9

    def stalls(self, top: int = 3) -> List[Tuple[str, float]]:
        for pattern in _STALLS:
            out = [(m.group(1), v) for k, v in self.m.items()
                   if (m := pattern.match(k)) and "not_issued" not in m.group(1) and m.group(1) != "selected"]
            if out:
                return sorted(out, key=lambda kv: -kv[1])[:top]
        return []

    def limit(self) -> str:
        """The rule of the module's docstring."""
        gbs = self.dram_gbs
        dram_pct = self.get("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                            "dram__throughput.avg.pct_of_peak_sustained_elapsed")
        if (gbs is not None and gbs >= MEMORY_PCT / 100 * self.dram_peak_gbs) or \
                (dram_pct is not None and dram_pct >= MEMORY_PCT):
            return "memory"
        tensor, active = self.tensor, self.active_share
        if tensor is not None and tensor >= TENSOR_PCT and (active is None or active >= ACTIVE_SHARE):
            return "tensor"
        if active is not None and active < ACTIVE_SHARE:
            return "tail"
        return "latency"


def kernels_of(shape: str, launches: List[Launch], gl: Gemmalone) -> List[Kernel]:
    """The launches grouped into kernels: ours (hopper_gemm) in the order of
    the '# profiled ... fused' lines, the rest cuBLASLt's (its algorithm
    from the '# profiled ... cublaslt' line); one Kernel per (label, name)."""
    ranges = gl.profiled.get(shape, [])
    tiles = [(c, n) for impl, c, n in ranges if impl == "fused"]
    # cuBLASLt's profiled product: bf16 (or f16), or FP8 under -fp8-ref-only.
    ref, algo = next(((impl, c) for impl, c, _ in ranges if impl != "fused"), ("cublaslt", ""))
    groups: Dict[Tuple[str, str], List[Launch]] = {}
    tile_of: Dict[str, str] = {}
    ours_seen = 0
    for launch in sorted(launches, key=lambda x: int(str(x.get("ID", "0")) or 0)):
        name = str(launch.get("Kernel Name", "?"))
        if OURS in name:
            # The i-th launch of ours is the tile whose range holds it.
            tile, left = "", ours_seen
            for t, n in tiles:
                if left < n:
                    tile = t
                    break
                left -= n
            ours_seen += 1
            label = f"ours `{tile}`" if tile else "ours"
            tile_of[label] = tile
        else:
            label = f"cuBLASLt {algo}".strip()
        groups.setdefault((label, name), []).append(launch)
    out = []
    for (label, name), ls in groups.items():
        k = Kernel(label, name, ls)
        if label.startswith("ours"):
            k.tile = tile_of.get(label) or None
            if k.tile:
                k.timed_us = gl.timed.get((shape, "fused", k.tile))
        elif algo:
            k.timed_us = gl.timed.get((shape, ref, algo))
        out.append(k)
    return out


def tiles_per_sm(shape: Tuple[int, int, int], tile: Optional[str], sms: int) -> Optional[Tuple[int, float]]:
    """Our tile's output tiles (times its K slices) and their share of whole
    waves over sms SMs: 112 tiles on 132 SMs fill 0.85 of one wave."""
    if not tile or not (m := re.match(r"^(\d+)x(\d+)", tile)):
        return None
    bm, bn = int(m.group(1)), int(m.group(2))
    sk = re.search(r":sk(\d+)", tile)
    n = math.ceil(shape[0] / bm) * math.ceil(shape[1] / bn) * (int(sk.group(1)) if sk else 1)
    return n, n / (math.ceil(n / sms) * sms)


def mnk_of(shape: str) -> Tuple[int, int, int]:
    m = _SHAPE.search(shape)
    if not m:
        raise ValueError(f"{shape}: want MxNxK")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def fmt(v: Optional[float], spec: str = ".1f") -> str:
    return "-" if v is None else format(v, spec)


def short(name: str) -> str:
    """A kernel's name without its parameter list."""
    return name.split("(")[0].strip()


def table(shape: str, kernels: List[Kernel], gl: Gemmalone) -> Tuple[List[str], Dict[str, Kernel]]:
    """One shape's Markdown table, and its main kernels: per label the
    longest (a cuBLASLt call's split-K reduction is not its product)."""
    mnk = mnk_of(shape)
    m, n, k = mnk
    flops = 2.0 * m * n * k
    elem = 1 if gl.dtype.startswith("e4m3") else 2
    min_bytes = elem * (m * k + k * n) + 2 * m * n  # A and B once, C (bf16 / f16) once
    peak = PEAK_TFLOPS.get(gl.dtype, 989.4)
    main: Dict[str, Kernel] = {}
    for kern in kernels:
        if kern.us is not None and (kern.label not in main or kern.us > (main[kern.label].us or 0)):
            main[kern.label] = kern
    lines = [f"### {shape} ({gl.dtype})", "",
             "| kernel | µs (timed) | TFLOP/s | of peak | SM GHz | SM % | tensor pipe % | SMs active % | "
             "DRAM GB/s (of peak) | DRAM bytes / min | L2 hit % | occupancy % | regs, smem KiB | "
             "grid x block (tiles, of wave) | top stalls | limit |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for kern in kernels:
        us = kern.us
        is_main = main.get(kern.label) is kern
        tflops = flops / (us * 1e-6) / 1e12 if us and is_main else None
        gbs = kern.dram_gbs
        clock = kern.get("sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second",
                         "gpc__cycles_elapsed.avg.per_second")
        smem = sum(kern.get(f"launch__shared_mem_per_block_{x}") or 0 for x in ("dynamic", "static"))
        regs = kern.get("launch__registers_per_thread")
        tiles = tiles_per_sm(mnk, kern.tile, gl.sms)
        grid = kern.grid.replace(" ", "") + " x " + kern.block.replace(" ", "")
        if tiles:
            grid += f" ({tiles[0]}, {tiles[1]:.2f})"
        active = kern.active_share
        db = kern.dram_bytes
        stalls = ", ".join(f"{r} {v:.1f}" for r, v in kern.stalls())
        label = kern.label if kern.label.startswith("ours") else f"{kern.label} `{short(kern.name)}`"
        if not is_main:
            label += " (+)"
        lines.append(
            f"| {label} | {fmt(us)} ({fmt(kern.timed_us) if is_main else '-'}) | {fmt(tflops, '.0f')} | "
            f"{fmt(None if tflops is None else 100 * tflops / peak, '.0f')}% | "
            f"{fmt(None if clock is None else clock / 1e9, '.2f')} | "
            f"{fmt(kern.get('sm__throughput.avg.pct_of_peak_sustained_elapsed'))} | {fmt(kern.tensor)} | "
            f"{fmt(None if active is None else 100 * active)} | "
            f"{fmt(gbs, '.0f')} ({fmt(None if gbs is None else 100 * gbs / kern.dram_peak_gbs, '.0f')}%) | "
            f"{fmt(None if db is None else db / min_bytes, '.2f')} | {fmt(kern.get('lts__t_sector_hit_rate.pct'))} | "
            f"{fmt(kern.get('sm__warps_active.avg.pct_of_peak_sustained_active'))} | "
            f"{fmt(regs, '.0f')}, {fmt(smem / 1024 if smem else None, '.0f')} | {grid} | {stalls or '-'} | "
            f"{kern.limit() if is_main else '-'} |")
    lines.append("")
    return lines, main


def summary_rows(shape: str, main: Dict[str, Kernel], gl: Gemmalone) -> List[str]:
    """One summary row per tile of ours profiled at the shape (one row with
    "-" where none was), each against cuBLASLt's kernel."""
    ours: List[Optional[Kernel]] = [v for lbl, v in main.items() if lbl.startswith("ours")]
    return [summary_row(shape, o, main, gl) for o in ours or [None]]


def summary_row(shape: str, ours: Optional[Kernel], main: Dict[str, Kernel], gl: Gemmalone) -> str:
    m, n, k = mnk_of(shape)
    peak = PEAK_TFLOPS.get(gl.dtype, 989.4)
    lt = next((v for lbl, v in main.items() if lbl.startswith("cuBLASLt")), None)

    def perf(kern: Optional[Kernel]) -> str:
        if kern is None or not kern.us:
            return "- | -"
        t = 2.0 * m * n * k / (kern.us * 1e-6) / 1e12
        return f"{t:.0f} ({100 * t / peak:.0f}%) | {kern.limit()}"

    def pair(f: str) -> str:
        vals = []
        for kern in (ours, lt):
            v = getattr(kern, f) if kern is not None else None
            vals.append(fmt(None if v is None else (100 * v if f == "active_share" else v)))
        return " / ".join(vals)
    ratio = fmt(lt.us / ours.us, ".3f") if ours and lt and ours.us and lt.us else "-"
    tile = f"`{ours.tile}`" if ours and ours.tile else "-"
    return (f"| {shape} | {tile} | {ratio} | {perf(ours)} | {perf(lt)} | {pair('tensor')} | {pair('active_share')} | "
            f"{cycles_and_clock(ours, lt)} |")


def cycles_and_clock(ours: Optional[Kernel], lt: Optional[Kernel]) -> str:
    """The ratio (cuBLASLt's time over ours) as the product of two factors:
    cuBLASLt's elapsed SM cycles over ours (the work and waits of each
    cycle) times our SM clock over cuBLASLt's (at the power cap a kernel
    that draws more power a cycle gets a lower clock). "-" where either
    kernel lacks the cycles or the clock."""
    def cc(k: Optional[Kernel]) -> Optional[Tuple[float, float]]:
        if k is None:
            return None
        cyc = k.get("sm__cycles_elapsed.avg")
        clk = k.get("sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second",
                    "gpc__cycles_elapsed.avg.per_second")
        return (cyc, clk) if cyc and clk else None
    o, c = cc(ours), cc(lt)
    if o is None or c is None:
        return "-"
    return f"{c[0] / o[0]:.3f} × {o[1] / c[1]:.3f}"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gemmalone", action="append", default=[], help="gemmalone's output (with -profile)")
    ap.add_argument("raw", nargs="+", help="ncu raw pages, one a shape, named ...MxNxK.csv")
    args = ap.parse_args(argv)
    gl = Gemmalone()
    for p in args.gemmalone:
        with open(p, errors="replace") as f:
            gl.read(f.read())
    out = [f"## What limits each kernel: ncu, {gl.dtype}, {gl.sms} SMs", "",
           f"Peak {PEAK_TFLOPS.get(gl.dtype, 989.4)} TFLOP/s (dense, at 1.83 GHz), "
           "DRAM {dram}. "
           "µs: ncu's duration, the mean of the profiled launches (each replayed per metric pass, caches flushed); "
           "(timed): gemmalone's CUDA-event median outside the profiled range. "
           "Ratio: cuBLASLt µs / ours (above 1: ours faster). "
           "Limit: memory (DRAM >= 70% of peak), else tensor (tensor pipe >= 85% of active cycles, SMs active >= 90%), "
           "else tail (SMs active < 90% of elapsed cycles), else latency (bench/ncu_table.py). "
           "(+): a kernel of the same call beside its product. "
           "Cycles × clock: the ratio as cuBLASLt's SM cycles over ours times our SM clock over cuBLASLt's "
           "(clocks left free: at the power cap a kernel drawing more power a cycle runs slower).", "",
           "| shape | our tile | ratio (ncu) | ours TFLOP/s (of peak) | limit | cuBLASLt TFLOP/s (of peak) | limit | "
           "tensor pipe % ours / cuBLASLt | SMs active % ours / cuBLASLt | ratio: cycles × clock |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    body: List[str] = []
    peaks: set = set()
    bad = 0
    for path in args.raw:
        shape_m = _SHAPE.search(path.rsplit("/", 1)[-1])
        if not shape_m:
            print(f"{path}: no MxNxK in the file name", file=sys.stderr)
            bad += 1
            continue
        shape = shape_m.group(0)
        try:
            with open(path, errors="replace") as f:
                launches = read_raw(f.read())
        except (OSError, ValueError) as e:
            print(f"{path}: {e}", file=sys.stderr)
            bad += 1
            continue
        kernels = kernels_of(shape, launches, gl)
        peaks.update(f"{k.dram_peak_gbs / 1000:.2f} TB/s" for k in kernels)
        lines, mains = table(shape, kernels, gl)
        out += summary_rows(shape, mains, gl)
        body += lines
    out[2] = out[2].replace("{dram}", " and ".join(sorted(peaks)) or f"{DRAM_PEAK_GBS / 1000:.2f} TB/s")
    print("\n".join(out + [""] + body))
    return 1 if bad and not body else 0


if __name__ == "__main__":
    sys.exit(main())
