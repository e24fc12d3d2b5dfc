"""First calls on a process group: agreed, rendezvoused, two-phase, fail-stop.

No torch here: tests run it with a fake store and a thread per rank.

What a round is. The first call of each (op, shape) on a group is one
round. Every rank counts the group's rounds: seq 1, 2, ... Round n:
  1. Each rank runs choose() and posts (op, shape, its choice) under seq n.
  2. Each rank, rank 0 too, waits until every rank posted seq n. If any
     rank's (op, shape) differs from rank 0's, every rank raises
     DesyncError naming both calls (as torch's desync debug does).
  3. The choice is rank 0's. A rank whose own differs warns once, naming
     both. Rank 0's choose() error raises on every rank (ChoiceError; rank
     0 raises its own exception).
  4. Each rank runs open_(choice) and votes: ok, or its error. No rank
     returns (so none enqueues) until the round is decided. It commits
     only if every rank's ok came before any abort; else every rank
     raises (OpenError naming the failed rank and its error, or the
     failure that aborted it) and undoes its open (undo).

Two-phase commit. The store's atomic add decides. An ok adds 1 to the
round's counter, an abort adds BIG. The store orders the adds, so "the
world-th ok" and "the first abort" cannot both come first. Whoever's add
decided sets the round's decided key; the others wait for it. A rank
that waits past the timeout, or hears of a failure, votes abort: if
every ok was already in, its vote loses and it runs the round too. So no
rank enqueues while another raises, whatever the timing.

Keys, under symmtune/group/<name>/<i>/ in the group's store, i numbering
the name's incarnations (each rank adds 1 to symmtune/group/<name>/
incarnations at its first request: a group made again under a destroyed
one's name starts clean; each rank must make one Group per incarnation):
  <n>/call/<rank>   the rank's post of round n (JSON: op, shape, what, choice).
  <n>/open/<rank>   the rank's open of round n (JSON: ok, or error).
  <n>/votes         round n's counter (oks + BIG * aborts).
  <n>/decided       "ok", or the abort's JSON (kind, rank, message).
  abort/<rank>      why the rank gave the group up (JSON: rank, seq, message).
  aborts            how many ranks gave it up (a counter).
Each rank deletes its own call and open keys once round n committed
(every rank voted, so every rank read them). Rank 0 deletes round n's
votes and decided keys once every rank posted round n+1. So a group in
use holds four keys (those two, aborts, incarnations), whatever the
number of rounds. Stores without
delete_key keep them (a few hundred bytes a round). A failed round's
keys stay: the group is dead.

What poisons. A timeout, a desync, a failed open, a store error, or an
interrupt inside a round poisons the Group: it keeps the first failure,
votes abort in the round, posts the failure under abort/<rank> (as
NCCL's ProcessGroup posts an aborted communicator in the store), and
every later first_call raises PoisonedError at once, naming that
failure. A rank that sees the aborts counter (at the start of a round,
and every poll while it waits) poisons itself the same way, so no rank
waits its whole timeout for a peer that already gave up. group.poison()
does the same from outside a round (a device wait that timed out), from
any thread. The sequence number is never rolled back: a poisoned group
is dead, never out of step. Rank 0's choose() error does not poison:
the round commits with nothing opened, every rank raises, and the ranks
stay in step (a bad argument must not kill a server).

Waits. Each wait lasts $SYMMTUNE_AGREE_TIMEOUT seconds (default 600, as
NCCL's watchdog); it polls the aborts counter every poll_s (1 s). A timeout
names the op, the seq and the ranks that did not arrive.

Threads. group.lock (an RLock) is held for a whole round, open_ included:
first calls from two threads on one group are serialized on each rank.
The ranks must still issue them in one order. If two threads race so that
ranks see different orders, the ranks raise DesyncError (or time out if a
rank never makes the call); they never hang past the timeout and never run
mismatched configs. A first_call from inside choose or open_ (the same
thread) raises GroupError, which fails the outer round. The lead may hold group.lock around workspace
growth, so that growth and first calls exclude each other. Calls after the
first (steady calls) take no lock and touch no store; group.check() is
their cheap poison test.

world == 1: no store traffic; the same seq, open and poison rules.
"""

