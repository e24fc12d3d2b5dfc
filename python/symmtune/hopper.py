"""symmtune's persistent Hopper GEMM as the Python runtime sees it, without
importing torch: its source (what the GEMM plugins' kernel version hashes),
the tiles a search tries and the rules that reject a tile or a shape.

A port of kernels/gemm/hopper/tile.go (Tile, ParseTile, Check, CheckShape),
reading the package's own files through python/symmtune/_kernels/hopper:
searched.json (Searched), wgmma.cuh (the widths it has wrappers for),
hopper_ptx.cuh, hopper_comm.cuh and hopper_gemm.cu. The Go test TestPlanParity (kernels/gemm/gpu) holds its
answers on a table of tile names equal to Go's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_DIR = Path(__file__).resolve().parent / "_kernels" / "hopper"

# tile.go's BK and SmemLimit; source.go's Entry.
BK = 64
SMEM_LIMIT = 232448
# One of the epilogue's staging buffers per consumer warp (Tile.StageBytes),
# and the most a warp gets (maxEpiBuffers).
STAGE_BYTES = 512
MAX_EPI_BUFFERS = 4
ENTRY = "hopper_gemm"
# source.go's EpilogueOption: the variant whose epilogue can sum a
# reduce-scatter's own rows.
EPILOGUE_OPTION = "-DRS_EPILOGUE=1"

_INT64 = range(-(1 << 63), 1 << 63)
_FORM = "want BMxBN[:sS][:cC][:gG][:pp][:bn][:clN]"


# hopper.Parts: the files of the kernel's source, in order.
PARTS = ("wgmma.cuh", "hopper_ptx.cuh", "hopper_comm.cuh", "hopper_gemm.cu")


@lru_cache(maxsize=None)
def source() -> bytes:
    """hopper.Source: the generated wgmma wrappers, the PTX wrappers, the
    communication's flags and tables, then the kernel."""
    return b"".join((_DIR / f).read_bytes() for f in PARTS)


@lru_cache(maxsize=None)
def searched() -> tuple[str, ...]:
    """hopper.Searched: the tiles a search tries (impl=fused:TILE)."""
    tiles = json.loads((_DIR / "searched.json").read_text())["searched"]
    if not tiles or not all(isinstance(t, str) for t in tiles):
        raise RuntimeError(f"{_DIR / 'searched.json'}: want a non-empty list of tile names")
    return tuple(tiles)


@lru_cache(maxsize=None)
def widths() -> tuple[int, ...]:
    """The block_n values wgmma.cuh has a wrapper (wgmma_N) for."""
    found = tuple(int(n) for n in re.findall(r"\bvoid wgmma_(\d+)\(", (_DIR / "wgmma.cuh").read_text()))
    if not found:
        raise RuntimeError(f"{_DIR / 'wgmma.cuh'}: no wgmma_N wrappers")
    return found


def _quo(a: int, b: int) -> int:
    """Go's integer division (truncated toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int64(v: int) -> int:
    """v wrapped as Go's int64 arithmetic wraps it."""
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)


def _go(v: bool) -> str:
    return "true" if v else "false"


