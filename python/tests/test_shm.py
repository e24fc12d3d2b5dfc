"""The Python cpu backend: regions named and sized as symm/shm's, mapped by
every rank of a group in separate processes, a barrier that holds, files
unlinked at connect, and waits that end when the host cancels the call."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
import uuid

import numpy as np
import pytest

from symmtune.plugin import Call, Cancelled
from symmtune.plugin.shm import FILE_PREFIX, PAD_BYTES, CpuBackend, format_bytes, shm_dir


def group_id() -> str:
    return f"{os.getpid()}-{uuid.uuid4().hex[:12]}"


def rank_main(rank: int, world: int, gid: str, blobs, rounds: int, out) -> None:
    b = CpuBackend()
    pending, blob = b.allocate(rank, world, 8 * rounds, gid)
    blobs[rank] = blob
    while any(x is None for x in blobs[:]):
        time.sleep(0.001)
    team = pending.connect(list(blobs[:]), Call())
    mine = team.array(rank, np.int64, rounds)
    seen = []
    for i in range(rounds):
        # Each round: write, barrier, read every peer's write, barrier.
        mine[i] = 1000 * rank + i
        team.barrier()
        seen.append(sum(int(team.array(r, np.int64, rounds)[i]) for r in range(world)))
        team.barrier()
    del mine
    team.close()
    out.put((rank, seen))


@pytest.mark.parametrize("world", [2, 4])
def test_ranks_share_regions_and_barrier(world):
    ctx = mp.get_context("spawn")
    gid = group_id()
    rounds = 50
    with ctx.Manager() as m:
        blobs = m.list([None] * world)
        out = ctx.Queue()
        procs = [ctx.Process(target=rank_main, args=(r, world, gid, blobs, rounds, out)) for r in range(world)]
        for p in procs:
            p.start()
        results = dict(out.get(timeout=60) for _ in procs)
        for p in procs:
            p.join(10)
            assert p.exitcode == 0
        paths = [bytes(b).decode() for b in blobs]
    want = [sum(1000 * r + i for r in range(world)) for i in range(rounds)]
    assert all(results[r] == want for r in range(world))
    for r, path in enumerate(paths):
        assert path == os.path.join(shm_dir(), f"{FILE_PREFIX}{gid}-r{r}")
        assert not os.path.exists(path), "connect must unlink the rank's file"


def test_region_size_and_layout():
    gid = group_id()
    pending, blob = CpuBackend().allocate(0, 1, 10, gid)
    path = blob.decode()
    try:
        assert os.path.getsize(path) == PAD_BYTES + 4096
        team = pending.connect([blob], Call())
        assert len(team.data(0)) == 4096
        team.barrier()  # a team of one never waits
        team.close()
    finally:
        pending.close()
    assert not os.path.exists(path)


@pytest.mark.parametrize("rank,world,nbytes,gid,match", [
    (2, 2, 8, "g", "rank 2 of world 2"),
    (0, 2, -1, "g", "negative size"),
    (0, 2, 8, "a/b", "bad group id"),
    (0, 2, 8, "", "bad group id"),
])
def test_allocate_refuses_bad_input(rank, world, nbytes, gid, match):
    with pytest.raises(ValueError, match=match):
        CpuBackend().allocate(rank, world, nbytes, gid)


def test_connect_refuses_a_foreign_file(tmp_path):
    gid = group_id()
    pending, blob = CpuBackend().allocate(0, 2, 8, gid)
    try:
        with pytest.raises(OSError, match="not a symmtune shared-memory file"):
            pending.connect([blob, str(tmp_path / "evil").encode()], Call())
    finally:
        pending.close()


def test_barrier_gives_up_when_the_call_is_cancelled():
    gid = group_id()
    p0, b0 = CpuBackend().allocate(0, 2, 8, gid)
    p1, b1 = CpuBackend().allocate(1, 2, 8, gid)
    # Rank 1 never arrives; the host gives up on rank 0's call after 0.2 s.
    deadline = time.monotonic() + 0.2
    try:
        with pytest.raises(Cancelled):
            p0.connect([b0, b1], Call(lambda: time.monotonic() < deadline))
    finally:
        p0.close()
        p1.close()
    assert not os.path.exists(b0.decode()) and not os.path.exists(b1.decode())


@pytest.mark.parametrize("world,extra,match", [
    (1, 1 << 30, "1 rank needs"),
    (4, 1 << 20, "4 ranks need"),
])
def test_allocate_checks_free_space(world, extra, match):
    """A group that cannot fit in the shared-memory directory is refused at
    allocate, naming the shortfall, and leaves no file (Go: checkFree)."""
    st = os.statvfs(shm_dir())
    free = st.f_bavail * st.f_frsize
    gid = group_id()
    with pytest.raises(OSError, match=match + r".* short"):
        CpuBackend().allocate(0, world, free // world + extra, gid)
    assert not [f for f in os.listdir(shm_dir()) if f.startswith(FILE_PREFIX + gid)]


@pytest.mark.parametrize("n,want", [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (64 << 20, "64.0 MiB"),
                                    (3 << 29, "1.5 GiB"), (1 << 50, "1.0 PiB")])
def test_format_bytes(n, want):
    assert format_bytes(n) == want
