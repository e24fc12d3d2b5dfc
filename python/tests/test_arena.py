"""The lifetime rules of symmtune.torch's workspaces (symmtune._arena),
against a fake allocator and fake runners: no GPU and no torch needed.

The fake runtime models what a CUDA graph holds: a call enqueued while
capturing records (runner, region) in the graph, and a replay checks that
both are still alive, as the GPU would fault if they were not. It holds
regions only weakly (a runner holds raw pointers, not the memory), so
only the arena keeps a region alive: freeing one under a graph faults."""
from __future__ import annotations

import gc
import itertools
import random
import weakref

import pytest

from symmtune._arena import Arena, CaptureError


class Region:
    """A fake symmetric allocation."""

    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes


class Runtime:
    """Fake runners and graphs, with the library's retire rule played by
    the fake: a runner a capture used is kept, any other closed."""

    def __init__(self) -> None:
        self.capturing = False
        self.allocated: list[int] = []
        self.live: dict[int, weakref.ref] = {}  # open runner -> its region, weakly (raw pointers)
        self.destroyed: set[int] = set()  # graphs destroyed
        self.closed: set[int] = set()  # runners closed since the last reap
        self.captured: set[int] = set()
        self.graphs: list[list[tuple[int, weakref.ref]]] = []
        self._next = itertools.count(1)

    def allocate(self, nbytes: int) -> Region:
        assert not self.capturing, "allocated during a capture"
        self.allocated.append(nbytes)
        return Region(nbytes)

    def opener(self, region: Region, prev: int | None = None) -> int:
        assert not self.capturing, "opened during a capture"
        h = next(self._next)
        self.live[h] = weakref.ref(region)
        return h

    def held(self, h: int) -> bool:
        """Whether a graph not destroyed recorded a call of runner h."""
        return any(h == hh for g, calls in enumerate(self.graphs) if g not in self.destroyed for hh, _ in calls)

    def retire(self, handles: list[int]) -> list[int]:
        """The library's runtime.retire: closes what no live graph holds."""
        kept = [h for h in handles if self.held(h)]
        for h in handles:
            if h not in kept:
                del self.live[h]
        self.retiring = getattr(self, "retiring", set()) | set(kept)
        return kept

    def destroy(self, g: int) -> None:
        self.destroyed.add(g)

    def reap(self) -> set[int]:
        """The library's runtime.reap: closes the retired runners no graph
        holds any more, and says which."""
        gone = {h for h in getattr(self, "retiring", set()) if not self.held(h)}
        for h in gone:
            del self.live[h]
        self.retiring -= gone
        return gone

    def enqueue(self, h: int) -> None:
        assert h in self.live, f"runner {h} called after it was closed"
        if self.capturing:
            self.captured.add(h)
            self.graphs[-1].append((h, self.live[h]))

    def capture(self, calls) -> int:
        """Captures calls (a function) into a new graph: its index."""
        self.graphs.append([])
        self.capturing = True
        try:
            calls()
        finally:
            self.capturing = False
        return len(self.graphs) - 1

    def replay(self, g: int) -> None:
        gc.collect()
        assert g not in self.destroyed
        for h, region in self.graphs[g]:
            assert h in self.live, f"graph {g} replays runner {h}, which was closed"
            assert region() is not None, f"graph {g} replays runner {h}, whose memory was freed"

    def arena(self) -> Arena:
        return Arena("the test workspace", self.allocate, self.retire, lambda: self.capturing)


def call(rt: Runtime, a: Arena, key: str, nbytes: int) -> None:
    """One op call as symmtune.torch makes it: fit, runner, enqueue."""
    a.fit(nbytes, f"call {key}")
    rt.enqueue(a.runner(key, rt.opener, f"call {key}"))


def test_a_graph_keeps_its_generation_across_growth():
    rt = Runtime()
    a = rt.arena()
    call(rt, a, "small", 100)                           # the warm-up
    g = rt.capture(lambda: call(rt, a, "small", 100))
    call(rt, a, "large", 1000)                          # an eager prefill grows the workspace
    call(rt, a, "huge", 5000)                           # and again
    gc.collect()
    rt.replay(g)
    assert a.held_bytes() == (100 + 5000, 100)        # the captured generation is kept, the other freed
    assert a.runner_counts() == (3, 1)


def test_a_generation_no_graph_used_is_freed_at_growth():
    rt = Runtime()
    a = rt.arena()
    call(rt, a, "small", 100)
    first = weakref.ref(a.current.region)
    call(rt, a, "large", 1000)
    gc.collect()
    assert first() is None
    assert a.retired == [] and len(rt.live) == 2        # both runners, moved to the new generation


def test_growth_during_a_capture_is_refused():
    rt = Runtime()
    a = rt.arena()
    call(rt, a, "small", 100)
    with pytest.raises(CaptureError, match="warm-up"):
        rt.capture(lambda: call(rt, a, "large", 1000))
    assert rt.allocated == [100] and a.current.nbytes == 100
    call(rt, a, "large", 1000)                          # the process carries on, eagerly
    assert a.current.nbytes == 1000


