"""A model check of dyn.patch's tile queue (DYN_SCHED), run here before any GPU ran it.

  python3 protocol_model.py [RUNS]

Models one launch's threads as the kernel orders them: each CTA's producer (the cluster's first CTA's
fetches units from the counter; the other's reads the queue), each consumer warp (reading every queue entry;
a ping-pong consumer multiplies every other unit and waits for its turn; the four warps of a consumer pass
each k-block's MMAs together, as wgmma makes them), the stage ring (FULL, EMPTY) and
the queue's mbarriers with their parity waits (try_wait.parity p is true once the phase of parity p has
completed: the barrier's current phase's parity is not p). Random interleavings, many seeds and shapes
(units, k-blocks, stages, grid, ping-pong or cooperative, clusters of 1 or 2). Checks: no deadlock; every
unit runs exactly once per CTA row of its cluster tile; each CTA's threads take the same units in the same
order; the counter is zero after the launch (so the next launch starts clean). A model of the protocol as
written, not of the hardware: it finds logic errors (parities, counts, the end marker), not memory-order
ones. Standard library only."""
import random
import sys
from typing import Dict, List, Optional, Tuple

DYN_Q = 4


class Bar:
    """An mbarrier: count arrivals complete a phase."""

    def __init__(self, count: int):
        self.count, self.pending, self.phase = count, count, 0

    def arrive(self) -> None:
        self.pending -= 1
        if self.pending == 0:
            self.phase += 1
            self.pending = self.count

    def done(self, parity: int) -> bool:  # try_wait.parity
        return (self.phase & 1) != parity


