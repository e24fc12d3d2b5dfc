"""The tables the fused Hopper GEMM (impl=fused) reads, as symmtune.torch
builds them, without importing torch: kernels/gemm/gpu/fusedplan.go's
PlanFusedAG, PlanFusedRS and RSTable bytes, asked of libsymmtune
(symmtune._native) and cached per problem. The table constants (NO_FLAG,
MAX_OWNERS, MAX_RS_CHUNKS, RS_COUNT_OFFSET, RS_COUNT_BYTES, RS_TABLE_BYTES)
are the library's, fetched on first access."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from . import _native

_CONSTANTS = {
    "NO_FLAG": ("gemm", "no_flag"), "MAX_OWNERS": ("gemm", "max_owners"), "MAX_RS_CHUNKS": ("gemm", "max_rs_chunks"),
    "RS_COUNT_OFFSET": ("gemm", "rs_count_offset"), "RS_COUNT_BYTES": ("gemm", "rs_count_bytes"),
    "RS_TABLE_BYTES": ("gemm", "rs_table_bytes"),
}


def __getattr__(name: str) -> Any:
    return _native.bind_constants(globals(), _CONSTANTS, name)


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


@lru_cache(maxsize=1024)
def _fused(m: int, n: int, world: int, rank: int, chunks: int, block_m: int, block_n: int,
           rows_per_tile: int) -> dict[str, Any]:
    return _native.call("gemm.fused_plan", m=m, n=n, world=world, rank=rank, chunks=chunks, block_m=block_m,
                        block_n=block_n, rows_per_tile=rows_per_tile)


def plan_fused_ag(m: int, world: int, rank: int, chunks: int, block_m: int) -> FusedAG:
    """PlanFusedAG: own shard's rows first, then by expected arrival
    (block_m: the rows of a tile row, a cluster's)."""
    d = _fused(m, 0, world, rank, chunks, 0, 0, block_m)["ag"]
    return FusedAG(tuple(d["order"]), tuple(d["bounds"]), tuple(d["flag"]))


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
        epilogue's reduction. ValueError for too many owners or chunks."""
        e = ep or RSEpilogue(0, 0, 0, 0)
        d = _native.call("gemm.rs_table", bounds=list(self.bounds), owner=list(self.owner), index=list(self.index),
                         expect=list(self.expect), dst=list(dst), flag=list(flag),
                         epilogue={"me": e.me, "world": e.world, "slot_bytes": e.slot_bytes, "flags": e.flags})
        return bytes.fromhex(d["hex"])


def plan_fused_rs(m: int, n: int, world: int, rank: int, chunks: int, block_m: int, block_n: int,
                  rows_per_tile: int) -> FusedRS:
    """PlanFusedRS: the next rank's rows first, the own last."""
    d = _fused(m, n, world, rank, chunks, block_m, block_n, rows_per_tile)["rs"]
    return FusedRS(tuple(d["order"]), tuple(d["bounds"]), tuple(d["owner"]), tuple(d["index"]), tuple(d["expect"]))
