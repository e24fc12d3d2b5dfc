"""The GPU GEMM plugins (agmm, matmulrs) as symmtune.torch runs them, without
importing torch: their search space and config rules, the chunk plans that
order copies, products and reductions, the symmetric layout, the default
config and the kernel version.

The plans are kernels/gemm/gpu/plan.go's, ported line for line (the Go test
TestPlanParity holds every plan of a table, the space, the config rules and
the kernel version equal to this module's answers); the space's fused impls
are one per tile of kernels/gemm/hopper/searched.json (symmtune.hopper); the
default config is read from kernels/gemm/gpu/defaults.json, which a Go test
holds equal to the plugin's Default; the kernel version is the plugin's
KernelVersion (sdk.SourceHash of the kernel name, the Hopper GEMM's source
and the files version.go's //go:embed line names, read from the same files
through python/symmtune/_kernels).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from . import hopper
from .cache import NoTunedConfig, lookup, shape_string
from .kernels import Choice, source_hash

AGMM, MATMULRS = "agmm", "matmulrs"
KERNELS = (AGMM, MATMULRS)

MAX_WORLD = 8
MAX_CHUNKS = 8
MAX_STREAMS = 3
# fusedplan.go's maxRSChunks: the fused reduce-scatter's chunk table.
MAX_RS_CHUNKS = 64

# space.go's impls: the cuBLASLt pipeline, or the persistent Hopper GEMM
# with a tile ("fused:" + a tile name of hopper.searched()).
IMPL_PIPELINE, IMPL_FUSED = "pipeline", "fused"

# layout.go: [flag words, FLAG_STRIDE bytes apart][payload from PAYLOAD_OFFSET]
FLAG_STRIDE = 64
_FLAG_COUNT = MAX_WORLD * MAX_CHUNKS + 2 * MAX_WORLD
PAYLOAD_OFFSET = (_FLAG_COUNT * FLAG_STRIDE + 4095) // 4096 * 4096

# Threads per block of the SM copy and the reduction (agmm_cuda.go's
# copyThreads, matmulrs_cuda.go's reduceThreads).
COPY_THREADS = 512
REDUCE_THREADS = 256

_GPU = Path(__file__).resolve().parent / "_kernels" / "gemm"


def partial_flag(src: int, chunk: int) -> int:
    """agmm push: chunk c of src's shard is here; matmulrs: src's partial of chunk c of my rows is in slot src."""
    return src * MAX_CHUNKS + chunk


def ready_flag(src: int) -> int:
    """agmm pull: src's shard is in place and may be read."""
    return MAX_WORLD * MAX_CHUNKS + src


def start_flag(src: int) -> int:
    """src's call has reached its fused GEMM (layout.go's StartFlag)."""
    return MAX_WORLD * MAX_CHUNKS + MAX_WORLD + src


# space.go's Space: the values each parameter takes.
_COMMON = {"impl": (IMPL_PIPELINE, *(f"{IMPL_FUSED}:{t}" for t in hopper.searched())), "chunks": (1, 2, 4, MAX_CHUNKS), "streams": (1, 2, 3), "algo": (0, 1, 2, 3),
           "sm_reserve": (0, 8, 16, 32), "batch": (0, 1), "graph": (0, 1)}
SPACE = {
    AGMM: {**_COMMON, "copy": ("ce", "sm"), "copy_blocks": (4, 8, 16, 32), "direction": ("pull", "push")},
    MATMULRS: {**_COMMON, "push": ("ce", "gemm"), "reduce_blocks": (16, 32, 64, 132, 264),
               "reduce": ("kernel", "epilogue")},
}
# space.go's addedLater: parameters added after configs were first cached,
# with the value a config without them ran with.
_ADDED_LATER = {"reduce": "kernel"}


@dataclass(frozen=True)
class Problem:
    """A GEMM on a team: M rows in all (agmm: of the gathered A and of C;
    matmulrs: of each rank's A and partial product), split evenly over
    world ranks; B is [k, n]."""
    m: int
    n: int
    k: int
    world: int

    @property
    def rows(self) -> int:
        return self.m // self.world