def test_a_first_call_during_a_capture_is_refused():
    rt = Runtime()
    a = rt.arena()
    call(rt, a, "one", 100)
    with pytest.raises(CaptureError, match="first call two"):
        rt.capture(lambda: call(rt, a, "two", 50))       # fits, but its runner was never opened
    call(rt, a, "two", 50)


@pytest.mark.parametrize("order", list(itertools.permutations([("agmm", 300), ("matmulrs", 700), ("ar", 100)])))
def test_one_warm_up_in_any_order(order):
    """Each op warmed up once, in any order (later ones grow the
    workspace), then all captured together: nothing opens or allocates in
    the capture, and the graph replays after more growth."""
    rt = Runtime()
    a = rt.arena()
    for key, nbytes in order:
        call(rt, a, key, nbytes)
    g = rt.capture(lambda: [call(rt, a, key, nbytes) for key, nbytes in order])
    call(rt, a, "prefill", 10_000)
    rt.replay(g)
    for key, nbytes in order:                           # eager calls after growth run on the new memory
        call(rt, a, key, nbytes)


def test_a_failed_open_during_growth_keeps_the_old_generation():
    rt = Runtime()
    a = rt.arena()
    call(rt, a, "one", 100)
    old = a.current

    def broken(region: Region, prev: int | None = None) -> int:
        raise RuntimeError("compile failed")
    a._openers["two"] = broken                          # the second runner cannot open on the new memory
    with pytest.raises(RuntimeError, match="compile failed"):
        a.fit(1000, "call three")
    assert a.current is old and list(rt.live) == [1]    # the new generation's runners closed again


def test_forget_keeps_what_graphs_hold():
    rt = Runtime()
    a = rt.arena()
    call(rt, a, "one", 100)
    g = rt.capture(lambda: call(rt, a, "one", 100))
    call(rt, a, "two", 100)
    a.forget()
    rt.replay(g)
    assert a.runner_counts() == (0, 1) and len(rt.live) == 1
    call(rt, a, "one", 100)                             # opened again, eagerly


def test_held_memory_is_bounded_whatever_the_sequence():
    """Every call captured (the worst case): what the arena holds stays
    within twice its current generation, which is at most twice the
    largest call's need."""
    for seed in range(20):
        rng = random.Random(seed)
        rt = Runtime()
        a = rt.arena()
        largest = 0
        for i in range(40):
            need = rng.randint(1, 1 << rng.randint(1, 20))
            largest = max(largest, need)
            call(rt, a, f"k{i}", need)
            rt.capture(lambda: call(rt, a, f"k{i}", need))
            held, _ = a.held_bytes()
            assert held <= 2 * a.current.nbytes <= 4 * largest
            assert a.current.nbytes >= largest
        for g in range(len(rt.graphs)):
            rt.replay(g)


def test_forget_then_growth_keeps_what_graphs_hold():
    """Issue 54, item 6: reset() (forget) dropped the captured runners from
    the generation, so the next growth freed the memory their graphs
    replay. The generation now keeps every handle the library has not
    closed."""
    rt = Runtime()
    a = rt.arena()
    call(rt, a, "one", 100)
    g = rt.capture(lambda: call(rt, a, "one", 100))
    a.forget()
    call(rt, a, "one", 100)
    call(rt, a, "large", 10_000)                        # growth after the reset
    rt.replay(g)
    assert a.held_bytes() == (100 + 10_000, 100)


def test_destroyed_graphs_free_their_generation_after_a_reap():
    """Lifetime: once the graphs that used a retired generation are
    destroyed, a reap frees it; before, replays are right."""
    rt = Runtime()
    a = rt.arena()
    call(rt, a, "one", 100)
    graphs = [rt.capture(lambda: call(rt, a, "one", 100)) for _ in range(2)]
    call(rt, a, "large", 10_000)
    old = weakref.ref(a.retired[0].region)
    rt.destroy(graphs[0])
    a.reap(rt.reap())
    rt.replay(graphs[1])                                # one graph still holds it
    assert a.held_bytes()[1] == 100
    rt.destroy(graphs[1])
    a.reap(rt.reap())
    gc.collect()
    assert old() is None and a.held_bytes() == (10_000, 0) and a.runner_counts()[1] == 0


def test_the_fake_faults_when_memory_is_freed_under_a_graph():
    """The fake can fail: a region dropped while a graph holds it makes the
    replay fail, as the GPU would."""
    rt = Runtime()
    a = rt.arena()
    call(rt, a, "one", 100)
    g = rt.capture(lambda: call(rt, a, "one", 100))
    a.current.region = None                             # what the old bug did
    with pytest.raises(AssertionError, match="freed"):
        rt.replay(g)
