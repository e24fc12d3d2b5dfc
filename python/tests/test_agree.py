"""One config per group (symmtune._agree): rank 0's choice reaches every
rank through the store, whatever each rank would have chosen; nothing
hangs. A fake store with the torch Store's set/get/wait, and a thread per
rank."""
from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from symmtune import _agree


class Store:
    """An in-memory store whose wait times out as torch's does."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}
        self.cond = threading.Condition()

    def set(self, key: str, value: str) -> None:
        with self.cond:
            self.data[key] = value
            self.cond.notify_all()

    def get(self, key: str) -> bytes:
        with self.cond:
            return self.data[key].encode()

    def wait(self, keys: list[str], timeout: timedelta) -> None:
        with self.cond:
            if not self.cond.wait_for(lambda: all(k in self.data for k in keys), timeout.total_seconds()):
                raise RuntimeError("Socket Timeout")


def run_ranks(store: Store, choices: list[dict], rounds: list[dict] | None = None) -> list:
    """agree() on every rank at once, each with its own choice (and its
    process's rounds): each rank's answer, or the exception it raised."""
    out: list = [None] * len(choices)
    own: list[dict] = rounds if rounds is not None else [{} for _ in choices]

    def rank(r: int) -> None:
        try:
            out[r] = _agree.agree(store, r, "g/agmm/bf16/m=8192,n=3584,k=8192", choices[r], "the agmm", own[r])
        except Exception as e:  # noqa: BLE001 - the test looks at it
            out[r] = e
    threads = [threading.Thread(target=rank, args=(r,)) for r in reversed(range(len(choices)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return out


FUSED = {"config": {"impl": "fused:128x256:s4:c2:g8:cl2", "chunks": 1}, "source": "tuned", "median_us": 651.6}
DEFAULT = {"config": {"impl": "pipeline", "chunks": 2}, "source": "default", "median_us": None}
OTHER = {"config": {"impl": "pipeline", "chunks": 4}, "source": "tuned", "median_us": 700.0}


@pytest.mark.filterwarnings("ignore:symmtune. ranks disagree")
@pytest.mark.parametrize("choices", [
    [FUSED, DEFAULT],                  # one tuned, one empty cache
    [DEFAULT, FUSED],
    [FUSED, OTHER, DEFAULT, FUSED],    # two different tuned configs, and an empty cache
    [FUSED, FUSED],
])
def test_every_rank_runs_rank_0s_choice(choices):
    got = run_ranks(Store(), choices)
    assert got == [choices[0]] * len(choices)


@pytest.mark.filterwarnings("ignore:symmtune. ranks disagree")
def test_agreeing_again_on_a_key_takes_the_new_round():
    """A caller that forgot its answer (a benchmark forcing another config)
    agrees again: no rank may read the last round's value. Rank 1 reaches
    the second round long before rank 0 has written it."""
    store, rounds = Store(), [{}, {}]
    assert run_ranks(store, [FUSED, DEFAULT], rounds) == [FUSED, FUSED]
    got: list = [None, None]

    def late_rank_0() -> None:
        time.sleep(0.3)
        got[0] = _agree.agree(store, 0, "g/agmm/bf16/m=8192,n=3584,k=8192", OTHER, "the agmm", rounds[0])
    t = threading.Thread(target=late_rank_0)
    t.start()
    got[1] = _agree.agree(store, 1, "g/agmm/bf16/m=8192,n=3584,k=8192", DEFAULT, "the agmm", rounds[1])
    t.join()
    assert got == [OTHER, OTHER]


def test_a_rank_that_disagrees_says_so_naming_both(recwarn):
    run_ranks(Store(), [FUSED, DEFAULT])
    msgs = [str(w.message) for w in recwarn if "disagree" in str(w.message)]
    assert len(msgs) == 1
    assert "impl=fused:128x256:s4:c2:g8:cl2" in msgs[0] and "impl=pipeline" in msgs[0] and "rank 1" in msgs[0]


def test_rank_0s_error_reaches_every_rank():
    got = run_ranks(Store(), [{"error": "ValueError: configs.toml:3: corrupt"}, DEFAULT])
    assert all(isinstance(e, RuntimeError) and "configs.toml:3" in str(e) for e in got)


@pytest.mark.filterwarnings("ignore:symmtune. ranks disagree")
def test_a_rank_that_cannot_choose_runs_rank_0s():
    got = run_ranks(Store(), [FUSED, {"error": "ValueError: configs.toml:3: corrupt"}])
    assert got == [FUSED, FUSED]


def test_a_missing_rank_0_times_out_with_the_fix(monkeypatch):
    monkeypatch.setenv(_agree.ENV_TIMEOUT, "0.2")
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="same symmtune calls in the same order.*SYMMTUNE_AGREE_TIMEOUT"):
        _agree.agree(Store(), 1, "g/allreduce/bf16/n=3000", DEFAULT, "the all-reduce", {})
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("raw", ["0", "-1", "soon"])
def test_a_bad_timeout_is_named(monkeypatch, raw):
    monkeypatch.setenv(_agree.ENV_TIMEOUT, raw)
    with pytest.raises(ValueError, match="SYMMTUNE_AGREE_TIMEOUT"):
        _agree.timeout_s()
