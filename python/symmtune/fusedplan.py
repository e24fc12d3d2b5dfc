"""The tables the fused Hopper GEMM (impl=fused) reads, as symmtune.torch
builds them: kernels/gemm/gpu/fusedplan.go (PlanFusedAG, PlanFusedRS and
the RSTable layout) ported line for line, without importing torch. The Go
test TestPlanParity holds both plans and the table bytes equal to these."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .gemm import FLAG_STRIDE, MAX_CHUNKS, partial_flag, peers, shards

NO_FLAG = 0xFFFFFFFF  # a span ready at launch (the own shard)

# hopper_gemm.cu's RSTable: MAX_OWNERS, MAX_RS_CHUNKS and the layout its
# static_asserts pin (gpu.RSTableBytes, RSCountOffset, RSCountBytes).
MAX_OWNERS = 8
MAX_RS_CHUNKS = 64
RS_COUNT_OFFSET = 8 * MAX_OWNERS + 8 * MAX_RS_CHUNKS + 4 * (MAX_RS_CHUNKS + 1) + 4 * MAX_RS_CHUNKS
RS_COUNT_BYTES = 4 * MAX_RS_CHUNKS
_RS_EPILOGUE_OFFSET = RS_COUNT_OFFSET + RS_COUNT_BYTES + 4  # me, world, epilogue, pad, slot_bytes, src_stride, wait[]
RS_TABLE_BYTES = _RS_EPILOGUE_OFFSET + 4 * 4 + 8 * 2 + 8 * MAX_RS_CHUNKS


@dataclass(frozen=True)
class RSEpilogue:
    """gpu.RSEpilogue: the own rows reduced in the fused GEMM's epilogue
    (reduce=epilogue) by rank me of world, its slots slot_bytes apart, its
    flag region at flags as mapped here."""
    me: int
    world: int
    slot_bytes: int
    flags: int


@dataclass(frozen=True)
class FusedAG:
    """gpu.FusedAG: the tile rows in walking order, and the chunk table
    (bounds of the gathered A's spans, the flag word announcing each)."""
    order: tuple[int, ...]
    bounds: tuple[int, ...]
    flag: tuple[int, ...]

    def table(self) -> list[int]:
        """FusedAG.Table: the n+1 bounds, then the n flag indices."""
        return [*self.bounds, *self.flag]


def plan_fused_ag(m: int, world: int, rank: int, chunks: int, block_m: int) -> FusedAG:
    """PlanFusedAG: own shard's rows first, then by expected arrival."""
    arrival = {(q, c): c * world + i for i, q in enumerate(peers(rank, world)) for c in range(chunks)}
    spans = [s for sh in shards(m, world, chunks) for s in sh]
    bounds, flag, ready = [0], [], []
    for s in spans:
        bounds.append(s.start + s.rows)
        if s.owner == rank:
            flag.append(NO_FLAG)
            ready.append(-1)
        else:
            flag.append(partial_flag(s.owner, s.index))
            ready.append(arrival[(s.owner, s.index)])
    key = []
    for t in range(-(-m // block_m)):
        lo, hi = t * block_m, min((t + 1) * block_m, m)
        key.append(max([-2] + [ready[i] for i, s in enumerate(spans) if s.rows > 0 and s.start < hi and s.start + s.rows > lo]))
    order = sorted(range(len(key)), key=lambda t: key[t])
    return FusedAG(tuple(order), tuple(bounds), tuple(flag))


@dataclass(frozen=True)
class FusedRS:
    """gpu.FusedRS: tile rows owner by owner, and the chunks (rows
    [bounds[i], bounds[i+1]) are chunk index[i] of owner[i]'s rows, stored
    into by expect[i] CTA tiles)."""
    order: tuple[int, ...]
    bounds: tuple[int, ...]
    owner: tuple[int, ...]
    index: tuple[int, ...]
    expect: tuple[int, ...]

    def table(self, dst: list[int], flag: list[int], ep: RSEpilogue | None = None) -> bytes:
        """FusedRS.Table: the RSTable bytes; dst[q] is where this rank's
        partials of owner q's rows go, flag[i] the address of chunk i's
        flag; the counts start at zero; ep, when given, turns on the
        epilogue's reduction."""
        if len(dst) > MAX_OWNERS or len(self.owner) > MAX_RS_CHUNKS or len(flag) != len(self.owner):
            raise ValueError(f"reduce-scatter table: {len(dst)} owners (at most {MAX_OWNERS}), {len(self.owner)} "
                             f"chunks (at most {MAX_RS_CHUNKS}), {len(flag)} flags")
        b = bytearray(RS_TABLE_BYTES)
        struct.pack_into(f"<{len(dst)}Q", b, 0, *dst)
        off = 8 * MAX_OWNERS
        struct.pack_into(f"<{len(flag)}Q", b, off, *flag)
        off += 8 * MAX_RS_CHUNKS
        struct.pack_into(f"<{len(self.bounds)}I", b, off, *self.bounds)
        off += 4 * (MAX_RS_CHUNKS + 1)
        struct.pack_into(f"<{len(self.expect)}I", b, off, *self.expect)
        off += 4 * MAX_RS_CHUNKS * 2  # expect, then the counts: zero
        struct.pack_into("<I", b, off, len(self.owner))
        if ep is not None and ep.world:
            struct.pack_into("<4I2Q", b, _RS_EPILOGUE_OFFSET, ep.me, ep.world, 1, 0, ep.slot_bytes,
                             MAX_CHUNKS * FLAG_STRIDE)
            for i, (q, c) in enumerate(zip(self.owner, self.index)):
                if q == ep.me:
                    struct.pack_into("<Q", b, _RS_EPILOGUE_OFFSET + 32 + 8 * i, ep.flags + partial_flag(0, c) * FLAG_STRIDE)
        return bytes(b)


def plan_fused_rs(m: int, n: int, world: int, rank: int, chunks: int, block_m: int, block_n: int,
                  rows_per_tile: int) -> FusedRS:
    """PlanFusedRS: the next rank's rows first, the own last."""
    rows = m // world
    bounds, owner, index = [0], [], []
    for sh in shards(m, world, chunks):
        for s in sh:
            bounds.append(s.start + s.rows)
            owner.append(s.owner)
            index.append(s.index)
    expect = [0] * len(owner)
    tiles_n = -(-n // block_n)
    for lo in range(0, m, block_m):
        hi = min(lo + block_m, m)
        for i in range(len(owner)):
            if bounds[i] < hi and bounds[i + 1] > lo:
                expect[i] += tiles_n
    key = [(min(t * rows_per_tile // rows, world - 1) - rank - 1 + world) % world
           for t in range(-(-m // rows_per_tile))]
    order = sorted(range(len(key)), key=lambda t: key[t])
    return FusedRS(tuple(order), tuple(bounds), tuple(owner), tuple(index), tuple(expect))
