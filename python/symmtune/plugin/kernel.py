"""What a kernel plugin implements, as in the Go SDK (sdk/kernel.go).

A plugin author writes one class with ``describe``, ``validate``,
``symmetric_bytes`` and ``open`` (the Go ``sdk.Kernel``), whose ``open``
returns one rank's :class:`Instance` (``prepare``, ``verify``, ``bench``,
``close``), and calls :func:`symmtune.plugin.serve` with it. Configs are plain
dicts of parameter name to ``int`` or ``str``.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, Sequence, Union, runtime_checkable

if TYPE_CHECKING:
    from ..hardware import Fingerprint

Value = Union[int, str]
Config = dict[str, Value]

# The timings the host may ask a bench for (kernel.proto's
# BenchRequest.timing; the Go SDK's sdk.Timing): "" is the plugin's own way,
# "loaded" each call after a fixed load, at the clock a busy GPU holds.
TIMINGS = ("", "loaded")
_bench_timing: contextvars.ContextVar[str] = contextvars.ContextVar("symmtune_bench_timing", default="")


def bench_timing() -> str:
    """How the host asked the running ``Instance.bench`` to time its calls:
    "" (the plugin's own way) or "loaded" (as the Go SDK's ``sdk.TimingOf``).
    A plugin with no such mode times as it always does."""
    return _bench_timing.get()


@dataclass(frozen=True)
class Param:
    """One tunable parameter and its ordered candidate values (neighbouring
    values are one step apart for the host's local searches)."""

    name: str
    values: tuple[Value, ...]

    def __init__(self, name: str, values: Sequence[Value]) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "values", tuple(values))


@dataclass
class Description:
    """What a plugin tunes and how (Go: sdk.Description).

    ``kernel_version`` should hash the kernel's source (see
    :func:`symmtune.plugin.source_hash`) so cache entries go stale when the
    kernel changes. ``backends`` is filled in by ``serve``.
    """

    name: str
    kernel_version: str
    dims: list[str]
    dtypes: list[str]
    params: list[Param]
    default: Config
    summary: str = ""
    backends: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Problem:
    """The problem a group of ranks runs: shape (dimension -> size) and dtype."""

    shape: dict[str, int]
    dtype: str


@dataclass(frozen=True)
class VerifyResult:
    """One rank's correctness check of one config. A wrong answer is a
    result with ``ok=False``, not an exception: exceptions mean the run failed."""

    ok: bool
    rel_err: float
    detail: str = ""


@runtime_checkable
class Team(Protocol):
    """One rank's view of a connected symmetric allocation."""

    rank: int
    world: int

    def close(self) -> None: ...


@runtime_checkable
class Instance(Protocol):
    """One rank of a kernel set up for one problem (Go: sdk.Instance).

    An instance may also define ``precompile(configs) -> list[str | None]``
    (one error text or None per config) to build many configs before timing.
    """

    def prepare(self, config: Config) -> None:
        """Readies config on this rank (load or compile its code)."""

    def verify(self, config: Config, seed: int) -> VerifyResult:
        """Runs config once on fresh input derived from seed (every rank can
        derive every rank's input, see :func:`symmtune.plugin.uniform`) and
        checks this rank's output against a float64 reference."""

    def bench(self, config: Config, warmup: int, iters: int) -> list[float]:
        """Runs warmup untimed iterations, then iters timed ones, each after a
        cross-rank barrier; returns each timed iteration in microseconds."""

    def close(self) -> None: ...


@runtime_checkable
class Kernel(Protocol):
    """A tunable multi-rank kernel. One object serves every rank: per-rank
    state lives in the Instance that ``open`` returns."""

    def describe(self) -> Description: ...

    def validate(self, config: Config, problem: Problem, world: int, backend: str) -> str | None:
        """Returns why config cannot run (a reason), or None when it can. It
        must be cheap and need no device: the host prunes the space with it
        before any trial, every config of the space, several calls at once
        (from the server's threads). Raising an exception counts as a reason
        too. The server has already turned down a backend it does not serve."""

    def symmetric_bytes(self, problem: Problem, world: int, backend: str) -> int:
        """Size of the symmetric region each rank needs."""

    def open(self, team: Team, problem: Problem) -> Instance:
        """Makes this rank's instance over a connected team (a
        :class:`symmtune.plugin.shm.ShmTeam` on the cpu backend)."""


class Pending(Protocol):
    """An allocated region waiting for its peers' blobs."""

    def connect(self, blobs: list[bytes], call: "Call") -> Team: ...

    def close(self) -> None: ...


class Backend(Protocol):
    """One kind of symmetric memory (Go: symm.Backend)."""

    name: str

    def hardware(self, world: int) -> "Fingerprint": ...

    def allocate(self, rank: int, world: int, nbytes: int, group_id: str) -> tuple[Pending, bytes]: ...


class Cancelled(Exception):
    """The host gave up on the call in flight (its deadline passed, or
    another rank failed): waits in barriers end with this."""


class Call:
    """The RPC a rank is serving, so that long waits (barriers) can give up
    when the host cancels it. Teams hold one; the server swaps it per call."""

    def __init__(self, active=None) -> None:
        self._active = active

    def check(self) -> None:
        """Raises Cancelled when the host no longer waits for this call."""
        if self._active is not None and not self._active():
            raise Cancelled("the host cancelled the call (deadline passed or another rank failed)")


def check_config(params: Sequence[Param], config: Config) -> str | None:
    """Why config is not a point of the space, worded as the Go host's
    space.Check words it; None when it is one."""
    names = [p.name for p in params]
    for name in config:
        if name not in names:
            return f"unknown parameter {_quote(name)} (known: {', '.join(names)})"
    for p in params:
        if p.name not in config:
            return f"parameter {_quote(p.name)} missing"
        v = config[p.name]
        if not any(_same(v, c) for c in p.values):
            return f"parameter {_quote(p.name)}: value {v} not in [{' '.join(str(c) for c in p.values)}]"
    return None


def config_string(config: Config) -> str:
    """The canonical text of a config, as Go's space.Config.String: sorted
    name=value pairs joined by commas."""
    return ",".join(f"{k}={config[k]}" for k in sorted(config))


def _same(a: Value, b: Value) -> bool:
    # An int and a str never compare equal, and neither does a bool.
    return type(a) is type(b) and a == b


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