@dataclass(frozen=True)
class Tile:
    """hopper.Tile: the compile-time configuration of the kernel."""
    bm: int
    bn: int
    stages: int = 4
    consumers: int = 2
    ping_pong: bool = False
    group_m: int = 8
    bk_major: bool = True
    cluster: int = 0

    @property
    def cluster_m(self) -> int:
        return max(self.cluster, 1)

    def _consumer_regs(self) -> int:
        return 240 if self.consumers == 1 else 232

    def _rows_per_consumer(self) -> int:
        return self.bm if self.ping_pong else _quo(self.bm, max(self.consumers, 1))

    def epi_buffers(self) -> int:
        """Tile.EpiBuffers: the epilogue's staging buffers per consumer warp."""
        b = MAX_EPI_BUFFERS
        while b > 1:
            if self._smem_bytes(b) <= SMEM_LIMIT:
                return b
            b //= 2
        return 1

    def smem_bytes(self) -> int:
        return self._smem_bytes(self.epi_buffers())

    def _smem_bytes(self, bufs: int) -> int:
        # In Go's int64 arithmetic: a name may ask for any number of stages.
        bars = _int64(16 * self.stages + 8 + 255) & ~255
        return _int64(1024 + self.stages * (self.bm + self.bn) * BK * 2 + bars + self.consumers * 4 * STAGE_BYTES * bufs)

    def check(self, smem_limit: int = SMEM_LIMIT) -> None:
        """Tile.Check: ValueError with Go's message when the kernel cannot
        be built or run with this tile."""
        w = widths()
        if self.bn not in w:
            raise ValueError(f"block_n {self.bn}: wgmma tiles are [{' '.join(map(str, w))}] wide")
        if self.consumers not in (1, 2):
            raise ValueError(f"consumers {self.consumers}: the kernel has 1 or 2 consumer warpgroups")
        if self.stages < 2:
            raise ValueError(f"stages {self.stages}: the ring needs 2 stages to overlap loads with MMAs")
        if self.group_m < 1:
            raise ValueError(f"group_m {self.group_m} must be positive")
        if not self.bk_major and self.bn % 64:
            raise ValueError(f"block_n {self.bn} with B stored [K, N]: the kernel loads B in 64-column boxes, "
                             "so block_n must be a multiple of 64")
        rows = self._rows_per_consumer()
        if rows not in (64, 128) or (not self.ping_pong and self.bm - _quo(self.bm, self.consumers) * self.consumers):
            raise ValueError(f"block_m {self.bm} with {self.consumers} consumers (pingpong {_go(self.ping_pong)}): "
                             f"each consumer multiplies 64 or 128 rows, not {rows}")
        if self.cluster_m == 2:
            if self.ping_pong or not self.bk_major:
                raise ValueError("cluster 2 is built for cooperative consumers and a K-major B")
        elif self.cluster_m != 1:
            raise ValueError(f"cluster {self.cluster}: CTAs pair up (2) or work alone (1)")
        acc = rows // 64 * self.bn // 2
        if acc + 40 > self._consumer_regs():
            raise ValueError(f"block_m {self.bm} x block_n {self.bn}: {acc} accumulator registers per consumer "
                             f"thread leave too few of the {self._consumer_regs()} it has")
        s = self.smem_bytes()
        if s > smem_limit:
            raise ValueError(f"{self.stages} stages of {self.bm}x{BK} and {self.bn}x{BK} tiles need {s} bytes of "
                             f"shared memory, more than the {smem_limit} a block may use")

    @property
    def threads(self) -> int:
        """Tile.Threads: one producer warpgroup and the consumers."""
        return 128 * (self.consumers + 1)

    @property
    def rows_per_tile(self) -> int:
        """Tile.RowsPerTile: a cluster tile's rows, the unit of the tile order."""
        return self.bm * self.cluster_m

    def tiles(self, m: int, n: int) -> int:
        """Tile.Tiles: cluster tiles of an m x n output."""
        return -(-m // self.rows_per_tile) * -(-n // self.bn)

    def options(self, bf16: bool) -> list[str]:
        """Tile.Options: the NVRTC -D flags of the tile."""
        b = lambda v: "1" if v else "0"  # noqa: E731
        return [f"-DDTYPE_BF16={b(bf16)}", f"-DB_KMAJOR={b(self.bk_major)}", f"-DBM={self.bm}", f"-DBN={self.bn}",
                f"-DSTAGES={self.stages}", f"-DCONSUMERS={self.consumers}", f"-DPINGPONG={b(self.ping_pong)}",
                f"-DGROUP_M={self.group_m}", f"-DEPI_BUFS={self.epi_buffers()}", f"-DCLUSTER_M={self.cluster_m}"]

    def __str__(self) -> str:
        """Tile.String: the name parse_tile reads back."""
        s = f"{self.bm}x{self.bn}:s{self.stages}:c{self.consumers}:g{self.group_m}"
        if self.ping_pong:
            s += ":pp"
        if not self.bk_major:
            s += ":bn"
        if self.cluster_m > 1:
            s += f":cl{self.cluster_m}"
        return s


def check_shape(n: int, k: int) -> None:
    """Tile.CheckShape: TMA needs every row of A and B 16-byte aligned, and
    the epilogue stores column pairs."""
    if k % 8:
        raise ValueError(f"k={k}: the fused kernel's TMA loads need rows of A and B that are multiples of 16 bytes "
                         "(k a multiple of 8)")
    if n % 8:
        raise ValueError(f"n={n}: the fused kernel needs n a multiple of 8 (16-byte rows of B and C)")


def _atoi(s: str) -> int | None:
    """strconv.Atoi: optional sign, ASCII digits, within int64; else None."""
    if re.fullmatch(r"[+-]?[0-9]+", s) is None or int(s) not in _INT64:
        return None
    return int(s)


def parse_tile(name: str) -> Tile:
    """hopper.ParseTile: parts after BMxBN may be left out (4 stages, 2
    consumers, group_m 8, cooperative, B K-major). ValueError with Go's
    message for a malformed name."""
    parts = name.split(":")
    m = re.fullmatch(r"([+-]?[0-9]+)x([+-]?[0-9]+)", parts[0])
    if m is None or any(int(g) not in _INT64 for g in m.groups()) \
            or f"{int(m.group(1))}x{int(m.group(2))}" != parts[0]:
        raise ValueError(f"tile {_goquote(name)}: {_FORM}")
    f = {"bm": int(m.group(1)), "bn": int(m.group(2))}
    for p in parts[1:]:
        v: int | None = 0
        if p == "pp":
            f["ping_pong"] = True
        elif p == "bn":
            f["bk_major"] = False
        elif p.startswith("cl"):
            v = f["cluster"] = _atoi(p[2:])
        elif len(p) > 1 and p[0] in "scg":
            v = f[{"s": "stages", "c": "consumers", "g": "group_m"}[p[0]]] = _atoi(p[1:])
        else:
            v = None
        if v is None:
            raise ValueError(f"tile {_goquote(name)}, part {_goquote(p)}: {_FORM}")
    return Tile(**f)


def _goquote(s: str) -> str:
    """Go's %q of s, for the ASCII printable names tiles have."""
    if all(" " <= ch <= "~" for ch in s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return json.dumps(s)
