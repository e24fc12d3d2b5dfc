"""symmtune's persistent Hopper GEMM as the Python runtime sees it, without
importing torch: its source (what the GEMM plugins' kernel version hashes),
the tiles a search tries and the rules that reject a tile or a shape.

The rules are kernels/gemm/hopper's (Tile, ParseTile, Check, CheckShape,
SmemBytes, Options), asked of libsymmtune (symmtune._native) and cached per
tile; the constants (BK, SMEM_LIMIT, STAGE_BYTES, MAX_EPI_BUFFERS, ENTRY,
EPILOGUE_OPTION, PARTS) and the searched tiles are the library's too,
fetched on first access. The source is read from the package's own files
through python/symmtune/_kernels/hopper.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import _native

_DIR = Path(__file__).resolve().parent / "_kernels" / "hopper"

_CONSTANTS = {
    "BK": ("hopper", "bk"), "SMEM_LIMIT": ("hopper", "smem_limit"), "STAGE_BYTES": ("hopper", "stage_bytes"),
    "MAX_EPI_BUFFERS": ("hopper", "max_epi_buffers"), "ENTRY": ("hopper", "entry"),
    "EPILOGUE_OPTION": ("hopper", "epilogue_option"), "PARTS": ("hopper", "parts"),
}


def __getattr__(name: str) -> Any:
    return _native.bind_constants(globals(), _CONSTANTS, name)


@lru_cache(maxsize=None)
def source() -> bytes:
    """hopper.Source: the generated wgmma wrappers, the PTX wrappers, the
    communication's flags and tables, then the kernel (hopper.Parts)."""
    return b"".join((_DIR / f).read_bytes() for f in _native.constants()["hopper"]["parts"])


def searched() -> tuple[str, ...]:
    """hopper.Searched: the tiles a search tries (impl=fused:TILE)."""
    return tuple(_native.constants()["hopper"]["searched"])


def widths() -> tuple[int, ...]:
    """The block_n values wgmma.cuh has a wrapper (wgmma_N) for."""
    return tuple(_native.constants()["hopper"]["widths"])


@dataclass(frozen=True)
class Tile:
    """hopper.Tile: the compile-time configuration of the kernel (defaults:
    ParseTile's)."""
    bm: int
    bn: int
    stages: int = 4
    consumers: int = 2
    ping_pong: bool = False
    group_m: int = 8
    bk_major: bool = True
    cluster: int = 0
    split_k: int = 0  # k-slices per tile (split-K); 0 or 1: none
    stream_k: bool = False  # the last wave shared out by k-blocks (stream-K)
    evict_first_b: bool = False  # B loaded with an L2 evict-first policy (small M)

    def _info(self, smem_limit: int = 0) -> dict[str, Any]:
        return _tile_info(self, smem_limit)

    @property
    def cluster_m(self) -> int:
        """Tile.ClusterM: CTAs per cluster (1 without clusters)."""
        return self._info()["cluster_m"]

    def epi_buffers(self) -> int:
        """Tile.EpiBuffers: the epilogue's staging buffers per consumer warp."""
        return self._info()["epi_buffers"]

    def smem_bytes(self) -> int:
        """Tile.SmemBytes: the dynamic shared memory the kernel asks for."""
        return self._info()["smem_bytes"]

    def check(self, smem_limit: int | None = None) -> None:
        """Tile.Check: ValueError with Go's message when the kernel cannot
        be built or run with this tile (smem_limit: SMEM_LIMIT when None)."""
        msg = self._info(smem_limit or 0)["check"]
        if msg is not None:
            raise ValueError(msg)

    @property
    def threads(self) -> int:
        """Tile.Threads: one producer warpgroup and the consumers."""
        return self._info()["threads"]

    @property
    def rows_per_tile(self) -> int:
        """Tile.RowsPerTile: a cluster tile's rows, the unit of the tile order."""
        return self._info()["rows_per_tile"]

    def tiles(self, m: int, n: int) -> int:
        """Tile.Tiles: cluster tiles of an m x n output."""
        return _tiles(self, m, n)

    def options(self, bf16: bool) -> list[str]:
        """Tile.Options: the NVRTC -D flags of the tile."""
        return list(self._info()["options"]["bf16" if bf16 else "f16"])

    def __str__(self) -> str:
        """Tile.String: the name parse_tile reads back."""
        return self._info()["name"]


@lru_cache(maxsize=1024)
def _tile_info(t: Tile, smem_limit: int) -> dict[str, Any]:
    return _native.call("hopper.tile", tile=asdict(t), smem_limit=smem_limit)


@lru_cache(maxsize=1024)
def _tiles(t: Tile, m: int, n: int) -> int:
    return _native.call("hopper.tile", tile=asdict(t), m=m, n=n)["tiles"]


@lru_cache(maxsize=1024)
def check_shape(n: int, k: int) -> None:
    """Tile.CheckShape: TMA needs every row of A and B 16-byte aligned, and
    the epilogue stores column pairs. ValueError with the reason."""
    _native.call("hopper.check_shape", n=n, k=k)


@lru_cache(maxsize=1024)
def parse_tile(name: str) -> Tile:
    """hopper.ParseTile: parts after BMxBN may be left out (4 stages, 2
    consumers, group_m 8, cooperative, B K-major, no cluster, no split-K,
    no stream-K).
    ValueError with Go's message, which quotes the name, for a malformed
    one."""
    return Tile(**_native.call("hopper.tile", name=name)["tile"])
