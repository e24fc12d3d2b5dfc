"""The lifetime of symmtune.torch's symmetric workspaces and the runners on
them, under CUDA graphs (no torch here: tests run it with fakes).

A captured CUDA graph holds, by address, everything its calls touched: the
workspace, its signal pads and pointer table, and the runner's modules,
cuBLASLt workspaces and buffers. So nothing a capture used is ever freed
while the process runs:

- An ``Arena`` is one growing workspace (a group's all-reduce staging of
  one dtype, or its GEMM workspace) and the runners opened on it. Each
  size it has had is a ``Generation``.
- Growth happens only in eager calls; inside a capture it raises
  ``CaptureError``. Each generation is at least twice the last, so what
  older generations hold is bounded by the newest's size.
- When it grows, every runner of the old generation is opened again on the
  new one at once, so the next call of any (op, shape) finds its runner
  and a later capture opens nothing: one warm-up per (op, shape) is enough,
  in any order.
- The old generation is retired through the library (runtime.retire): its
  runners that no capture used close, and those a capture used stay open,
  unused, with the generation's memory, for the graphs that may replay them.

vLLM's custom all-reduce and torch's symm_mem workspaces make one buffer of
a fixed size instead and never grow it; growth here keeps a program that
warms up with small calls and later runs large eager ones (prefill) safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Optional


class CaptureError(RuntimeError):
    """A symmtune.torch call that cannot run inside a CUDA graph capture (it
    would allocate symmetric memory or open a runner): make the same call
    once before the capture. Raised before anything is enqueued, so the
    capture and the process carry on."""


# Opens a runner on a generation's region: its handle. The second argument
# is the handle it replaces on the last generation (None at a first open),
# whose warm state (the row counts a GEMM op has run) the new one takes.
Opener = Callable[[Any, Optional[int]], int]


@dataclass
class Generation:
    """One size of an arena: its region (the symmetric allocation, whatever
    the allocator returned), the runners opened on it by key, and every
    handle opened on it that the library has not closed yet (live): the
    region is dropped only once live is empty, since a captured graph may
    replay any of them."""
    region: Any
    nbytes: int
    runners: dict[Hashable, int] = field(default_factory=dict)
    live: set[int] = field(default_factory=set)


class Arena:
    """A workspace that grows by generations (see the module's doc).

    allocate(nbytes) makes a region of nbytes (collective: every rank grows
    at the same call, since the calls are); retire(handles) hands the old
    runners to the library and returns the handles it kept for graphs;
    capturing() says whether the current stream is being captured. what
    names the workspace in errors."""

    def __init__(self, what: str, allocate: Callable[[int], Any], retire: Callable[[list[int]], list[int]],
                 capturing: Callable[[], bool]) -> None:
        self.what = what
        self._allocate, self._retire, self._capturing = allocate, retire, capturing
        self.current: Generation | None = None
        self.retired: list[Generation] = []  # kept only for the graphs that captured them
        self._openers: dict[Hashable, Opener] = {}

    def fit(self, nbytes: int, call: str) -> Generation:
        """The current generation, grown first to hold nbytes. call names
        the call for the capture error."""
        cur = self.current
        if cur is not None and cur.nbytes >= nbytes:
            return cur
        if self._capturing():
            raise CaptureError(
                f"symmtune.torch: {call} needs {self.what} of {nbytes} bytes, more than it has, and symmetric memory "
                "cannot be allocated while a CUDA graph is being captured; make the same call once before the capture "
                "(a warm-up), or warm up the largest call first")
        size = max(nbytes, 2 * cur.nbytes) if cur is not None else nbytes
        new = Generation(self._allocate(size), size)
        try:
            for key, opener in self._openers.items():
                new.runners[key] = opener(new.region, cur.runners.get(key) if cur is not None else None)
                new.live.add(new.runners[key])
        except BaseException:
            self._retire(list(new.runners.values()))  # none was called: all close
            raise
        self.current = new
        if cur is not None:
            self._retire_generation(cur)
        return new

    def _retire_generation(self, gen: Generation) -> None:
        gen.live = set(self._retire(sorted(gen.live)))
        gen.runners.clear()
        if gen.live:
            self.retired.append(gen)  # a graph may replay it: its memory stays
        else:
            gen.region = None  # no graph holds it: freed with the last reference

    def reap(self, closed: set[int]) -> None:
        """Takes the handles the library closed (runtime.reap: the graphs
        that held them were destroyed) off every generation, and drops the
        retired generations left with none."""
        for gen in self.retired + ([self.current] if self.current is not None else []):
            gen.live -= closed
        for gen in self.retired:
            if not gen.live:
                gen.region = None
        self.retired = [g for g in self.retired if g.live]

    def runner(self, key: Hashable, opener: Opener, call: str) -> int:
        """The current generation's runner for key, opened at the first
        call of key (never inside a capture). The opener is kept: when the
        arena grows the runner is opened again on the new generation."""
        gen = self.current
        if gen is None:
            raise RuntimeError(f"symmtune.torch: {self.what} has no memory yet (fit it first)")
        h = gen.runners.get(key)
        if h is None:
            if self._capturing():
                raise CaptureError(
                    f"symmtune.torch: the first {call} came during a CUDA graph capture, where its kernels cannot be "
                    "compiled and loaded nor its config agreed by the group; make the same call once before the "
                    "capture (a warm-up)")
            h = gen.runners[key] = opener(gen.region, None)
            gen.live.add(h)
            self._openers[key] = opener
        return h

    def forget(self) -> None:
        """Retires every runner of the current generation (each is opened
        again at its key's next call): those a capture used stay open for
        their graphs, and stay in the generation's live handles, so a later
        growth keeps its memory for them."""
        gen = self.current
        if gen is None:
            return
        handles = set(gen.runners.values())
        kept = set(self._retire(sorted(handles)))
        gen.live -= handles - kept
        gen.runners.clear()
        self._openers.clear()

    def held_bytes(self) -> tuple[int, int]:
        """(all the bytes this arena holds, those of retired generations)."""
        retired = sum(g.nbytes for g in self.retired)
        return retired + (self.current.nbytes if self.current is not None else 0), retired

    def runner_counts(self) -> tuple[int, int]:
        """(runners open on the current generation, handles kept for graphs)."""
        cur = self.current
        n = len(cur.runners) if cur is not None else 0
        forgotten = len(cur.live) - n if cur is not None else 0
        return n, sum(len(g.live) for g in self.retired) + forgotten
