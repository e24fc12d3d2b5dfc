"""symmtune.hopper, the bindings of kernels/gemm/hopper/tile.go through
libsymmtune: it reads the Go package's own files, and names, defaults and
rejections come back as Go's (TestPlanParity in kernels/gemm/gpu holds a
table of names to Go's answers)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from symmtune import hopper

HOPPER = Path(__file__).resolve().parents[2] / "kernels/gemm/hopper"


def test_reads_the_go_packages_files():
    assert hopper.searched() == tuple(json.loads((HOPPER / "searched.json").read_text())["searched"])
    assert hopper.source() == b"".join((HOPPER / f).read_bytes() for f in ("wgmma.cuh", "hopper_ptx.cuh", "hopper_tile.cuh", "hopper_split.cuh", "hopper_comm.cuh", "hopper_gemm.cu"))
    assert hopper.widths() == (48, 64, 80, 96, 112, 128, 160, 192, 224, 256)


def test_searched_tiles_fit_and_are_canonical():
    for name in hopper.searched():
        t = hopper.parse_tile(name)
        t.check()
        assert str(t) == name


def test_parse_tile():
    assert hopper.parse_tile("128x128:pp") == hopper.Tile(128, 128, stages=4, consumers=2, group_m=8, ping_pong=True)
    t = hopper.parse_tile("64x256:s5:c1:g4:bn:cl2")
    assert (t.bm, t.bn, t.stages, t.consumers, t.group_m, t.bk_major, t.cluster_m) == (64, 256, 5, 1, 4, False, 2)
    assert str(t) == "64x256:s5:c1:g4:bn:cl2"
    assert str(hopper.parse_tile("128x256:s+4:cl1")) == "128x256:s4:c2:g8"
    t = hopper.parse_tile("64x128:s6:pp:sk4")
    assert (t.split_k, str(t)) == (4, "64x128:s6:c2:g8:pp:sk4")
    assert "-DSPLIT_K=4" in t.options(True)
    t = hopper.parse_tile("128x256:st")
    assert (t.stream_k, str(t)) == (True, "128x256:s4:c2:g8:st")
    assert "-DSTREAM_K=1" in t.options(True)
    with pytest.raises(ValueError, match="stream-K"):
        hopper.parse_tile("128x128:pp:st").check()


@pytest.mark.parametrize("bad", ["", "128", "128x", "128x256x64", "128x256:q4", "128x256:s", "128x256:sfour",
                                 "+128x256", "0128x256", "128x256:", "128x256:cl", "99999999999999999999x1"])
def test_parse_tile_rejects(bad):
    with pytest.raises(ValueError, match=r"want BMxBN\[:sS\]"):
        hopper.parse_tile(bad)


@pytest.mark.parametrize("name,msg", [
    ("128x104", "block_n 104: wgmma tiles are [48 64 80 96 112 128 160 192 224 256] wide"),
    ("128x224:bn", "block_n 224 with B stored [K, N]: the kernel loads B in 64-column boxes"),
    ("128x128:c3", "consumers 3: the kernel has 1 or 2 consumer warpgroups"),
    ("128x128:s1", "stages 1: the ring needs 2 stages"),
    ("128x128:g0", "group_m 0 must be positive"),
    ("96x128", "block_m 96 with 2 consumers (pingpong false): each consumer multiplies 64 or 128 rows, not 48"),
    ("-65x128:c2", "want BMxBN"),  # block sizes are positive numbers
    ("128x128:pp:cl2", "cluster 2 is built for cooperative consumers"),
    ("128x128:cl3", "cluster 3: CTAs pair up"),
    ("128x256:cl2:sk2", "split-K tiles run without clusters"),
    ("64x128:pp:sk17", "split-K 17: a tile's k-blocks are cut into 1 to 16 slices"),
    ("256x256", "256 accumulator registers per consumer thread leave too few of the 232"),
    ("256x256:s6:c2:pp:c1", "not 256"),
    ("128x256:s8", "8 stages of 128x64 and 256x64 tiles need 398592 bytes"),
])
def test_check(name, msg):
    with pytest.raises(ValueError) as e:
        hopper.parse_tile(name).check()
    assert msg in str(e.value)


def test_check_shape():
    hopper.check_shape(1096, 520)
    with pytest.raises(ValueError, match="k a multiple of 8"):
        hopper.check_shape(1096, 1001)
    with pytest.raises(ValueError, match="n a multiple of 8"):
        hopper.check_shape(999, 1000)


@pytest.mark.parametrize("name,bufs,want", [
    # Tile.SmemBytes's table (tile_test.go): 1 KiB of slack, the stages, the
    # mbarriers padded to 256 bytes, EPI_BUFS x 512 bytes per consumer warp.
    ("128x256:s4:c2", 4, 1024 + 4 * 384 * 128 + 256 + 8 * 512 * 4),
    ("64x224:s6:c2:pp", 2, 1024 + 6 * 288 * 128 + 256 + 8 * 512 * 2),
    ("128x224:s5:c2", 1, 1024 + 5 * 352 * 128 + 256 + 8 * 512),
])
def test_epilogue_buffers_fill_what_shared_memory_leaves(name, bufs, want):
    t = hopper.parse_tile(name)
    assert t.epi_buffers() == bufs
    assert t.smem_bytes() == want
    assert f"-DEPI_BUFS={bufs}" in t.options(True)
