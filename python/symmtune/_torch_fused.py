"""symmtune.torch's impl=fused: the persistent Hopper GEMM
(kernels/gemm/hopper/hopper_gemm.cu, compiled from that file with NVRTC)
run from PyTorch as the Go plugins run it (kernels/gemm/gpu: fused_cuda.go,
fusedrun_cuda.go and the fused branches of agmm_cuda.go and
matmulrs_cuda.go).

all-gather + matmul: the pipeline's copy-engine copies move the shards;
each chunk that lands is flagged in this rank's region, and the GEMM's
producer waits for the flags of a tile's rows before loading them, tiles
walked own shard first (symmtune.fusedplan.plan_fused_ag).
matmul + reduce-scatter: the GEMM's epilogue stores each row into its
owner's slot (push=gemm) or stages peers' rows locally for a copy engine to
push (push=ce), and flags each finished chunk; the reductions of the
pipeline wait for every rank's flag of an own chunk.

A wait for a chunk is bounded (2 s, as in the plugin): past it the kernel
sets a status word instead of holding the GPU. The bound counts from when
every peer's call has reached its GEMM (the kernel's start gate, which
_torch_gemm's signal_start opens on the peers), so a peer whose host comes
late is waited for. The word is mapped host
memory, read by every call before it starts, without a sync: the call after
a timed-out one raises, and the group's fused GEMMs stay unusable in this
process (a peer that stops delivering leaves the group's flags in an
unknown state), so no later call returns a wrong result.
"""

from __future__ import annotations

import struct

import torch

from . import _cuda, _sm90, fusedplan, gemm, hopper

TIMEOUT_NS = 2_000_000_000  # fusedrun_cuda.go's fusedTimeoutNs


class FusedError(RuntimeError):
    """A fused GEMM waited past its bound for a chunk (a copy never
    completed): its output was wrong."""


