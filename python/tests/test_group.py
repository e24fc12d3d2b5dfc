"""First calls on a group (symmtune._group): every rank waits for every
rank, mismatched calls and failed opens raise on every rank, a failure
poisons the group, nothing hangs past the timeout. A fake store with the
torch Store's set/get/wait/add/check/delete_key, and a thread per rank."""
from __future__ import annotations

import random
import threading
import time
from datetime import timedelta
from typing import Any, Callable, Optional

import pytest

from symmtune import _group
from symmtune._group import (ChoiceError, DesyncError, Group, GroupError, GroupTimeout, OpenError, PoisonedError)

TIMEOUT = 0.5  # seconds a rank waits in these tests
POLL = 0.02


class Store:
    """An in-memory store whose wait times out as torch's does."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.cond = threading.Condition()
        self.requests = 0

    def set(self, key: str, value: str) -> None:
        with self.cond:
            self.requests += 1
            self.data[key] = value.encode()
            self.cond.notify_all()

    def get(self, key: str) -> bytes:
        with self.cond:
            self.requests += 1
            return self.data[key]

    def wait(self, keys: list[str], timeout: timedelta) -> None:
        with self.cond:
            self.requests += 1
            if not self.cond.wait_for(lambda: all(k in self.data for k in keys), timeout.total_seconds()):
                raise RuntimeError("Socket Timeout")

    def add(self, key: str, amount: int) -> int:
        with self.cond:
            self.requests += 1
            v = int(self.data.get(key, b"0")) + amount
            self.data[key] = str(v).encode()
            self.cond.notify_all()
            return v

    def check(self, keys: list[str]) -> bool:
        with self.cond:
            self.requests += 1
            return all(k in self.data for k in keys)

    def delete_key(self, key: str) -> bool:
        with self.cond:
            self.requests += 1
            return self.data.pop(key, None) is not None


class BareStore:
    """A store with only set/get/wait/add (no check, no delete_key)."""

    def __init__(self) -> None:
        self.inner = Store()
        self.data = self.inner.data

    def set(self, key: str, value: str) -> None:
        self.inner.set(key, value)

    def get(self, key: str) -> bytes:
        return self.inner.get(key)

    def wait(self, keys: list[str], timeout: timedelta) -> None:
        self.inner.wait(keys, timeout)

    def add(self, key: str, amount: int) -> int:
        return self.inner.add(key, amount)


class NoStore:
    """Fails any request: a world of 1 must make none."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"store.{name} called in a world of 1")


FUSED = {"config": {"impl": "fused:128x256:s4:c2:g8:cl2", "chunks": 1}, "source": "tuned"}
DEFAULT = {"config": {"impl": "pipeline", "chunks": 2}, "source": "default"}


def groups(world: int, store: Any = None, timeout: float = TIMEOUT) -> list[Group]:
    store = Store() if store is None else store
    return [Group("g", r, world, store, timeout=timeout, poll_s=POLL) for r in range(world)]


def on_ranks(gs: list[Group], body: Callable[[Group], Any], limit: float = 5.0) -> list[Any]:
    """body(group) on a thread per rank: each rank's result or exception.
    Fails if a rank has not returned after limit seconds (a hang)."""
    out: list[Any] = [None] * len(gs)

    def run(r: int) -> None:
        try:
            out[r] = body(gs[r])
        except BaseException as e:  # noqa: BLE001 - the test looks at it
            out[r] = e
    threads = [threading.Thread(target=run, args=(r,), name=f"rank{r}", daemon=True) for r in range(len(gs))]
    for t in threads:
        t.start()
    end = time.monotonic() + limit
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "a rank hung"
    return out


def call(g: Group, op: str = "agmm", shape: str = "m=8192,n=3584,k=8192", choice: Any = None,
         open_: Optional[Callable[[dict], Any]] = None, **kw: Any) -> Any:
    """One first call; returns (choice run, open's result)."""
    mine = FUSED if choice is None else choice

    def choose() -> dict:
        if isinstance(mine, Exception):
            raise mine
        return mine
    return g.first_call(op, shape, f"the {op} {shape}", choose,
                        open_ or (lambda c: ("opened", g.rank, c["config"]["impl"])), **kw)