from __future__ import annotations

import json
import os
import threading
import time
import warnings
from datetime import timedelta
from typing import Any, Callable, Optional, Protocol, TypeVar

ENV_TIMEOUT = "SYMMTUNE_AGREE_TIMEOUT"
DEFAULT_TIMEOUT_S = 600.0
POLL_S = 1.0
PREFIX = "symmtune/group"
BIG = 1 << 24  # one abort vote in a round's counter (an ok vote is 1; worlds are smaller)

T = TypeVar("T")


class Store(Protocol):
    """What a Group needs of a torch.distributed Store. check and
    delete_key are used when the store has them (torch's do)."""

    def set(self, key: str, value: str) -> None: ...

    def get(self, key: str) -> bytes: ...

    def wait(self, keys: list[str], timeout: timedelta) -> None: ...

    def add(self, key: str, amount: int) -> int: ...


class GroupError(RuntimeError):
    """A first call that could not run on the group. group: its name; seq:
    the round (0 when none began); ranks: the ranks at fault (late,
    different, failed), where known."""

    def __init__(self, message: str, group: str = "", seq: int = 0, ranks: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.group, self.seq, self.ranks = group, seq, ranks


class DesyncError(GroupError):
    """Ranks made different first calls at the same seq. Poisons."""


class GroupTimeout(GroupError):
    """Ranks did not arrive (post their call, or report their open) within
    the timeout. Poisons."""


class OpenError(GroupError):
    """open_ failed on one or more ranks; no rank returned. Poisons."""


class ChoiceError(GroupError):
    """Rank 0 could not choose (raised on the other ranks). Does not poison."""


class PoisonedError(GroupError):
    """The group failed before (here or on another rank); nothing runs on it.
    reasons: the other ranks' own messages, where it heard of them."""

    reasons: list[str] = []


def timeout_s() -> float:
    """How long a rank waits for the others: $SYMMTUNE_AGREE_TIMEOUT
    seconds, else DEFAULT_TIMEOUT_S."""
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


class Group:
    """One process group as seen by one rank: its store, its count of first
    calls (seq), its lock and its first failure. Make one per (name, rank,
    world) in a process (group() caches them)."""

    def __init__(self, name: str, rank: int, world: int, store: Optional[Store] = None, *,
                 timeout: Optional[float] = None, poll_s: float = POLL_S) -> None:
        if not 0 <= rank < world:
            raise ValueError(f"symmtune: group {name!r}: rank {rank} is not in a world of {world}")
        if world > 1 and store is None:
            raise ValueError(f"symmtune: group {name!r}: a world of {world} needs a store")
        self.name, self.rank, self.world = name, rank, world
        self.store = store
        self.timeout = timeout  # None: timeout_s() at each wait
        self.poll_s = poll_s
        self.lock = threading.RLock()
        self.seq = 0  # rounds begun on this rank
        self.failure: Optional[GroupError] = None  # the first failure; set once
        self._in_round = False
        self._prefix: Optional[str] = None  # PREFIX/name/incarnation, at the first store request
        self._stale: list[str] = []  # own keys every rank has read: delete at the next chance
        self._done = 0  # the last round committed: its counter and decided key go once all ranks are past it
        self._unvoted: Optional[int] = None  # the round in progress, until this rank voted in it

    # -- public -----------------------------------------------------------

    def first_call(self, op: str, shape_key: str, what: str, choose: Callable[[], dict[str, Any]],
                   open_: Callable[[dict[str, Any]], T], *,
                   undo: Optional[Callable[[T], None]] = None) -> T:
        """Runs one round (see the module's note) and returns open_(choice),
        choice being rank 0's choose(). op and shape_key identify the call
        and must match on every rank at this seq; what names it in
        messages. choose: a JSON object. undo(result), if given, runs on a
        rank whose open_ succeeded when another rank's failed (the group is
        poisoned then; undo may free what open_ made). Raises DesyncError,
        GroupTimeout, OpenError, PoisonedError, ChoiceError (all
        GroupError), or on rank 0 its choose()'s own exception."""
        with self.lock:
            self.check(what=what)
            if self._in_round:
                raise GroupError(f"symmtune: group {self.name!r}: first call of {what} made from inside first call "
                                 f"#{self.seq} (its choose or open): a round cannot nest", self.name, self.seq)
            self._in_round = True
            try:
                return self._round(op, shape_key, what, choose, open_, undo)
            finally:
                self._in_round = False

    def check(self, remote: bool = False, what: str = "") -> None:
        """Raises PoisonedError if the group failed: a steady call's test
        (no store request, no lock). remote: also ask the store whether
        another rank gave it up (one request). what: the call, for the
        message."""
        if self.failure is None and remote and self.world > 1:
            self._check_aborts(self.seq, what or "a check")
        if self.failure is not None:
            raise PoisonedError(f"symmtune: group {self.name!r}: {what or 'a call'} cannot run: the group is unusable "
                                f"since an earlier failure: {self.failure}", self.name, self.failure.seq,
                                self.failure.ranks) from self.failure

    def poison(self, err: GroupError) -> GroupError:
        """Marks the group failed with err (the first failure is kept) and
        tells the other ranks through the store. Returns err. For failures
        found outside a round too (a device wait that timed out)."""
        if self.failure is None:
            self.failure = err
            if self.world > 1:
                try:
                    self._store().set(self._key("abort", self.rank),
                                      json.dumps({"rank": self.rank, "seq": err.seq, "message": str(err)}))
                    self._store().add(self._key("aborts"), 1)
                except Exception:  # the store may be what failed; the others will time out
                    pass
        return err

    # -- a round ----------------------------------------------------------

    def _round(self, op: str, shape_key: str, what: str, choose: Callable[[], dict[str, Any]],
               open_: Callable[[dict[str, Any]], T], undo: Optional[Callable[[T], None]]) -> T:
        n = self.seq = self.seq + 1
        self._unvoted = n
        failed: Optional[Exception] = None
        try:
            mine: dict[str, Any] = choose()
            post = json.dumps({"op": op, "shape": shape_key, "what": what, "choice": mine}, sort_keys=True)
        except Exception as e:
            failed, mine = e, {"error": f"{type(e).__name__}: {e}"}
            post = json.dumps({"op": op, "shape": shape_key, "what": what, "choice": mine}, sort_keys=True)
        if self.world == 1:
            if failed is not None:
                raise failed
            return self._open_alone(n, what, mine, open_)
        try:
            choice = self._agree(n, op, shape_key, what, mine, post)
        except GroupError as e:
            if not isinstance(e, ChoiceError):
                self._vote_abort_unvoted(e)
                raise self.poison(e)
            if failed is not None and self.rank == 0:
                raise failed from None  # published for the others; here it is raised as it was
            raise
        except BaseException as e:
            raise self._poison_by(e, n, what)
        return self._open(n, what, choice, open_, undo)

    def _open_alone(self, n: int, what: str, choice: dict[str, Any], open_: Callable[[dict[str, Any]], T]) -> T:
        try:
            return open_(choice)
        except BaseException as e:
            err = OpenError(f"symmtune: group {self.name!r}: first call #{n} ({what}) failed to open on rank 0: "
                            f"{type(e).__name__}: {e}", self.name, n, (0,))
            self.poison(err)
            if isinstance(e, Exception):
                raise err from e
            raise

    def _agree(self, n: int, op: str, shape_key: str, what: str, mine: dict[str, Any], post: str) -> dict[str, Any]:
        """Steps 1 to 3: posts, waits for every rank, checks the calls match,
        returns rank 0's choice (ChoiceError where rank 0 had none, after
        the round's reports, so its keys can go)."""
        self._check_aborts(n, what)
        store = self._store()
        store.set(self._key(n, "call", self.rank), post)
        posts = self._gather(n, "call", post, what, f"to make their first call #{n}")
        # Every rank posted round n, so every rank is past the last round.
        if self.rank == 0 and self._done:
            self._stale += [self._key(self._done, "votes"), self._key(self._done, "decided")]
        self._done = 0
        self._clean()
        calls = [(p["op"], p["shape"]) for p in posts]
        odd = [r for r in range(self.world) if calls[r] != calls[0]]
        if odd:
            def call(r: int) -> str:
                return f"rank {r} calls {calls[r][0]} {calls[r][1]} ({posts[r]['what']})"
            raise DesyncError(f"symmtune: group {self.name!r}: first call #{n} differs between ranks: {call(0)}, "
                              + ", ".join(call(r) for r in odd)
                              + "; every rank must make the same symmtune first calls in the same order (threads "
                              "racing to make first calls on one group can reorder them)", self.name, n, tuple(odd))
        theirs: dict[str, Any] = posts[0]["choice"]
        if "error" in theirs:
            out = self._decide(n, what, None)  # opens nothing; completes the round on every rank
            if out is not None:
                raise out
            raise ChoiceError(f"symmtune: group {self.name!r}: {what}: rank 0 could not choose a config: "
                              f"{theirs['error']}", self.name, n, (0,))
        if theirs != mine:
            here = (f"could not choose ({mine['error']})" if "error" in mine else f"would run {_named(mine)}")
            warnings.warn(f"symmtune: ranks disagree on {what}: this rank (rank {self.rank}) {here}, rank 0 runs "
                          f"{_named(theirs)}; every rank runs rank 0's (give every rank the same cache to avoid "
                          "this)", stacklevel=4)
        return theirs

    def _open(self, n: int, what: str, choice: dict[str, Any], open_: Callable[[dict[str, Any]], T],
              undo: Optional[Callable[[T], None]]) -> T:
        """Step 4: opens, reports, and returns once the round committed."""
        ok = False
        result: Any = None
        failed: Optional[BaseException] = None
        try:
            result = open_(choice)
            ok = True
        except BaseException as e:
            failed = e
        try:
            outcome = self._decide(n, what, None if ok else f"{type(failed).__name__}: {failed}")
        except BaseException as e:
            if ok and undo is not None:
                _quietly(undo, result)
            raise self._poison_by(e, n, what) from failed
        if outcome is None:
            return result  # type: ignore[no-any-return]
        if ok and undo is not None:
            _quietly(undo, result)
        self.poison(outcome)
        if failed is not None and not isinstance(failed, Exception):
            raise failed  # an interrupt stays one
        raise outcome from failed

    def _decide(self, n: int, what: str, error: Optional[str]) -> Optional[GroupError]:
        """Two-phase commit of round n: reports this rank's open (error
        None: ok) and returns None once every rank's ok is in, or the
        error that failed the round. The store's atomic add decides: each
        ok adds 1 and each abort BIG to the round's counter, so the world-th
        ok and the first abort are ordered; whichever came first wins, and
        its maker sets the round's decided key for the others. A rank
        waiting past the timeout (or hearing of a failure) votes abort."""
        store = self._store()
        store.set(self._key(n, "open", self.rank), json.dumps({"error": error} if error else {"ok": True}))
        self._unvoted = None
        if error is None:
            vote: Optional[dict[str, Any]] = None
            v = store.add(self._key(n, "votes"), 1)
        else:
            vote = {"kind": "open", "rank": self.rank, "message": error}
            v = store.add(self._key(n, "votes"), BIG)
        while True:
            aborts, oks = divmod(v, BIG)
            if aborts == 0 and oks == self.world:
                store.set(self._key(n, "decided"), "ok")
                self._committed(n)
                return None
            if vote is not None and aborts == 1:  # this rank's abort came first
                if oks == self.world:
                    self._committed(n)  # every ok was in before it
                    return None
                store.set(self._key(n, "decided"), json.dumps(vote))
                return self._failed(n, what, vote)
            got = self._wait_decided(n, what, vote is None)
            if got == "ok":
                self._committed(n)
                return None
            if got is not None:
                return self._failed(n, what, json.loads(got))
            if vote is not None:  # voted abort, and no rank says what won: a rank died in between
                return GroupTimeout(f"symmtune: group {self.name!r}: rank {self.rank} found no decision of first "
                                    f"call #{n} ({what}) in the store within the timeout", self.name, n)
            vote = self._abort_vote(n, what)
            v = store.add(self._key(n, "votes"), BIG)

    def _abort_vote(self, n: int, what: str) -> dict[str, Any]:
        """Why this rank votes abort while waiting for round n's decision."""
        if self.failure is not None:
            return {"kind": "failed", "rank": self.rank, "message": str(self.failure)}
        try:
            self._check_aborts(n, what)
        except PoisonedError as e:
            return {"kind": "failed", "rank": e.ranks[0] if e.ranks else -1,
                    "message": " | ".join(e.reasons) or str(e)}
        limit = self._limit()
        missing = tuple(r for r in range(self.world) if not self._exists(self._key(n, "open", r)))
        return {"kind": "timeout", "rank": self.rank, "ranks": list(missing),
                "message": f"symmtune: group {self.name!r}: rank {self.rank} waited {limit:g} s at first call #{n} "
                           f"({what}) for {_ranks(missing)} to report opening it: every rank must make the same "
                           "symmtune first calls in the same order; a rank late by more than the timeout (raise "
                           f"{ENV_TIMEOUT}) or one that stopped fails the group"}

    def _wait_decided(self, n: int, what: str, may_abort: bool) -> Optional[str]:
        """Round n's decided key once set; None at the timeout, or (where
        may_abort) as soon as this rank or another has failed."""
        key = self._key(n, "decided")
        deadline = time.monotonic() + self._limit()
        store = self._store()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            step = min(left, self.poll_s)
            t0 = time.monotonic()
            try:
                store.wait([key], timedelta(seconds=step))
                return store.get(key).decode()
            except Exception as e:
                if time.monotonic() - t0 < step / 2:
                    raise GroupError(f"symmtune: group {self.name!r}: rank {self.rank}'s store failed at first "
                                     f"call #{n} ({what}): {type(e).__name__}: {e}", self.name, n) from e
            if may_abort and (self.failure is not None or int(store.add(self._key("aborts"), 0)) > 0):
                return None

    def _committed(self, n: int) -> None:
        """Round n is done on every rank: this rank's call and report keys
        have been read by all (the counter and decided key go at the next
        round, once every rank is past this one)."""
        self._stale += [self._key(n, "call", self.rank), self._key(n, "open", self.rank)]
        self._done = n
        self._clean()

    def _failed(self, n: int, what: str, vote: dict[str, Any]) -> GroupError:
        """The error of round n, which vote failed."""
        if vote.get("kind") == "open":
            bad = []
            for r in range(self.world):
                k = self._key(n, "open", r)
                if r == vote["rank"] or self._exists(k):
                    try:
                        rep = json.loads(self._store().get(k))
                    except Exception:
                        continue
                    if "error" in rep:
                        bad.append((r, str(rep["error"])))
            return OpenError(f"symmtune: group {self.name!r}: first call #{n} ({what}) failed to open on "
                             + ", ".join(f"rank {r} ({msg})" for r, msg in bad)
                             + "; no rank ran it, and the group is unusable", self.name, n, tuple(r for r, _ in bad))
        if vote.get("rank") == self.rank and vote.get("kind") == "timeout":
            return GroupTimeout(str(vote["message"]), self.name, n, tuple(vote.get("ranks", ())))
        return PoisonedError(f"symmtune: group {self.name!r}: rank {self.rank} cannot run first call #{n} ({what}): "
                             f"the group failed on rank {vote.get('rank')}: {vote.get('message')}", self.name, n,
                             (int(vote.get("rank", -1)),))

    def _vote_abort_unvoted(self, err: GroupError) -> None:
        """A rank failing in steps 1 to 3 of a round votes abort in it, so
        that ranks already in step 4 fail at once (best effort)."""
        n, self._unvoted = self._unvoted, None
        if n is None or self.world == 1:
            return
        try:
            v = self._store().add(self._key(n, "votes"), BIG)
            if v // BIG == 1:  # the first abort; this rank never voted ok, so it wins
                self._store().set(self._key(n, "decided"), json.dumps(
                    {"kind": "failed", "rank": self.rank, "message": str(err)}))
        except Exception:
            pass

    # -- the store --------------------------------------------------------

    def _limit(self) -> float:
        return timeout_s() if self.timeout is None else self.timeout

    def _store(self) -> Store:
        assert self.store is not None
        return self.store

    def _key(self, *parts: object) -> str:
        if self._prefix is None:
            # Which incarnation of the name this is: every rank of one adds 1
            # once, so the count over the world numbers it. A group destroyed
            # and made again under its name (on a store that outlived it)
            # starts clean, whatever its last one left.
            k = int(self._store().add(f"{PREFIX}/{self.name}/incarnations", 1))
            self._prefix = f"{PREFIX}/{self.name}/{(k - 1) // self.world}"
        return "/".join([self._prefix] + [str(p) for p in parts])

    def _gather(self, n: int, kind: str, own: str, what: str, waiting_for: str) -> list[dict[str, Any]]:
        """Every rank's value of round n's kind ("call" or "open"), own
        being this rank's, once all are in."""
        keys = [self._key(n, kind, r) for r in range(self.world)]
        self._wait(n, kind, what, waiting_for)
        store = self._store()
        try:
            return [json.loads(own if r == self.rank else store.get(k)) for r, k in enumerate(keys)]
        except Exception as e:
            raise GroupError(f"symmtune: group {self.name!r}: rank {self.rank} could not read first call #{n} "
                             f"({what}) from the store: {type(e).__name__}: {e}", self.name, n) from e

    def _wait(self, n: int, kind: str, what: str, waiting_for: str) -> None:
        """Waits for the other ranks' keys of round n's kind, the timeout in
        all, asking every poll_s whether another rank gave the group up."""
        others = [r for r in range(self.world) if r != self.rank]
        keys = [self._key(n, kind, r) for r in others]
        limit = self._limit()
        deadline = time.monotonic() + limit
        store = self._store()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                missing = tuple(r for r in others if not self._exists(self._key(n, kind, r)))
                raise GroupTimeout(f"symmtune: group {self.name!r}: rank {self.rank} waited {limit:g} s at first "
                                   f"call #{n} ({what}) for {_ranks(missing)} {waiting_for}: every rank must make the "
                                   "same symmtune first calls in the same order; a rank late by more than the "
                                   f"timeout (raise {ENV_TIMEOUT}) or one that stopped fails the group",
                                   self.name, n, missing)
            step = min(left, self.poll_s)
            t0 = time.monotonic()
            try:
                store.wait(keys, timedelta(seconds=step))
                return
            except Exception as e:  # a timeout; its type differs between torch versions
                if time.monotonic() - t0 < step / 2:
                    raise GroupError(f"symmtune: group {self.name!r}: rank {self.rank}'s store failed at first "
                                     f"call #{n} ({what}): {type(e).__name__}: {e}", self.name, n) from e
            self._check_aborts(n, what)

    def _check_aborts(self, n: int, what: str) -> None:
        """Raises PoisonedError (and poisons) if another rank gave the group up."""
        store = self._store()
        try:
            count = int(store.add(self._key("aborts"), 0))
        except Exception as e:
            raise GroupError(f"symmtune: group {self.name!r}: rank {self.rank}'s store failed at first call #{n} "
                             f"({what}): {type(e).__name__}: {e}", self.name, n) from e
        if count <= 0:
            return
        why: list[str] = []
        ranks: list[int] = []
        for r in range(self.world):
            k = self._key("abort", r)
            if r != self.rank and self._exists(k):
                try:
                    got = json.loads(store.get(k))
                    why.append(str(got["message"]))
                    ranks.append(r)
                except Exception:
                    pass
        err = PoisonedError(f"symmtune: group {self.name!r}: rank {self.rank} cannot run first call #{n} ({what}): "
                            f"the group failed on {_ranks(tuple(ranks))}: " + (" | ".join(why) or "(no reason posted)"),
                            self.name, n, tuple(ranks))
        err.reasons = why
        self.failure = self.failure or err  # already posted by the rank that failed
        raise err

    def _exists(self, key: str) -> bool:
        store = self._store()
        check = getattr(store, "check", None)
        try:
            if check is not None:
                return bool(check([key]))
            store.wait([key], timedelta(milliseconds=1))
            return True
        except Exception:
            return False

    def _clean(self) -> None:
        """Deletes this rank's keys that every rank has read, where the
        store can (torch's delete_key); else forgets them."""
        delete = getattr(self.store, "delete_key", None)
        stale, self._stale = self._stale, []
        if delete is None:
            return
        for k in stale:
            try:
                delete(k)
            except Exception:
                return  # a store that cannot delete: keep the rest too

    def _poison_by(self, e: BaseException, n: int, what: str) -> BaseException:
        """Poisons with an unexpected failure inside a round (an interrupt,
        a store error); returns e to raise."""
        err = e if isinstance(e, GroupError) else GroupError(
            f"symmtune: group {self.name!r}: rank {self.rank} failed inside first call #{n} ({what}): "
            f"{type(e).__name__}: {e}", self.name, n, (self.rank,))
        self._vote_abort_unvoted(err)
        self.poison(err)
        return e


def _ranks(ranks: tuple[int, ...]) -> str:
    """"rank 2", "ranks 1, 3", or "a rank" when none is known."""
    if not ranks:
        return "a rank"
    return f"rank{'s' if len(ranks) > 1 else ''} {', '.join(map(str, ranks))}"


def _quietly(undo: Callable[[Any], None], result: Any) -> None:
    try:
        undo(result)
    except Exception:
        pass


def _named(choice: dict[str, Any]) -> str:
    cfg = choice.get("config", choice)
    text = ",".join(f"{k}={v}" for k, v in sorted(cfg.items())) if isinstance(cfg, dict) else str(cfg)
    src = choice.get("source")
    return f"{text} ({src})" if src else text


_groups: dict[tuple[str, int, int], Group] = {}
_groups_lock = threading.Lock()


def forget(name: str) -> None:
    """Drops the process's Groups named name (a process group destroyed,
    whose name torch may give to a new one)."""
    with _groups_lock:
        for key in [k for k in _groups if k[0] == name]:
            del _groups[key]


def group(name: str, rank: int, world: int, store: Callable[[], Store]) -> Group:
    """The process's Group for (name, rank, world), made at the first ask
    (store() is called then, and only for a world above 1)."""
    key = (name, rank, world)
    with _groups_lock:
        g = _groups.get(key)
        if g is None:
            g = _groups[key] = Group(name, rank, world, store() if world > 1 else None)
        return g