class FusedGEMM:
    """One compiled tile of the Hopper GEMM on a device (FusedGEMM of
    fused_cuda.go)."""

    def __init__(self, tile: hopper.Tile, bf16: bool, device: torch.device, epilogue: bool = False) -> None:
        cc = torch.cuda.get_device_capability(device)
        if cc[0] != 9:
            raise RuntimeError(f"impl=fused needs an sm_90 GPU (wgmma, TMA); this one is sm_{cc[0]}{cc[1]}")
        tile.check(hopper.SMEM_LIMIT)
        self.tile, self.bf16 = tile, bf16
        opts = tile.options(bf16) + ([hopper.EPILOGUE_OPTION] if epilogue else [])
        m = _cuda.module(hopper.source().decode(), "hopper_gemm.cu", opts, device.index, cc)
        self.fn = m.function(hopper.ENTRY)
        self.smem = tile.smem_bytes()
        _sm90.set_dynamic_smem(self.fn, self.smem)
        self.sms = torch.cuda.get_device_properties(device).multi_processor_count
        self.clusters = 0
        if tile.cluster_m > 1:
            # Not every SM pairs up within its GPC: the grid is what fits.
            self.clusters = _sm90.max_active_clusters(self.fn, tile.cluster_m, tile.threads, self.smem)
            if self.clusters < 1:
                raise RuntimeError(f"hopper_gemm {tile}: no cluster of {tile.cluster_m} CTAs fits")

    def grid(self, m: int, n: int, sms: int) -> int:
        """FusedGEMM.Grid: the persistent grid for an m x n product."""
        cm = self.tile.cluster_m
        grid = min(sms // cm, self.tile.tiles(m, n))
        if cm > 1:
            grid = min(grid, self.clusters)
        return grid * cm

    def encode_a(self, into: _sm90.TensorMap | None, a: int, m: int, k: int) -> _sm90.TensorMap:
        """A [m, k] row-major at a (FusedGEMM.Maps), or m of its rows held
        apart (FusedGEMM.WithOwnRows)."""
        return _sm90.encode_2d(self._dtype, a, m, k, k * 2, self.tile.bm, hopper.BK, into=into)

    def encode_b(self, into: _sm90.TensorMap | None, b: int, n: int, k: int) -> _sm90.TensorMap:
        """B at b: [n, k] when the tile is K-major, else [k, n]."""
        t = self.tile
        if t.bk_major:
            # With clusters each CTA loads its share of the B tile's rows.
            return _sm90.encode_2d(self._dtype, b, n, k, k * 2, t.bn // t.cluster_m, hopper.BK, into=into)
        return _sm90.encode_2d(self._dtype, b, k, n, n * 2, hopper.BK, 64, into=into)

    def encode_c(self, into: _sm90.TensorMap | None, c: int, m: int, n: int) -> _sm90.TensorMap:
        """C [m, n] row-major at c, stored by the epilogue's TMA in 16 x 16
        boxes of its 32-byte swizzled staging buffers (FusedGEMM.Launch)."""
        return _sm90.encode_2d(self._dtype, c, m, n, n * 2, 16, 16, _sm90.SWIZZLE_32B, into=into)

    @property
    def _dtype(self) -> int:
        return _sm90.BFLOAT16 if self.bf16 else _sm90.FLOAT16


_compiled: dict[tuple, FusedGEMM] = {}


def fused_gemm(tile: hopper.Tile, bf16: bool, device: torch.device, epilogue: bool = False) -> FusedGEMM:
    """The compiled tile for device (with the reduce-scatter's epilogue
    reduction or without), once per process."""
    key = (tile, bf16, device.index, epilogue)
    g = _compiled.get(key)
    if g is None:
        g = _compiled[key] = FusedGEMM(tile, bf16, device, epilogue)
    return g


class Call:
    """One problem's launch of a FusedGEMM, prepared once: the tensor maps
    (re-encoded in place when an operand moves), the device tables and the
    kernel's arguments, of which only C's address and the maps change
    between calls."""

    def __init__(self, g: FusedGEMM, m: int, n: int, k: int, sms: int, *, order: tuple[int, ...],
                 table: list[int] | None = None, flags: int = 0, rs: bytes | None = None, rows_per_rank: int = 0,
                 own_rows: tuple[int, int] = (0, 0), start: tuple[int, int] = (0, 0), status: Status,
                 timeout_ns: int = TIMEOUT_NS) -> None:
        hopper.check_shape(n, k)
        self.g, self.m, self.n, self.k = g, m, n, k
        # own_rows (lo, rows): A's rows [lo, lo + rows) are read from a
        # tensor of their own, given to set() as a_own (rows 0: none).
        # start (flag, mask): the kernel's start gate (hopper_comm.cuh's
        # Wait; mask 0: none).
        self.own_rows = own_rows
        self.map_a, self.map_b, self.map_a_own = _sm90.TensorMap(), _sm90.TensorMap(), _sm90.TensorMap()
        self.map_c = _sm90.TensorMap()  # a plain product's C (FusedGEMM.Launch); a reduce-scatter leaves it unread
        self._a = self._b = self._a_own = -1
        self.order = _device_bytes(struct.pack(f"<{len(order)}I", *order))
        self.table = _device_bytes(struct.pack(f"<{len(table)}I", *table)) if table else None
        self.rs = _device_bytes(rs) if rs else None
        p = _sm90.Params().map(self.map_a).map(self.map_b).map(self.map_a_own).map(self.map_c)
        self._c = p.u64(0).last()
        p.i32(m).i32(n).i32(k)
        p.u64(self.order.data_ptr()).u64(self.table.data_ptr() if self.table else 0).i32(len(table) // 2 if table else 0)
        p.u64(flags).u64(status.word.device_ptr).u64(timeout_ns)
        p.u64(self.rs.data_ptr() if self.rs else 0).i32(rows_per_rank).i32(own_rows[0]).i32(own_rows[1])
        p.u64(start[0]).i32(start[1])
        self.gated = start[1] != 0
        self.launch = _sm90.Launcher(g.fn, g.grid(m, n, sms), g.tile.threads, g.smem, p)

    def set(self, a: int, b: int, c: int = 0, a_own: int = 0) -> bool:
        """Points the launch at A, B and C (a reduce-scatter's table says
        where rows go; C is its own rows' sum with reduce=epilogue, else
        unused) and at A's own rows (a_own, with own_rows set; else no tile
        reads that map); True when anything changed."""
        changed = False
        if a != self._a:
            self.g.encode_a(self.map_a, a, self.m, self.k)
            self._a, changed = a, True
        lo, rows = self.own_rows
        if rows and a_own != self._a_own:
            self.g.encode_a(self.map_a_own, a_own, rows, self.k)
            self._a_own, changed = a_own, True

        if b != self._b:
            self.g.encode_b(self.map_b, b, self.n, self.k)
            self._b, changed = b, True
        if c != self._c.value:
            if self.rs is None:
                self.g.encode_c(self.map_c, c, self.m, self.n)
            self._c.value, changed = c, True
        return changed

    def __call__(self, stream: int, a: int, b: int, c: int = 0) -> None:
        """Enqueues C = A * B on stream."""
        self.set(a, b, c)
        self.launch(stream)


def _device_bytes(b: bytes) -> _cuda.Buffer:
    return _cuda.Buffer(len(b), b)


class Status:
    """The timeout word of a group's fused GEMMs on this device, in mapped
    host memory: the kernel stores 1 there when a wait times out, and each
    call looks at it (no copy, no sync) before it starts."""

    def __init__(self) -> None:
        self.word = _cuda.HostWord()

    def check(self, what: str) -> None:
        """Raises FusedError when an earlier call's wait timed out."""
        if self.word.value:
            raise FusedError(f"symmtune.torch: a fused {what} waited over {TIMEOUT_NS // 10**9} s for a peer's "
                             "chunk (a copy never completed); that call's output was wrong, and fused GEMMs of "
                             "this group cannot run again in this process")


_statuses: dict[tuple[str, int], Status] = {}


def status(group_name: str, device: torch.device) -> Status:
    """The group's timeout word on device, made once."""
    key = (group_name, device.index)
    if key not in _statuses:
        _statuses[key] = Status()
    return _statuses[key]


def b_operand(tile: hopper.Tile, b: torch.Tensor) -> torch.Tensor:
    """B [k, n] as the tile reads it: [n, k] dense for a K-major tile (b.t()
    itself when b is the transpose of a dense [n, k] tensor, as an
    nn.Linear weight's .t() is; else a transposed copy), else [k, n] dense."""
    return dense(b.t() if tile.bk_major else b)


def dense(x: torch.Tensor) -> torch.Tensor:
    """x with dense rows and a 16-byte aligned start, as TMA reads it: x
    itself when it is so, else a copy."""
    if not x.is_contiguous():
        x = x.contiguous()
    return x if x.data_ptr() % 16 == 0 else x.clone()


def ag_call(pipe, status: Status) -> Call:
    """The fused all-gather + matmul of a pipeline (_torch_gemm's agmm):
    A is the gathered rows in the workspace, flags this rank's region; with
    pipe.in_place, the own rows are read from the caller's shard."""
    p, cfg, me = pipe.p, pipe.cfg, pipe.rank
    g = fused_gemm(cfg.tile, pipe.dtype == torch.bfloat16, pipe.device)
    plan = fusedplan.plan_fused_ag(p.m, p.world, me, cfg.chunks, cfg.tile.rows_per_tile)
    return Call(g, p.m, p.n, p.k, g.sms, order=plan.order, table=plan.table(), flags=pipe.ws.ptrs[me],
                own_rows=(me * p.rows, p.rows) if pipe.in_place else (0, 0), start=pipe.start_gate(),
                status=status)


def rs_plan(pipe) -> fusedplan.FusedRS:
    p, t = pipe.p, pipe.cfg.tile
    return fusedplan.plan_fused_rs(p.m, p.n, p.world, pipe.rank, pipe.cfg.chunks, t.bm, t.bn, t.rows_per_tile)


def rs_call(pipe, plan: fusedplan.FusedRS, status: Status, staging: _cuda.Buffer | None,
            local_flags: _cuda.Buffer | None) -> Call:
    """The fused matmul + reduce-scatter of a pipeline (_torch_gemm's
    matmulrs): rows into the owners' slots (push=gemm), or peers' rows into
    staging, each chunk flagged in local_flags for the copy engines
    (push=ce); sm_reserve SMs stay free for the reductions. reduce=epilogue:
    the own rows are summed in the GEMM's epilogue into C (the call's
    output), the reductions' wait on the peers' flags moved into it."""
    p, cfg, me = pipe.p, pipe.cfg, pipe.rank
    g = fused_gemm(cfg.tile, pipe.dtype == torch.bfloat16, pipe.device, cfg.reduce == "epilogue")
    ce = cfg.push == "ce"
    if ce:
        assert staging is not None and local_flags is not None, "push=ce stages peers' rows and flags them locally"
    stage, local = (staging.data_ptr(), local_flags.data_ptr()) if staging and local_flags else (0, 0)
    dst = [stage + q * p.rows * p.n * pipe.elt if ce and q != me else pipe.slot(q, me)
           for q in range(p.world)]
    flags = [local + i * gemm.FLAG_STRIDE if ce and q != me else
             pipe.flag(q, gemm.partial_flag(me, plan.index[i])) for i, q in enumerate(plan.owner)]
    ep = fusedplan.RSEpilogue(me, p.world, pipe.slot_elems * pipe.elt, pipe.flag(me, 0)) \
        if cfg.reduce == "epilogue" else None
    # Only the epilogue waits for peers inside the GEMM: it alone is gated.
    return Call(g, p.m, p.n, p.k, g.sms - cfg.sm_reserve, order=plan.order, rs=plan.table(dst, flags, ep),
                rows_per_rank=p.rows, start=pipe.start_gate() if ep else (0, 0), status=status)