# -- agreement and rendezvous -------------------------------------------------

@pytest.mark.filterwarnings("ignore:symmtune. ranks disagree")
@pytest.mark.parametrize("choices", [[FUSED, DEFAULT], [DEFAULT, FUSED], [FUSED, DEFAULT, DEFAULT, FUSED]])
def test_every_rank_runs_rank_0s_choice(choices):
    gs = groups(len(choices))
    got = on_ranks(gs, lambda g: call(g, choice=choices[g.rank]))
    impl = choices[0]["config"]["impl"]
    assert got == [("opened", r, impl) for r in range(len(choices))]
    assert [g.seq for g in gs] == [1] * len(choices)


def test_a_rank_that_disagrees_warns_once_naming_both(recwarn):
    on_ranks(groups(2), lambda g: call(g, choice=[FUSED, DEFAULT][g.rank]))
    msgs = [str(w.message) for w in recwarn if "disagree" in str(w.message)]
    assert len(msgs) == 1
    assert "impl=fused:128x256:s4:c2:g8:cl2" in msgs[0] and "impl=pipeline" in msgs[0] and "rank 1" in msgs[0]


def test_rank_0_waits_for_the_others_too():
    """Rank 0 does not open (so does not enqueue) before every rank posted."""
    gs = groups(2, timeout=2.0)
    opened: dict[int, float] = {}

    def body(g: Group) -> Any:
        if g.rank == 1:
            time.sleep(0.3)
        start = time.monotonic()
        call(g, open_=lambda c: opened.setdefault(g.rank, time.monotonic() - start))
        return time.monotonic() - start
    took = on_ranks(gs, body)
    assert opened[0] >= 0.25 and took[0] >= 0.25


def test_rank_0s_choose_error_raises_on_every_rank_and_does_not_poison():
    gs = groups(3)
    bad = ValueError("configs.toml:3: corrupt")
    got = on_ranks(gs, lambda g: call(g, choice=bad if g.rank == 0 else FUSED))
    assert got[0] is bad  # rank 0 raises its own
    for e in got[1:]:
        assert isinstance(e, ChoiceError) and "rank 0 could not choose" in str(e) and "configs.toml:3" in str(e)
    # Every rank completed the round: still in step, nothing poisoned.
    assert on_ranks(gs, lambda g: call(g, op="allreduce", shape="n=3000")) == [
        ("opened", r, "fused:128x256:s4:c2:g8:cl2") for r in range(3)]


@pytest.mark.filterwarnings("ignore:symmtune. ranks disagree")
def test_another_ranks_choose_error_runs_rank_0s():
    got = on_ranks(groups(2), lambda g: call(g, choice=FUSED if g.rank == 0 else KeyError("cache")))
    assert got == [("opened", 0, "fused:128x256:s4:c2:g8:cl2"), ("opened", 1, "fused:128x256:s4:c2:g8:cl2")]


# -- fail-stop ----------------------------------------------------------------

@pytest.mark.parametrize("calls, odd", [
    ([("allreduce", "n=3000"), ("agmm", "m=8192,n=3584,k=8192")], (1,)),      # another op
    ([("agmm", "m=8192,n=3584,k=8192"), ("agmm", "m=4096,n=3584,k=8192")], (1,)),  # another shape
    ([("allreduce", "n=3000"), ("allreduce", "n=3000"), ("allreduce", "n=4096")], (2,)),
])
def test_calls_in_another_order_raise_at_once_on_every_rank(calls, odd):
    gs = groups(len(calls), timeout=3.0)
    start = time.monotonic()
    got = on_ranks(gs, lambda g: call(g, op=calls[g.rank][0], shape=calls[g.rank][1]))
    assert time.monotonic() - start < 1.5  # not the timeout
    for e in got:
        assert isinstance(e, DesyncError), e
        assert e.seq == 1 and e.ranks == odd
        msg = str(e)
        assert f"rank 0 calls {calls[0][0]} {calls[0][1]}" in msg
        assert f"rank {odd[0]} calls {calls[odd[0]][0]} {calls[odd[0]][1]}" in msg and "#1" in msg
    for g in gs:
        with pytest.raises(PoisonedError, match="differs between ranks"):
            call(g)


