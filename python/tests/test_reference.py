"""The verification helpers reproduce the Go SDK's values bit for bit
(sdk/testdata/golden.json is written and checked by sdk's Go tests)."""

import json
import math

import numpy as np
import pytest

from conftest import REPO
from symmtune.plugin import rel_err, source_hash, uniform, uniform_scalar, uniform_sum

GOLDEN = json.loads((REPO / "sdk" / "testdata" / "golden.json").read_text())


@pytest.mark.parametrize("case", GOLDEN["uniform"], ids=lambda c: f"seed{c['seed']}-r{c['rank']}-i{c['i']}")
def test_uniform_matches_go(case):
    assert uniform_scalar(case["seed"], case["rank"], case["i"]) == case["value"]
    got = uniform(case["seed"], case["rank"], 1, start=case["i"])
    assert got.dtype == np.float64 and got[0] == case["value"]


def test_uniform_vector_equals_scalar():
    v = uniform(0xDEADBEEF, 3, 1000, start=77)
    assert [float(x) for x in v] == [uniform_scalar(0xDEADBEEF, 3, 77 + i) for i in range(1000)]
    assert v.min() >= -1 and v.max() < 1


def test_uniform_sum_is_the_float32_inputs_summed_in_float64():
    seed, world, n = 9, 3, 257
    want = [sum(float(np.float32(uniform_scalar(seed, r, i))) for r in range(world)) for i in range(n)]
    assert list(uniform_sum(seed, world, n)) == want


@pytest.mark.parametrize("case", GOLDEN["source_hash"], ids=lambda c: repr(c["sources"]))
def test_source_hash_matches_go(case):
    assert source_hash(*case["sources"]) == case["hash"]
    assert source_hash(*[s.encode() for s in case["sources"]]) == case["hash"]


@pytest.mark.parametrize("got,want", [
    ([1, 2, 3], 0.0),
    ([1, 2, 4], 1 / math.sqrt(14)),
    ([1, math.nan, 3], math.inf),
    ([1, -math.inf, 3], math.inf),
])
def test_rel_err(got, want):
    assert rel_err(got, [1, 2, 3]) == pytest.approx(want)


def test_rel_err_of_a_zero_reference_is_the_absolute_error():
    assert rel_err([3, 4], [0, 0]) == 5
