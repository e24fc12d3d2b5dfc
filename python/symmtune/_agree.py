"""One config per group (no torch here: tests run it with a fake store).

Kernels that synchronise across ranks hang or disagree when ranks run
different configs, and each rank's choice comes from its own cache and
environment. So the first call of each (op, shape) on a group takes rank
0's choice, published through the group's store (torch.distributed's
key-value store, which every process group has): rank 0 sets the key, the
others wait for it with a timeout, and every rank runs what rank 0 chose.
A rank whose own choice differs says so once, naming both configs.

The key names the group, op, dtype and shape, and a round: the callers
cache the answer, but one that forgets it (a benchmark forcing another
config) agrees again, and every rank counts the same rounds, since the
calls are collective. Without the round a rank could read the last round's
value before rank 0 wrote the new one.
"""

from __future__ import annotations

import json
import os
import warnings
from datetime import timedelta
from typing import Any, Protocol

ENV_TIMEOUT = "SYMMTUNE_AGREE_TIMEOUT"
# How many times this process agreed on each key (for the process's life).
_rounds: dict[str, int] = {}
DEFAULT_TIMEOUT_S = 300.0


class Store(Protocol):
    """What agree needs of a torch.distributed Store."""

    def set(self, key: str, value: str) -> None: ...

    def get(self, key: str) -> bytes: ...

    def wait(self, keys: list[str], timeout: timedelta) -> None: ...


def timeout_s() -> float:
    """How long a rank waits for rank 0's config: $SYMMTUNE_AGREE_TIMEOUT
    seconds, else 300."""
    raw = os.environ.get(ENV_TIMEOUT)
    if raw is None:
        return DEFAULT_TIMEOUT_S
    try:
        t = float(raw)
    except ValueError:
        t = -1.0
    if not t > 0:
        raise ValueError(f"{ENV_TIMEOUT}={raw!r}: want a positive number of seconds")
    return t


def agree(store: Store, rank: int, key: str, mine: dict[str, Any], what: str,
          rounds: dict[str, int] | None = None) -> dict[str, Any]:
    """Rank 0's choice for key, on every rank. mine: this rank's choice, a
    JSON object, or {"error": message} when it could not choose (rank 0's
    error is raised on every rank). what names the call in messages.
    rounds: the process's count of agreements by key (tests give each
    simulated rank its own)."""
    rounds = _rounds if rounds is None else rounds
    n = rounds[key] = rounds.get(key, 0) + 1
    full = f"symmtune/agree/{key}#{n}"
    if rank == 0:
        store.set(full, json.dumps(mine, sort_keys=True))
        theirs = mine
    else:
        t = timeout_s()
        try:
            store.wait([full], timedelta(seconds=t))
        except Exception as e:  # the store's timeout error differs between torch versions
            raise RuntimeError(f"symmtune.torch: rank {rank} waited {t:g} s for rank 0's config of {what}: every rank "
                               "must make the same symmtune calls in the same order (raise "
                               f"{ENV_TIMEOUT} if rank 0 is slow to get there): {e}") from None
        theirs = json.loads(store.get(full))
    if "error" in theirs:
        raise RuntimeError(f"symmtune.torch: {what}: rank 0 could not choose a config: {theirs['error']}")
    if theirs != mine:
        here = (f"could not choose ({mine['error']})" if "error" in mine else f"would run {_named(mine)}")
        warnings.warn(f"symmtune: ranks disagree on {what}: this rank (rank {rank}) {here}, rank 0 runs "
                      f"{_named(theirs)}; every rank runs rank 0's (give every rank the same cache to avoid this)",
                      stacklevel=4)
    return theirs


def _named(choice: dict[str, Any]) -> str:
    cfg = choice.get("config", choice)
    text = ",".join(f"{k}={v}" for k, v in sorted(cfg.items())) if isinstance(cfg, dict) else str(cfg)
    src = choice.get("source")
    return f"{text} ({src})" if src else text