@pytest.mark.parametrize("late, ok", [(0.15, True), (1.0, False)])  # within the timeout, beyond it
def test_a_late_rank(late, ok):
    gs = groups(3)

    def body(g: Group) -> Any:
        if g.rank == 2:
            time.sleep(late)
        return call(g)
    start = time.monotonic()
    got = on_ranks(gs, body)
    if ok:
        assert got == [("opened", r, "fused:128x256:s4:c2:g8:cl2") for r in range(3)]
        return
    # Each on-time rank times out, or hears first that the other did.
    assert any(isinstance(e, GroupTimeout) for e in got[:2]), got
    for e in got[:2]:
        assert isinstance(e, (GroupTimeout, PoisonedError)), e
        assert e.seq == 1 and "for rank 2 to make their first call #1" in str(e) and "agmm" in str(e)
        assert "SYMMTUNE_AGREE_TIMEOUT" in str(e)
        if isinstance(e, GroupTimeout):
            assert e.ranks == (2,)
    # The late rank finds the group given up as it arrives: at once, naming why.
    assert isinstance(got[2], PoisonedError), got[2]
    assert "waited" in str(got[2]) and "for rank 2" in str(got[2])
    assert time.monotonic() - start < late + 0.5
    for g in gs:  # every later call raises at once, not after another timeout
        t = time.monotonic()
        with pytest.raises(PoisonedError, match="for rank 2"):
            call(g, op="allreduce", shape="n=3000")
        assert time.monotonic() - t < 0.1


def test_a_rank_that_never_comes_times_out_once_then_raises_at_once():
    """A round counted before its wait failed must not make later calls wait."""
    g = groups(2)[0]
    t = time.monotonic()
    with pytest.raises(GroupTimeout, match=r"rank 0 waited 0.5 s at first call #1 .*for rank 1 "):
        call(g)
    assert TIMEOUT <= time.monotonic() - t < TIMEOUT + 0.5
    t = time.monotonic()
    with pytest.raises(PoisonedError, match="the allreduce n=3000 cannot run: the group is unusable since an "
                                            "earlier failure: .*waited"):
        call(g, op="allreduce", shape="n=3000")
    assert time.monotonic() - t < 0.1


def test_the_others_give_up_at_once_when_one_rank_does():
    """Rank 1 times out on rank 2 (which never comes) with a short timeout;
    rank 0, with a long one, hears it through the store within a poll."""
    store = Store()
    g0 = Group("g", 0, 3, store, timeout=30.0, poll_s=POLL)
    g1 = Group("g", 1, 3, store, timeout=0.2, poll_s=POLL)
    start = time.monotonic()
    got = on_ranks([g0, g1], call)
    assert time.monotonic() - start < 1.0
    assert isinstance(got[1], GroupTimeout) and got[1].ranks == (2,)
    assert isinstance(got[0], PoisonedError) and "rank 1 waited" in str(got[0]) and got[0].ranks == (1,)


@pytest.mark.parametrize("world, failing", [(2, (1,)), (3, (0,)), (3, (0, 2))])
def test_a_failed_open_raises_on_every_rank(world, failing):
    gs = groups(world)
    undone: list[int] = []

    def open_(g: Group) -> Callable[[dict], Any]:
        def f(c: dict) -> Any:
            if g.rank in failing:
                time.sleep(0.05 * g.rank)  # reports arrive at different times
                raise MemoryError(f"CUDA out of memory on rank {g.rank}")
            return ("runner", g.rank)
        return f
    got = on_ranks(gs, lambda g: call(g, open_=open_(g), undo=lambda res: undone.append(res[1])))
    for r, e in enumerate(got):
        assert isinstance(e, OpenError), e
        # The first failure decides the round; later ones are named where already reported.
        assert failing[0] in e.ranks and set(e.ranks) <= set(failing) and e.seq == 1
        for f in e.ranks:
            assert f"rank {f} (MemoryError: CUDA out of memory on rank {f})" in str(e)
        assert isinstance(e.__cause__, MemoryError) == (r in failing)
    assert sorted(undone) == [r for r in range(world) if r not in failing]
    for g in gs:
        with pytest.raises(PoisonedError, match="failed to open"):
            call(g)