def check_problem(kernel: str, p: Problem) -> None:
    """ParseProblem's rules: ValueError with the reason."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown GPU GEMM kernel {kernel!r}")
    if not 1 <= p.world <= MAX_WORLD:
        raise ValueError(f"world {p.world} outside 1..{MAX_WORLD}")
    for name in ("m", "n", "k"):
        if getattr(p, name) < 1:
            raise ValueError(f"{name}={getattr(p, name)}: want a positive size")
    if p.m % p.world:
        raise ValueError(f"m={p.m} is not divisible by world {p.world}: every rank holds the same number of rows")


def slot_elems(p: Problem) -> int:
    """matmulrs: distance between slots in elements, rounded up to 16 bytes."""
    return (p.rows * p.n + 7) // 8 * 8


def symmetric_bytes(kernel: str, p: Problem, elem: int = 2) -> int:
    """The symmetric region kernel needs per rank (layout.go's SymmetricBytes)."""
    if kernel == AGMM:
        return PAYLOAD_OFFSET + p.m * p.k * elem
    return PAYLOAD_OFFSET + p.world * slot_elems(p) * elem


@dataclass(frozen=True)
class Span:
    """Rows [start, start+rows) of the M global rows: chunk index of owner's rows."""
    owner: int
    index: int
    start: int
    rows: int


@dataclass(frozen=True)
class Step:
    """One product on product stream `stream`: span, and when batch > 1 the
    same chunk of the next batch-1 ranks (their rows lie M/W apart)."""
    span: Span
    batch: int
    stream: int

    def spans(self, rows: int) -> list[Span]:
        s = self.span
        return [Span(s.owner + i, s.index, s.start + i * rows, s.rows) for i in range(self.batch)]


def shards(m: int, world: int, chunks: int) -> list[list[Span]]:
    """Each rank's m/world rows cut into chunks balanced spans: [owner][index]."""
    rows = m // world
    return [[Span(q, c, q * rows + rows * c // chunks, rows * (c + 1) // chunks - rows * c // chunks)
             for c in range(chunks)] for q in range(world)]


def _runs(ranks: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for i, q in enumerate(ranks):
        if i > 0 and q == ranks[i - 1] + 1:
            out[-1].append(q)
        else:
            out.append([q])
    return out


def _steps(dst: list[Step], sh: list[list[Span]], ranks: list[int], c: int, batch: bool, streams: int) -> None:
    for g in (_runs(ranks) if batch else [[q] for q in ranks]):
        dst.append(Step(sh[g[0]][c], len(g), len(dst) % streams))


def peers(rank: int, world: int) -> list[int]:
    """The other ranks in the order rank talks to them: the next rank first."""
    return [(rank + s) % world for s in range(1, world)]


@dataclass(frozen=True)
class PlanOptions:
    m: int
    world: int
    rank: int
    chunks: int
    streams: int
    batch: bool = False


@dataclass(frozen=True)
class AGPlan:
    peers: list[int]
    pulls: list[list[Span]]  # pulls[i]: the chunks pulled from peers[i], in order
    own: list[Span]          # the rank's own chunks (what it pushes to every peer)
    products: list[Step]


def plan_ag(o: PlanOptions) -> AGPlan:
    """plan.go's PlanAG: the own shard first, then chunk by chunk in arrival order."""
    sh = shards(o.m, o.world, o.chunks)
    rows = o.m // o.world
    pe = peers(o.rank, o.world)
    products = [Step(Span(o.rank, -1, o.rank * rows, rows), 1, 0)]
    for c in range(o.chunks):
        _steps(products, sh, pe, c, o.batch, o.streams)
    return AGPlan(pe, [sh[q] for q in pe], sh[o.rank], products)


@dataclass(frozen=True)
class RSPlan:
    products: list[Step]
    reduces: list[Span]  # the rank's own chunks


def plan_rs(o: PlanOptions) -> RSPlan:
    """plan.go's PlanRS: by owner (the next rank first, the own rows last),
    or batched chunk by chunk."""
    sh = shards(o.m, o.world, o.chunks)
    pe = peers(o.rank, o.world)
    products: list[Step] = []
    if o.batch:
        for c in range(o.chunks):
            _steps(products, sh, pe, c, True, o.streams)
            _steps(products, sh, [o.rank], c, False, o.streams)
    else:
        for q in pe + [o.rank]:
            for c in range(len(sh[q])):
                _steps(products, sh, [q], c, False, o.streams)
    return RSPlan(products, sh[o.rank])


def max_products(kernel: str, o: PlanOptions) -> int:
    n = 0
    for r in range(o.world):
        ro = PlanOptions(o.m, o.world, r, o.chunks, o.streams, o.batch)
        n = max(n, len((plan_ag(ro) if kernel == AGMM else plan_rs(ro)).products))
    return n


@dataclass(frozen=True)
class Config:
    """A parsed config of either kernel (fields of the other kernel unset);
    impl is IMPL_PIPELINE or IMPL_FUSED, with the fused GEMM's tile."""
    kernel: str
    chunks: int
    streams: int
    batch: bool
    impl: str = IMPL_PIPELINE
    tile: hopper.Tile | None = None
    algo: int = 0
    sm_reserve: int = 0
    graph: bool = False
    copy: str = ""
    copy_blocks: int = 0
    direction: str = ""
    push: str = ""
    reduce_blocks: int = 0
    reduce: str = ""

    def plan(self, p: Problem, rank: int) -> PlanOptions:
        return PlanOptions(p.m, p.world, rank, self.chunks, self.streams, self.batch)


def parse_config(kernel: str, c: dict) -> Config:
    """ParseConfig: every parameter of kernel's space present with one of its values."""
    if kernel not in SPACE:
        raise ValueError(f"unknown GPU GEMM kernel {kernel!r}")
    errs = []
    c = {**{k: v for k, v in _ADDED_LATER.items() if k in SPACE[kernel]}, **c}
    for name, values in SPACE[kernel].items():
        if name not in c:
            errs.append(f"parameter {name!r} missing")
        elif c[name] not in values or isinstance(c[name], bool):
            errs.append(f"parameter {name!r}: {c[name]!r} is not one of {list(values)}")
    errs += [f"unknown parameter {name!r}" for name in c if name not in SPACE[kernel]]
    tile = None
    if not errs and c["impl"].startswith(IMPL_FUSED + ":"):
        try:
            tile = hopper.parse_tile(c["impl"][len(IMPL_FUSED) + 1:])
        except ValueError as e:
            errs.append(str(e))
    if errs:
        raise ValueError(f"config {c}: " + "; ".join(errs))
    kw = {k: v for k, v in c.items() if k != "impl"}
    kw["batch"], kw["graph"] = c["batch"] == 1, c["graph"] == 1
    return Config(kernel=kernel, impl=IMPL_FUSED if tile else c["impl"], tile=tile, **kw)


def validate(c: Config, p: Problem) -> None:
    """space.go's Validate: ValueError with the reason a config cannot run on p."""
    if c.impl == IMPL_FUSED:
        _validate_fused(c, p)
    if c.chunks > p.rows:
        raise ValueError(f"chunks {c.chunks} exceed the {p.rows} rows each rank holds")
    if c.impl == IMPL_PIPELINE:
        n = max_products(c.kernel, c.plan(p, 0))
        if c.streams > n:
            raise ValueError(f"streams {c.streams} exceed the {n} products of the pipeline")
    if c.kernel == AGMM:
        if c.copy == "ce":
            if c.copy_blocks != SPACE[AGMM]["copy_blocks"][0]:
                raise ValueError(f"copy_blocks {c.copy_blocks}: copy-engine copies use no blocks "
                                 f"(only copy_blocks={SPACE[AGMM]['copy_blocks'][0]} is measured)")
            if c.sm_reserve != 0:
                raise ValueError(f"sm_reserve {c.sm_reserve}: nothing runs on SMs beside the products when copy "
                                 "engines move the data")
        if c.batch and p.world <= 2:
            raise ValueError("batch 1 with one peer: every batch holds one product, the same schedule as batch 0")
        if c.copy == "sm" and p.k * 2 % 16:
            raise ValueError(f"k={p.k}: SM copies move 16-byte vectors, so a row of A must be a multiple of 16 "
                             "bytes (k a multiple of 8)")
    else:
        if c.batch and c.push == "gemm":
            raise ValueError("batch 1 with push=gemm: a batched product writes one buffer, but each owner's slot is "
                             "in another")
        # Batching takes runs of two or more peers; with one peer it only
        # orders the products chunk by chunk, as batch 0 does with one chunk.
        if c.batch and p.world <= 2 and c.chunks == 1:
            raise ValueError("batch 1 with at most one peer and one chunk: the same products in the same order as "
                             "batch 0")
        if c.reduce == "epilogue" and c.impl != IMPL_FUSED:
            raise ValueError("reduce=epilogue: only the fused GEMM (impl=fused) has an epilogue to reduce in")
    if p.world == 1 and c.chunks > 1:
        raise ValueError(f"chunks {c.chunks} on one rank: there is no communication to overlap")


def _validate_fused(c: Config, p: Problem) -> None:
    """space.go's validateFused: fused configs that cannot run, or that
    would repeat another's measurement (a pipeline parameter they do not
    use differs from its default)."""
    try:
        c.tile.check(hopper.SMEM_LIMIT)
    except ValueError as e:
        raise ValueError(f"impl=fused: {e}") from None
    hopper.check_shape(p.n, p.k)
    d = parse_config(c.kernel, default_config(c.kernel))
    if (c.streams, c.algo, c.batch) != (d.streams, d.algo, d.batch):
        raise ValueError("impl=fused is one persistent kernel: streams, algo and batch belong to the cuBLASLt "
                         "pipeline (only their defaults are measured)")
    if c.kernel == AGMM:
        if c.copy != "ce":
            raise ValueError(f"impl=fused moves chunks with the copy engines only (copy={c.copy} would need SMs the "
                             "persistent GEMM holds)")
        if (c.sm_reserve, c.copy_blocks) != (d.sm_reserve, d.copy_blocks):
            raise ValueError("impl=fused agmm uses no SMs beside the GEMM: sm_reserve and copy_blocks are for SM "
                             "copies (only their defaults are measured)")
    else:
        if c.chunks * p.world > MAX_RS_CHUNKS:
            raise ValueError(f"impl=fused: {c.chunks} chunks on {p.world} ranks exceed the kernel's {MAX_RS_CHUNKS}")
        if c.reduce == "epilogue":
            if (c.reduce_blocks, c.sm_reserve) != (d.reduce_blocks, d.sm_reserve):
                raise ValueError("reduce=epilogue runs no reduction kernel: reduce_blocks and sm_reserve are for one "
                                 "(only their defaults are measured)")
            if p.rows % c.tile.rows_per_tile:
                raise ValueError(f"reduce=epilogue: the {p.rows} rows each rank owns are not a multiple of the tile's "
                                 f"{c.tile.rows_per_tile}, and a tile holding two ranks' rows would wait on a peer "
                                 "that waits on it")
            # A CTA must store all its peers' tiles before it waits on an own
            # one (space.go says why): the peers' tile rows fill whole
            # swizzle groups.
            peer = (p.world - 1) * p.rows // c.tile.rows_per_tile
            if peer % c.tile.group_m:
                raise ValueError(f"reduce=epilogue: the peers' {peer} tile rows do not fill whole swizzle groups of "
                                 f"{c.tile.group_m} (group_m), so a CTA would wait on an own tile before storing a "
                                 "peer's, and ranks could wait on each other")


def shard_in_place(c: Config, p: Problem, rank: int) -> bool:
    """Whether an all-gather + matmul of config c reads rank's own shard
    where the caller holds it, with no copy into the workspace first:
    pushing (no peer reads the shard from the workspace), and for the fused
    GEMM, whose tiles read the own rows through a map of their own, only
    where no tile holds both own and peer rows."""
    if c.direction != "push":
        return False
    if c.impl != IMPL_FUSED:
        return True
    lo, hi, bm = rank * p.rows, (rank + 1) * p.rows, c.tile.bm
    return lo % bm == 0 and (hi % bm == 0 or hi == p.m)


def default_config(kernel: str) -> dict:
    """The plugin's Default (kernels/gemm/gpu/defaults.json)."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown GPU GEMM kernel {kernel!r}")
    return dict(json.loads((_GPU / "defaults.json").read_text())[kernel])


def fit_default(kernel: str, p: Problem) -> dict:
    """The default config made to run on p: Default as is where Validate
    takes it; with fewer chunks (the largest of the space's values that
    Validate accepts) where a rank holds fewer rows than Default's chunks,
    or there is one rank."""
    c = default_config(kernel)
    for chunks in sorted((v for v in SPACE[kernel]["chunks"] if v <= c["chunks"]), reverse=True):
        c["chunks"] = chunks
        try:
            validate(parse_config(kernel, c), p)
            return c
        except ValueError:
            continue
    validate(parse_config(kernel, c), p)  # raises with the reason
    return c


def embedded_files() -> list[str]:
    """The files the plugin's //go:embed line names (version.go), in
    fs.WalkDir's lexical order: what its KernelVersion hashes."""
    text = (_GPU / "version.go").read_text()
    m = re.search(r"^//go:embed (.+)$", text, re.M)
    if m is None:
        raise RuntimeError(f"{_GPU / 'version.go'}: no //go:embed line")
    return sorted(m.group(1).split(), key=lambda path: path.split("/"))


def kernel_version(kernel: str) -> str:
    """The plugin's KernelVersion: sdk.SourceHash(name, hopper.Source,
    every embedded file)."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown GPU GEMM kernel {kernel!r}")
    return source_hash(kernel.encode(), hopper.source(), *[(_GPU / f).read_bytes() for f in embedded_files()])


def util_source() -> str:
    """kernels/gemm/gpu/kernels/gemm_util.cu: the pipelines' helper kernels
    (the SM copy, the reduce-scatter's fp32 reduction)."""
    return (_GPU / "kernels" / "gemm_util.cu").read_text()


_warned: set[tuple] = set()


def _warn_once(key: tuple, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, stacklevel=5)


def choose(kernel: str, p: Problem, dtype: str, cache: str | os.PathLike | None = None,
           hardware=None) -> Choice:
    """The config kernel runs on p: the cache's answer for this machine if
    it was tuned for the plugin's current sources and runs on p, else the
    plugin's default (fitted to p: fit_default), with a warning (once per
    kernel, problem and dtype) saying how to tune. Errors of the cache
    (corrupt, unreadable) and of the fingerprint propagate. hardware: as
    symmtune.lookup's (None: this machine)."""
    check_problem(kernel, p)
    if dtype not in ("bf16", "f16"):
        raise ValueError(f"dtype {dtype!r}: the GPU GEMM kernels take bf16 or f16 (fp32 accumulation)")
    shape = f"m={p.m},n={p.n},k={p.k}"
    how = f"tune it with: symmtune search --backend cuda --kernel {kernel} --world {p.world} --shape {shape} --dtype {dtype}"
    key = (kernel, p, dtype)
    version = kernel_version(kernel)
    try:
        m = lookup(kernel, p.world, dtype, {"m": p.m, "n": p.n, "k": p.k}, backend="cuda", cache=cache,
                   kernel_version=version, hardware=hardware)
    except NoTunedConfig:
        _warn_once(key, f"symmtune: no tuned {kernel} for {p.world} ranks, {dtype}, {shape} (for these kernel "
                        f"sources, version {version}); running the default config; {how}")
        return Choice(fit_default(kernel, p), "default")
    cfg = dict(m.entry.config)
    try:
        validate(parse_config(kernel, cfg), p)
    except ValueError as e:
        _warn_once(key, f"symmtune: the {kernel} config tuned for {shape_string(m.entry.shape)} does not run on "
                        f"{shape} ({e}); running the default config; {how}")
        return Choice(fit_default(kernel, p), "default")
    source = "other-driver" if m.other_driver else ("tuned" if m.exact else "nearest")
    return Choice(cfg, source, m.entry.median_us)


def choose_runnable(kernel: str, p: Problem, dtype: str, cache: str | os.PathLike | None = None,
                    hardware=None, no_fused: str | None = None) -> Choice:
    """choose(), for a runtime that may not run impl=fused here: when
    no_fused says why (e.g. the GPU is not sm_90), a chosen fused config is
    replaced by the default (fitted to p), with a warning, once per config,
    that names it and the reason."""
    c = choose(kernel, p, dtype, cache, hardware)
    impl = c.config.get("impl", IMPL_PIPELINE)
    if impl == IMPL_PIPELINE or no_fused is None:
        return c
    named = ",".join(f"{k}={v}" for k, v in sorted(c.config.items()))
    _warn_once(("fused", kernel, named),
               f"symmtune: the {c.source} {kernel} config for {p.world} ranks, {dtype}, m={p.m},n={p.n},k={p.k} is "
               f"impl={impl} ({named}); {no_fused}, so symmtune.torch runs the default pipeline config")
    return Choice(fit_default(kernel, p), "default")