class Launch:
    def __init__(self, rng: random.Random, units: int, kblocks: int, stages: int, grid_clusters: int,
                 pingpong: bool, cluster: int):
        self.rng = rng
        self.units, self.kblocks, self.stages = units, kblocks, stages
        self.pingpong, self.cm = pingpong, cluster
        self.consumers = 2
        self.counter = 0
        self.clusters = grid_clusters
        self.ran: Dict[int, List[Tuple[int, int]]] = {}  # unit -> (cluster, rank) of each CTA that ran it
        self.seen: Dict[tuple, List[int]] = {}  # (cluster, rank, thread) -> units taken
        self.coll: Dict[tuple, int] = {}  # (cluster, rank, consumer, unit counter, k-block) -> warps there
        readers = self.cm * 4 * self.consumers + self.cm - 1
        self.threads = []
        for c in range(self.clusters):
            ctas = []
            for r in range(self.cm):
                ctas.append({
                    "full": [Bar(self.cm) for _ in range(stages)],  # own producer's arrive + the other's multicast
                    "empty": [Bar((4 if pingpong else 4 * self.consumers) * self.cm) for _ in range(stages)],
                    "turn": Bar(1),
                    "qfull": [Bar(1) for _ in range(DYN_Q)],
                    "qempty": [Bar(readers) for _ in range(DYN_Q)],
                    "slot": [None] * DYN_Q,
                })
            for r in range(self.cm):
                self.threads.append(self.producer(c, r, ctas))
                for cw in range(self.consumers):
                    for w in range(4):
                        self.threads.append(self.consumer(c, r, cw, w, ctas))

    # The queue (hopper_split.cuh's dyn_next).
    def fetch(self) -> int:
        u = self.counter
        self.counter += 1
        return u

    def read_queue(self, ctas, r, i):
        q, parity = i % DYN_Q, (i // DYN_Q) & 1
        while not ctas[r]["qfull"][q].done(parity):
            yield False
        u = ctas[r]["slot"][q]
        ctas[0]["qempty"][q].arrive()  # each reader once (a warp's lane 0, or the lone producer)
        yield True
        return u

    def producer(self, c, r, ctas):
        s, phase, i = 0, 0, 0
        if r == 0:
            nxt = self.fetch()
        while True:
            if r == 0:
                u = nxt
                if u < self.units:
                    nxt = self.fetch()
                q, parity = i % DYN_Q, (i // DYN_Q) & 1
                while not ctas[0]["qempty"][q].done(parity ^ 1):
                    yield False
                for rr in range(self.cm):
                    ctas[rr]["slot"][q] = u
                    ctas[rr]["qfull"][q].arrive()
                if u == self.units + self.clusters - 1:
                    self.counter = 0
                yield True
            else:
                u = yield from self.read_queue(ctas, r, i)
            i += 1
            self.seen.setdefault((c, r, "p"), []).append(u)
            if u >= self.units:
                return
            for _ in range(self.kblocks):
                while not ctas[r]["empty"][s].done(phase ^ 1):
                    yield False
                for rr in range(self.cm):  # this CTA's loads (its A, its half of B to both)
                    ctas[rr]["full"][s].arrive()
                yield True
                s += 1
                if s == self.stages:
                    s, phase = 0, phase ^ 1

    def consumer(self, c, r, cw, w, ctas):
        s, phase, i = 0, 0, 0
        while True:
            u = yield from self.read_queue(ctas, r, i)
            self.seen.setdefault((c, r, cw, w), []).append(u)
            if u >= self.units:
                return
            if self.pingpong and i % self.consumers != cw:
                adv = s + self.kblocks
                phase ^= (adv // self.stages) & 1
                s = adv % self.stages
                i += 1
                continue
            if self.pingpong and i > 0:
                while not ctas[r]["turn"].done((i - 1) & 1):
                    yield False
            for kb in range(self.kblocks):
                while not ctas[r]["full"][s].done(phase):
                    yield False
                # wgmma is warpgroup-wide: no warp of the group passes k-block kb of its unit i before
                # all four have issued it.
                key = (c, r, cw, i, kb)
                self.coll[key] = self.coll.get(key, 0) + 1
                yield True
                while self.coll[key] < 4:
                    yield False
                for rr in range(self.cm):  # release(): every CTA of the cluster
                    ctas[rr]["empty"][s].arrive()
                s += 1
                if s == self.stages:
                    s, phase = 0, phase ^ 1
            if self.pingpong and w == 0:
                ctas[r]["turn"].arrive()  # tid 0 of the consumer
            if w == 0 and (cw == 0 or self.pingpong):  # the unit's rows, once per CTA
                self.ran.setdefault(u, []).append((c, r))
            i += 1

    def run(self) -> Optional[str]:
        """Steps a random live thread at a time; a deadlock is a round in which no live thread moves."""
        live = list(self.threads)
        while live:
            order = live[:]
            self.rng.shuffle(order)
            moved = False
            for t in order:
                for _ in range(self.rng.randint(1, 4)):
                    try:
                        if next(t):
                            moved = True
                    except StopIteration:
                        live.remove(t)
                        moved = True
                        break
            if not moved:
                return f"deadlock with {len(live)} threads waiting"
        return None


def check(rng: random.Random, **kw) -> Optional[str]:
    launch = Launch(rng, **kw)
    err = launch.run()
    if err:
        return err
    for u in range(launch.units):
        got = sorted(launch.ran.get(u, []))
        if not got or got != [(got[0][0], r) for r in range(launch.cm)]:
            return f"unit {u} ran on {got}"
    for c in range(launch.clusters):
        seqs = {k: v for k, v in launch.seen.items() if k[0] == c}
        first = next(iter(seqs.values()))
        if any(v != first for v in seqs.values()):
            return f"cluster {c}: threads saw different units"
    if launch.counter != 0:
        return f"counter {launch.counter} after the launch"
    return None


def main(runs: int) -> int:
    rng = random.Random(1)
    fails = 0
    for n in range(runs):
        kw = dict(units=rng.choice([1, 2, 3, 5, 9, 17, 40]), kblocks=rng.choice([1, 2, 3, 5, 8]),
                  stages=rng.choice([2, 4, 6]), grid_clusters=rng.choice([1, 2, 3, 5]),
                  pingpong=rng.random() < 0.5, cluster=rng.choice([1, 2]))
        if kw["pingpong"]:
            kw["cluster"] = 1  # clusters are built for cooperative consumers
        kw["grid_clusters"] = min(kw["grid_clusters"], kw["units"])
        err = check(random.Random(n), **kw)
        if err:
            fails += 1
            print(f"run {n} {kw}: {err}")
    print(f"{runs} launches, {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