def test_an_open_that_fails_after_a_late_arrival_is_undone():
    """A rank arriving just as the others give up opens, then finds no
    reports and hears of the failure: it undoes its open and raises."""
    store = Store()
    g0 = Group("g", 0, 2, store, timeout=0.3, poll_s=POLL)
    g1 = Group("g", 1, 2, store, timeout=5.0, poll_s=POLL)
    undone: list[Any] = []

    def slow_open(c: dict) -> Any:
        time.sleep(0.6)  # rank 0 times out waiting for rank 1's report
        return "runner"
    got = on_ranks([g0, g1], lambda g: call(g, open_=slow_open if g.rank == 1 else None, undo=undone.append))
    assert isinstance(got[0], GroupTimeout) and "for rank 1 to report opening it" in str(got[0])
    assert isinstance(got[1], PoisonedError) and "rank 0 waited" in str(got[1])
    assert "runner" in undone


def test_a_timeout_after_every_ok_still_commits():
    """The store's add orders the votes: rank 0 times out waiting for the
    decision, but rank 1's ok (the last) came before rank 0's abort vote,
    so the round committed and both ranks run it. Without the order rank
    1 would enqueue while rank 0 raised."""
    class SlowDecider(Store):
        def set(self, key: str, value: str) -> None:
            if key.endswith("/decided") and threading.current_thread().name == "rank1":
                time.sleep(0.8)  # rank 1 decided "ok" but is slow to say so
            super().set(key, value)
    store = SlowDecider()
    g0 = Group("g", 0, 2, store, timeout=0.3, poll_s=POLL)
    g1 = Group("g", 1, 2, store, timeout=5.0, poll_s=POLL)

    def slow_open(c: dict) -> Any:
        time.sleep(0.1)  # rank 1 votes last
        return "runner 1"
    got = on_ranks([g0, g1], lambda g: call(g, open_=slow_open if g.rank == 1 else (lambda c: "runner 0")))
    assert got == ["runner 0", "runner 1"]
    assert g0.failure is None and g1.failure is None


def test_a_rank_waiting_for_the_decision_hears_of_a_failure_at_once():
    """Rank 1 is stuck in its open while another of its threads poisons the
    group (a device wait that timed out, say): rank 0, waiting for rank
    1's vote with a long timeout, raises within a poll; rank 1's late ok
    loses, and its open is undone."""
    gs = groups(2, timeout=30.0)
    stuck, undone = threading.Event(), []

    def open_(g: Group) -> Callable[[dict], Any]:
        def f(c: dict) -> Any:
            if g.rank == 1:
                threading.Timer(0.1, lambda: g.poison(GroupError("symmtune: device wait timed out on rank 1"))).start()
                stuck.wait(0.6)
            return ("runner", g.rank)
        return f
    start = time.monotonic()
    got = on_ranks(gs, lambda g: call(g, open_=open_(g), undo=undone.append))
    assert isinstance(got[0], PoisonedError) and got[0].ranks == (1,)
    assert "failed on rank 1: symmtune: device wait timed out on rank 1" in str(got[0])
    assert isinstance(got[1], PoisonedError) and "device wait timed out" in str(got[1])
    assert sorted(undone) == [("runner", 0), ("runner", 1)] and time.monotonic() - start < 2


def test_check_remote_hears_another_ranks_failure():
    gs = groups(2)
    gs[1].poison(GroupError("symmtune: a device wait timed out on rank 1", "g", 0, (1,)))
    gs[0].check()  # local only: nothing known yet
    with pytest.raises(PoisonedError, match="device wait timed out on rank 1"):
        gs[0].check(remote=True)
    with pytest.raises(PoisonedError, match="device wait timed out"):
        call(gs[0])


