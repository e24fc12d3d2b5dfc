"""The Kernel service's checks, with the Go SDK's wording where the host
shows it (space.Check, sdk/serve.go)."""

import pytest

from symmtune.plugin import Description, Param, check_config, config_string
from symmtune.plugin.server import KernelServicer, config_from_proto, config_to_proto

PARAMS = [Param("algorithm", ["one_shot", "two_shot"]), Param("chunk", [1024, 4096])]


@pytest.mark.parametrize("config,want", [
    ({"algorithm": "one_shot", "chunk": 1024}, None),
    ({"algorithm": "one_shot", "chunk": 1024, "x": 1}, 'unknown parameter "x" (known: algorithm, chunk)'),
    ({"algorithm": "one_shot"}, 'parameter "chunk" missing'),
    ({"algorithm": "one_shot", "chunk": 3}, 'parameter "chunk": value 3 not in [1024 4096]'),
    ({"algorithm": "one_shot", "chunk": "1024"}, 'parameter "chunk": value 1024 not in [1024 4096]'),
    ({"algorithm": 1, "chunk": 1024}, 'parameter "algorithm": value 1 not in [one_shot two_shot]'),
])
def test_check_config(config, want):
    assert check_config(PARAMS, config) == want


def test_config_string_and_proto_round_trip():
    c = {"chunk": 4096, "algorithm": "two_shot"}
    assert config_string(c) == "algorithm=two_shot,chunk=4096"
    assert config_from_proto(config_to_proto(c)) == c
    with pytest.raises(TypeError):
        config_to_proto({"flag": True})


class Kernel:
    def __init__(self, params, default):
        self.params, self.default = params, default

    def describe(self):
        return Description("k", "v1", ["n"], ["f32"], self.params, self.default)


def test_a_default_outside_the_space_stops_the_plugin():
    with pytest.raises(ValueError, match='default config: parameter "chunk": value 8 not in'):
        KernelServicer(Kernel(PARAMS, {"algorithm": "one_shot", "chunk": 8}), [])


def test_values_the_protocol_cannot_carry_stop_the_plugin():
    with pytest.raises(TypeError, match="want int or str"):
        KernelServicer(Kernel([Param("p", [1.5])], {"p": 1.5}), [])


class NamedBackend:
    def __init__(self, name):
        self.name = name


def test_validate_turns_down_a_backend_the_plugin_does_not_serve():
    from symmtune.plugin.server import pb

    class Checked(Kernel):
        def validate(self, config, problem, world, backend):
            return None

    s = KernelServicer(Checked(PARAMS, {"algorithm": "one_shot", "chunk": 1024}), [NamedBackend("cpu")])
    cfg = config_to_proto({"algorithm": "one_shot", "chunk": 1024})
    problem = pb.Problem(shape={"n": 4096}, dtype="f32")
    assert s.Validate(pb.ValidateRequest(config=cfg, problem=problem, world=2, backend="cpu"), None).ok
    v = s.Validate(pb.ValidateRequest(config=cfg, problem=problem, world=2, backend="cuda"), None)
    assert not v.ok and v.reason == 'plugin k has no "cuda" backend (it has [cpu])'


class Picky(Kernel):
    """Turns down chunk 4096 on fewer than 8192 elements, and raises on two_shot."""

    def validate(self, config, problem, world, backend):
        if config["algorithm"] == "two_shot":
            raise RuntimeError("two_shot is broken")
        if config["chunk"] == 4096 and problem.shape["n"] < 8192:
            return "chunk 4096 needs 8192 elements"
        return None


@pytest.mark.parametrize("n,backend,want_ok", [
    (4096, "cpu", [True, False, False, False, True]),
    (16384, "cpu", [True, True, False, False, True]),
    (16384, "cuda", [False, False, False, False, False]),
])
def test_validate_batch_answers_as_validate(n, backend, want_ok):
    from symmtune.plugin.server import pb

    s = KernelServicer(Picky(PARAMS, {"algorithm": "one_shot", "chunk": 1024}), [NamedBackend("cpu")])
    configs = [config_to_proto(c) for c in [
        {"algorithm": "one_shot", "chunk": 1024}, {"algorithm": "one_shot", "chunk": 4096},
        {"algorithm": "two_shot", "chunk": 1024}, {"algorithm": "one_shot", "chunk": 3},
        {"algorithm": "one_shot", "chunk": 1024},
    ]]
    problem = pb.Problem(shape={"n": n}, dtype="f32")
    got = s.ValidateBatch(pb.ValidateBatchRequest(configs=configs, problem=problem, world=2, backend=backend), None)
    assert [r.ok for r in got.results] == want_ok
    for cfg, r in zip(configs, got.results):
        one = s.Validate(pb.ValidateRequest(config=cfg, problem=problem, world=2, backend=backend), None)
        assert (r.ok, r.reason) == (one.ok, one.reason)
        assert r.ok or r.reason


class _Aborted(Exception):
    pass


class _Context:
    """A grpc.ServicerContext's part the Bench handler uses."""

    def is_active(self) -> bool:
        return True

    def abort(self, code, details):
        raise _Aborted(details)


def test_bench_sees_the_timing_the_host_asked_for():
    """Bench hands the instance the request's timing (bench_timing(), as the
    Go SDK's sdk.TimingOf), "" outside a bench, and refuses a timing it does
    not know before the instance runs."""
    from symmtune.plugin import bench_timing
    from symmtune.plugin.server import pb

    asked: list[str] = []

    class Instance:
        def bench(self, config, warmup, iters):
            asked.append(bench_timing())
            return [1.0] * iters

    s = KernelServicer(Kernel(PARAMS, {"algorithm": "one_shot", "chunk": 1024}), [])
    s._instance = Instance()  # as Setup and Connect leave it
    cfg = config_to_proto({"algorithm": "one_shot", "chunk": 1024})
    for timing in ("", "loaded"):
        got = s.Bench(pb.BenchRequest(config=cfg, warmup=1, iters=2, timing=timing), _Context())
        assert list(got.times_us) == [1.0, 1.0]
    assert asked == ["", "loaded"]
    assert bench_timing() == ""
    with pytest.raises(_Aborted, match="timing 'stream'"):
        s.Bench(pb.BenchRequest(config=cfg, warmup=1, iters=2, timing="stream"), _Context())
    assert asked == ["", "loaded"]
