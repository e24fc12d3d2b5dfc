"""Runs a kernel's ranks as threads of this process, for its tests (Go:
sdk.VerifyLocal): no host, no plugin script, no gRPC."""

from __future__ import annotations

import os
import threading
from itertools import count
from typing import Any

from .kernel import Call, Cancelled, Config, Kernel, Problem, VerifyResult, check_config

_groups = count()


def verify_local(kernel: Kernel, world: int, problem: Problem, config: Config, seed: int = 1,
                 backend: Any = None) -> list[VerifyResult]:
    """Runs config once on world ranks, one thread each, over backend (the
    cpu one by default) the way a search's first trial does (validate,
    symmetric_bytes, allocate and connect on every rank, open, prepare,
    verify under seed) and returns each rank's verdict. A wrong answer is a
    VerifyResult with ok False; a failure, a config validate rejects
    included, raises."""
    if backend is None:
        from .shm import CpuBackend
        backend = CpuBackend()
    if world < 1:
        raise ValueError(f"world {world}: want at least 1")
    why = check_config(kernel.describe().params, config) or kernel.validate(config, problem, world, backend.name)
    if why:
        raise ValueError(f"config {config}: {why}")
    nbytes = kernel.symmetric_bytes(problem, world, backend.name)
    group = f"local-{os.getpid()}-{next(_groups)}"
    pending, blobs = [], []
    failed = threading.Event()
    # A rank that fails cancels the others' barriers instead of leaving them waiting.
    call = Call(lambda: not failed.is_set())
    results: list[Any] = [None] * world
    try:
        for r in range(world):
            p, blob = backend.allocate(r, world, nbytes, group)
            pending.append(p)
            blobs.append(blob)

        def rank(r: int) -> None:
            try:
                team = pending[r].connect(blobs, call)
                try:
                    inst = kernel.open(team, problem)
                    try:
                        inst.prepare(config)
                        results[r] = inst.verify(config, seed)
                    finally:
                        inst.close()
                finally:
                    team.close()
            except BaseException as e:  # noqa: B902 -- handed to the caller below
                results[r] = e
                failed.set()

        threads = [threading.Thread(target=rank, args=(r,)) for r in range(world)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for p in pending:
            p.close()
    errors = [(r, e) for r, e in enumerate(results) if isinstance(e, BaseException) and not isinstance(e, Cancelled)]
    if errors:
        r, e = errors[0]
        raise RuntimeError(f"rank {r}: {e}") from e
    return list(results)