def test_a_nested_first_call_raises():
    g = groups(1)[0]
    with pytest.raises(OpenError, match="cannot nest"):
        call(g, open_=lambda c: call(g, op="allreduce", shape="n=1"))


# -- threads ------------------------------------------------------------------

def test_two_threads_first_calls_are_serialized_in_one_order():
    """Two threads per rank, the same order on every rank: both calls run,
    one after the other on each rank (open_ never overlaps)."""
    gs = groups(2, timeout=3.0)
    spans: dict[int, list[tuple[str, float, float]]] = {0: [], 1: []}

    def body(g: Group) -> Any:
        first_in = threading.Event()
        out: dict[str, Any] = {}

        def opener(op: str) -> Callable[[dict], Any]:
            def f(c: dict) -> Any:
                first_in.set()
                t0 = time.monotonic()
                time.sleep(0.1)
                spans[g.rank].append((op, t0, time.monotonic()))
                return op
            return f

        def thread(op: str) -> None:
            out[op] = call(g, op=op, shape="n=1", open_=opener(op))
        a = threading.Thread(target=thread, args=("a",))
        a.start()
        first_in.wait(2)  # b starts while a holds the lock
        b = threading.Thread(target=thread, args=("b",))
        b.start()
        a.join(3)
        b.join(3)
        return out
    got = on_ranks(gs, body)
    assert got == [{"a": "a", "b": "b"}] * 2
    for r in (0, 1):
        (op1, _, end1), (op2, start2, _) = spans[r]
        assert (op1, op2) == ("a", "b") and start2 >= end1
    assert [g.seq for g in gs] == [2, 2]


def test_threads_racing_in_different_orders_raise_never_hang():
    """Each rank runs two threads' first calls in its own random order:
    either every call runs (same order) or each raises a GroupError
    (desync, then poisoned); no thread hangs and none waits a timeout."""
    rng = random.Random(54)
    for trial in range(6):
        gs = groups(2, timeout=3.0)
        orders = [rng.sample(["x", "y"], 2) for _ in gs]

        def body(g: Group) -> Any:
            out: dict[str, Any] = {}
            go = threading.Event()

            def thread(op: str, first: bool) -> None:
                if not first:
                    go.wait(2)
                try:
                    out[op] = call(g, op=op, shape="n=1", open_=lambda c: op)
                except GroupError as e:
                    out[op] = e
                finally:
                    go.set()
            ts = [threading.Thread(target=thread, args=(op, i == 0)) for i, op in enumerate(orders[g.rank])]
            for t in ts:
                t.start()
            for t in ts:
                t.join(4)
            return out
        start = time.monotonic()
        got = on_ranks(gs, body)
        assert time.monotonic() - start < 1.5, orders
        if orders[0] == orders[1]:
            assert got == [{"x": "x", "y": "y"}] * 2
        else:
            for out in got:
                first, second = (out[op] for op in ("x", "y"))
                kinds = sorted(type(e).__name__ for e in (first, second))
                assert kinds == ["DesyncError", "PoisonedError"], (orders, out)


def test_the_lock_is_an_rlock_the_lead_can_hold_around_growth():
    g = groups(1)[0]
    with g.lock:
        assert call(g) == ("opened", 0, "fused:128x256:s4:c2:g8:cl2")  # re-entrant on one thread
    seen = []
    with g.lock:
        t = threading.Thread(target=lambda: seen.append(g.lock.acquire(timeout=0.05)))
        t.start()
        t.join()
    assert seen == [False]


# -- world 1 -------------------------------------------------------------------

def test_world_1_makes_no_store_request_and_keeps_the_rules():
    g = Group("g", 0, 1, NoStore())  # type: ignore[arg-type]
    assert call(g) == ("opened", 0, "fused:128x256:s4:c2:g8:cl2")
    with pytest.raises(ValueError, match="corrupt"):
        call(g, choice=ValueError("corrupt"))  # choose's error as it was, no poison
    assert call(g, op="allreduce", shape="n=1") == ("opened", 0, "fused:128x256:s4:c2:g8:cl2")
    with pytest.raises(OpenError, match=r"first call #4 .*failed to open on rank 0: MemoryError: oom"):
        call(g, open_=lambda c: (_ for _ in ()).throw(MemoryError("oom")))
    with pytest.raises(PoisonedError, match="oom"):
        call(g, op="allreduce", shape="n=2")
    assert g.seq == 4
    assert Group("h", 0, 1).first_call("op", "s", "w", dict, lambda c: 7) == 7  # no store at all


# -- the store's keys -------------------------------------------------------------

@pytest.mark.parametrize("world", [2, 4])
def test_finished_rounds_leave_one_key_per_rank(world):
    store = Store()
    gs = groups(world, store)

    def body(g: Group) -> Any:
        return [call(g, op="allreduce", shape=f"n={i}") for i in range(25)]
    got = on_ranks(gs, body)
    assert all(len(x) == 25 for x in got)
    # The last round's counter and decision (deleted at the next round) and the aborts counter.
    assert sorted(store.data) == ["symmtune/group/g/0/25/decided", "symmtune/group/g/0/25/votes",
                                  "symmtune/group/g/0/aborts", "symmtune/group/g/incarnations"]


def test_a_store_without_check_or_delete_key_still_works():
    store = BareStore()
    got = on_ranks(groups(2, store), lambda g: [call(g, shape=f"n={i}") for i in range(3)])
    assert got == [[("opened", r, "fused:128x256:s4:c2:g8:cl2")] * 3 for r in range(2)]
    g = Group("h", 0, 2, store, timeout=0.2, poll_s=POLL)
    with pytest.raises(GroupTimeout, match="for rank 1 to make"):  # found missing without check
        call(g)


# -- the timeout ------------------------------------------------------------------

def test_the_timeout_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(_group.ENV_TIMEOUT, raising=False)
    assert _group.timeout_s() == _group.DEFAULT_TIMEOUT_S >= 300
    monkeypatch.setenv(_group.ENV_TIMEOUT, "0.2")
    g = Group("g", 1, 2, Store(), poll_s=POLL)
    t = time.monotonic()
    with pytest.raises(GroupTimeout, match="waited 0.2 s .*for rank 0 "):
        call(g)
    assert time.monotonic() - t < 1


@pytest.mark.parametrize("raw", ["0", "-1", "soon"])
def test_a_bad_timeout_is_named(monkeypatch, raw):
    monkeypatch.setenv(_group.ENV_TIMEOUT, raw)
    with pytest.raises(ValueError, match="SYMMTUNE_AGREE_TIMEOUT"):
        _group.timeout_s()


@pytest.mark.parametrize("rank, world, store", [(2, 2, Store()), (-1, 2, Store()), (0, 2, None)])
def test_a_bad_group_is_refused(rank, world, store):
    with pytest.raises(ValueError, match="symmtune: group"):
        Group("g", rank, world, store)


def test_a_group_made_again_under_its_name_starts_clean():
    """torch may give a destroyed group's name to a new one on the same
    store: what the poisoned one left must not reach it."""
    store = Store()
    got = on_ranks(groups(2, store), lambda g: call(g, op=["x", "y"][g.rank]))
    assert all(isinstance(e, DesyncError) for e in got)
    for _ in range(2):  # then twice more, the first one clean
        assert on_ranks(groups(2, store), lambda g: [call(g, shape=f"n={i}") for i in range(3)]) == [
            [("opened", r, "fused:128x256:s4:c2:g8:cl2")] * 3 for r in range(2)]


def test_group_is_one_object_per_name_rank_and_world():
    made: list[int] = []

    def store() -> Store:
        made.append(1)
        return Store()
    a = _group.group("test-registry", 0, 2, store)
    assert _group.group("test-registry", 0, 2, store) is a and made == [1]
    assert _group.group("test-registry", 0, 1, store) is not a and made == [1]  # world 1 needs none
    _group.forget("test-registry")
    assert _group.group("test-registry", 0, 2, store) is not a and made == [1, 1]
