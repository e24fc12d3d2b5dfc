"""symmtune.lookup through libsymmtune: the rules' cases (those of
cache/lookup_test.go), the driver rule, the answers of the Go CLI's
`symmtune lookup --json` on the same cache file, and the failures."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest
from pathlib import Path

import symmtune
from symmtune import CacheError, NoTunedConfig, cache
from conftest import PYTHON_DIR, has_libcuda
from symmtune.hardware import Fingerprint, HardwareError

T0 = dt.datetime(2026, 11, 21, 18, 40, tzinfo=dt.timezone.utc)
CPU = Fingerprint(kind="cpu", name="AMD EPYC 7B13", count=1, cores=2, interconnect="shm")
GPU = Fingerprint(kind="gpu", name="NVIDIA H200", count=4, sms=132, memory_mib=143771, compute="9.0",
                  driver="580.95.05", interconnect="NVLink x18")


def toml_value(v) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, dt.datetime):
        return v.strftime("%Y-%m-%dT%H:%M:%SZ")
    return repr(v)


def write_cache(path, entries: list[dict]) -> str:
    lines = ["version = 1"]
    for e in entries:
        lines.append("[[entry]]")
        for k, v in e.items():
            if isinstance(v, dict):
                inner = ", ".join(f"{json.dumps(a)} = {toml_value(b)}" for a, b in v.items())
                lines.append(f"{k} = {{ {inner} }}")
            else:
                lines.append(f"{k} = {toml_value(v)}")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def entry(n: int | None, tag: str, hw: Fingerprint = CPU, **kw) -> dict:
    e = {"kernel": "allreduce", "kernel_version": "3f2a9c1e", "backend": "cpu" if hw.kind == "cpu" else "cuda",
         "hardware": hw.id(), "world": 4, "dtype": "f32", "shape": {"n": n}, "config": {"tag": tag},
         "median_us": 812.4, "min_us": 790.1, "p90_us": 850.0, "default_median_us": 1204.9, "trials": 36,
         "tuned_at": T0}
    e.update(kw)
    e["hardware_info"] = hw.as_dict()
    return e


@pytest.fixture()
def store(tmp_path) -> str:
    at = lambda h: T0 + dt.timedelta(hours=h)  # noqa: E731
    return write_cache(tmp_path / "c.toml", [
        entry(1024, "n1k"), entry(4096, "n4k"), entry(1 << 20, "n1m"),
        entry(4096, "n4k-gpu", GPU, tuned_at=at(5)),
        entry(4096, "n4k-v2", tuned_at=at(3), kernel_version="v2"),
        entry(3000, "w8", world=8), entry(3000, "bf16", dtype="bf16"),
        entry(None, "g-64x64", kernel="gemm", shape={"m": 64, "n": 64}),
        entry(None, "g-1024x16", kernel="gemm", shape={"m": 1024, "n": 16}),
        entry(None, "g-256x256", kernel="gemm", shape={"m": 256, "n": 256}),
        entry(None, "t-old", kernel="tie", shape={"n": 1024}, tuned_at=at(0)),
        entry(None, "t-new", kernel="tie", shape={"n": 4096}, tuned_at=at(1)),
        entry(None, "s-a", kernel="same", shape={"n": 1024}),
        entry(None, "s-b", kernel="same", shape={"n": 4096}),
    ])


EXACT_CPU: dict[str, Any] = {"kernel_version": "3f2a9c1e", "backend": "cpu", "hardware": CPU}
ANY: dict[str, Any] = {"kernel_version": None, "backend": None, "hardware": "any"}


@pytest.mark.parametrize("name,kernel,world,dtype,shape,filters,want_tag,want_exact", [
    ("exact", "allreduce", 4, "f32", {"n": 4096}, EXACT_CPU, "n4k", True),
    ("exact other end", "allreduce", 4, "f32", {"n": 1 << 20}, EXACT_CPU, "n1m", True),
    ("optional omitted: newest exact", "allreduce", 4, "f32", {"n": 4096}, ANY, "n4k-gpu", True),
    ("backend only", "allreduce", 4, "f32", {"n": 4096}, {**ANY, "backend": "cpu"}, "n4k-v2", True),
    ("hardware only", "allreduce", 4, "f32", {"n": 4096}, {**ANY, "hardware": CPU}, "n4k-v2", True),
    ("version only", "allreduce", 4, "f32", {"n": 4096}, {**ANY, "kernel_version": "3f2a9c1e"}, "n4k-gpu", True),
    ("gpu hardware", "allreduce", 4, "f32", {"n": 4096}, {**EXACT_CPU, "backend": "cuda", "hardware": GPU}, "n4k-gpu", True),
    ("nearest below", "allreduce", 4, "f32", {"n": 2000}, EXACT_CPU, "n1k", False),
    ("nearest above", "allreduce", 4, "f32", {"n": 2100}, EXACT_CPU, "n4k", False),
    ("nearest far", "allreduce", 4, "f32", {"n": 1 << 30}, EXACT_CPU, "n1m", False),
    ("nearest tiny", "allreduce", 4, "f32", {"n": 1}, EXACT_CPU, "n1k", False),
    ("nearest log not linear", "allreduce", 4, "f32", {"n": 200000}, EXACT_CPU, "n1m", False),
    ("unknown version", "allreduce", 4, "f32", {"n": 4096}, {**EXACT_CPU, "kernel_version": "zzz"}, None, False),
    ("unknown hardware", "allreduce", 4, "f32", {"n": 4096},
     {**EXACT_CPU, "hardware": Fingerprint(kind="cpu", name="other", cores=2)}, None, False),
    ("unknown backend", "allreduce", 4, "f32", {"n": 4096}, {**EXACT_CPU, "backend": "rocm"}, None, False),
    ("other dims never", "allreduce", 4, "f32", {"m": 4096}, EXACT_CPU, None, False),
    ("extra dim never", "allreduce", 4, "f32", {"n": 4096, "m": 1}, EXACT_CPU, None, False),
    ("world 8 exact", "allreduce", 8, "f32", {"n": 3000}, EXACT_CPU, "w8", True),
    ("world 2 never", "allreduce", 2, "f32", {"n": 3000}, EXACT_CPU, None, False),
    ("dtype f16 never", "allreduce", 4, "f16", {"n": 3000}, EXACT_CPU, None, False),
    ("dtype bf16 only itself", "allreduce", 4, "bf16", {"n": 4096}, EXACT_CPU, "bf16", False),
    ("unknown kernel", "nope", 4, "f32", {"n": 4096}, EXACT_CPU, None, False),
    ("2d exact", "gemm", 4, "f32", {"m": 64, "n": 64}, ANY, "g-64x64", True),
    ("2d tie by key", "gemm", 4, "f32", {"m": 128, "n": 128}, ANY, "g-256x256", False),
    ("2d sum of dims", "gemm", 4, "f32", {"m": 2048, "n": 16}, ANY, "g-1024x16", False),
    ("2d needs both dims", "gemm", 4, "f32", {"m": 64}, ANY, None, False),
    ("tie newest wins", "tie", 4, "f32", {"n": 2048}, ANY, "t-new", False),
    ("tie key wins", "same", 4, "f32", {"n": 2048}, ANY, "s-a", False),
])
def test_lookup(store, name, kernel, world, dtype, shape, filters, want_tag, want_exact):
    if want_tag is None:
        with pytest.raises(NoTunedConfig, match="no tuned config"):
            symmtune.lookup(kernel, world, dtype, shape, cache=store, **filters)
        return
    m = symmtune.lookup(kernel, world, dtype, shape, cache=store, **filters)
    assert (m.config["tag"], m.exact, m.other_driver) == (want_tag, want_exact, False)


def test_match_carries_the_entry_and_prints_like_the_cli(store):
    m = symmtune.lookup("allreduce", 4, "f32", {"n": 4096}, cache=store, **EXACT_CPU)
    e = m.entry
    assert (e.median_us, e.min_us, e.p90_us, e.default_median_us, e.trials) == (812.4, 790.1, 850.0, 1204.9, 36)
    assert e.tuned_at == T0 and e.hardware_info == CPU
    j = m.to_json()
    assert j["tuned_at"] == "2026-11-21T18:40:00Z" and j["shape"] == {"n": 4096} and j["other_driver"] is False
    assert set(j) == {"exact", "other_driver", "kernel", "kernel_version", "backend", "hardware", "world", "dtype",
                      "shape", "config", "median_us", "min_us", "p90_us", "default_median_us", "trials", "tuned_at"}


def drv(d: str, **kw) -> Fingerprint:
    fields: dict[str, Any] = {**GPU.as_dict(), "driver": d, **kw}
    return Fingerprint(**fields)


@pytest.fixture()
def gpu_store(tmp_path) -> str:
    older, newer = drv("570.10.01"), drv("590.01.02")
    return write_cache(tmp_path / "g.toml", [
        entry(4096, "old-4k", older),
        entry(4096, "new-4k", newer, tuned_at=T0 + dt.timedelta(hours=1)),
        entry(1 << 20, "old-1m", older),
        entry(65536, "own-64k", GPU),
        entry(8192, "h100", drv("570.10.01", name="NVIDIA H100 80GB HBM3", memory_mib=81559), dtype="bf16"),
        entry(8192, "pcie", drv("570.10.01", interconnect="PCIe"), dtype="bf16"),
        entry(8192, "sms", drv("570.10.01", sms=114), dtype="bf16"),
        entry(8192, "mem", drv("570.10.01", memory_mib=97871), dtype="bf16"),
    ])


@pytest.mark.parametrize("name,hw,n,dtype,want", [
    ("own fingerprint first, even at a farther shape", GPU, 4096, "f32", ("own-64k", False, False)),
    ("own exact", GPU, 65536, "f32", ("own-64k", True, False)),
    ("other driver: newest of the equally near", drv("600.00.00"), 4096, "f32", ("new-4k", True, True)),
    ("other driver: nearest shape", drv("600.00.00"), 1 << 19, "f32", ("old-1m", False, True)),
    ("own again after an upgrade to a tuned driver", drv("570.10.01"), 4096, "f32", ("old-4k", True, False)),
    ("another GPU never", drv("580.95.05", name="NVIDIA H20"), 8192, "bf16", None),
    ("another topology never", drv("580.95.05", interconnect="NVLink x12"), 8192, "bf16", None),
    ("another count never", drv("580.95.05", count=8), 4096, "f32", None),
])
def test_driver_upgrade_keeps_tuning(gpu_store, name, hw, n, dtype, want):
    kw = {"backend": "cuda", "kernel_version": "3f2a9c1e", "hardware": hw, "cache": gpu_store}
    if want is None:
        with pytest.raises(NoTunedConfig):
            symmtune.lookup("allreduce", hw.count, dtype, {"n": n}, **kw)
        return
    m = symmtune.lookup("allreduce", 4, dtype, {"n": n}, **kw)
    assert (m.config["tag"], m.exact, m.other_driver) == want
    if m.other_driver:
        assert m.entry.hardware_info.driver != hw.driver and m.to_json()["other_driver"] is True


def test_no_cache_is_a_clear_exception(tmp_path):
    with pytest.raises(NoTunedConfig, match="does not exist"):
        symmtune.lookup("allreduce", 4, "f32", {"n": 4096}, cache=tmp_path / "none.toml", hardware="any")


@pytest.mark.parametrize("text,match", [
    ("version = 1\n[[entry]\n", r"c.toml: line \d+: expected"),
    ("version = 2\n", "format version 2 is not supported"),
    ('version = 1\ncolour = "red"\n', 'unknown key "colour"'),
    ('[[entry]]\nkernel = "k"\nworld = 2\ndtype = "f32"\nshape = { n = 8 }\n', "no format version"),
])
def test_corrupt_cache_is_a_clear_exception(tmp_path, text, match):
    p = tmp_path / "c.toml"
    p.write_text(text)
    with pytest.raises(CacheError, match=match) as err:
        symmtune.lookup("k", 2, "f32", {"n": 8}, cache=p, hardware="any")
    assert str(p) in str(err.value)
    with pytest.raises(CacheError, match=match):
        symmtune.load(p)


def test_damaged_entry_is_a_warning_and_skipped(tmp_path, store):
    """One damaged entry never stops the other lookups: it is skipped with a
    CacheWarning naming its line (issue 55)."""
    p = tmp_path / "d.toml"
    good = Path(store).read_text()
    p.write_text(good + '\n[[entry]]\nkernel = "k"\nworld = "two"\n')
    line = good.count("\n") + 4
    with pytest.warns(symmtune.CacheWarning, match=rf"d.toml: line {line}: entry.world"):
        entries = symmtune.load(p)
    assert len(entries) == len(symmtune.load(store))
    with pytest.warns(symmtune.CacheWarning, match=rf"d.toml: line {line}: entry.world"):
        m = symmtune.lookup("allreduce", 4, "f32", {"n": 4096}, backend="cpu", cache=p, hardware=CPU,
                            kernel_version="3f2a9c1e")
    assert m.config["tag"] == "n4k"
    with pytest.raises(NoTunedConfig, match="1 damaged entries were skipped"):
        symmtune.lookup("k", 2, "f32", {"n": 8}, cache=p, hardware="any")


@pytest.mark.parametrize("shape,world,says", [
    ({}, 4, "shape"),
    ({"n": 0}, 4, 'dimension "n" = 0'),
    ({"n": "8"}, 4, "shape: want an integer, got a string"),
    ({"n": 8.5}, 4, "shape: want an integer, got 8.5"),
    ([8], 4, "shape: want an object of integers, got a list"),
    ({"n": 8}, 0, "world size 0"),
    ({"n": 8}, "4", "world: want an integer, got a string"),
])
def test_bad_query_is_a_value_error_naming_the_argument(store, shape, world, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        symmtune.lookup("allreduce", world, "f32", shape, cache=store, hardware="any")


def test_bad_hardware_argument(store):
    with pytest.raises(TypeError, match="want a Fingerprint"):
        symmtune.lookup("allreduce", 4, "f32", {"n": 8}, cache=store, hardware="all")
    with pytest.raises(ValueError, match="name one"):
        symmtune.lookup("allreduce", 4, "f32", {"n": 8}, cache=store, backend=None)


@pytest.mark.skipif(has_libcuda(), reason="this machine has a CUDA driver")
def test_gpu_lookup_needs_gpus(store):
    with pytest.raises(HardwareError, match="libcuda.so.1"):
        symmtune.lookup("allreduce", 4, "f32", {"n": 4096}, cache=store)


def test_this_machine_cpu(tmp_path):
    here = symmtune.hardware.cpu()
    path = write_cache(tmp_path / "c.toml", [entry(1024, "here", here)])
    m = symmtune.lookup("allreduce", 4, "f32", {"n": 4096}, backend="cpu", cache=path)
    assert (m.config["tag"], m.exact) == ("here", False)


CLI_QUERIES = [("allreduce", 4, "f32", "n=4096"), ("allreduce", 4, "f32", "n=200000"), ("gemm", 4, "f32", "m=128,n=128"),
               ("tie", 4, "f32", "n=2048"), ("allreduce", 4, "bf16", "n=4096"), ("nope", 4, "f32", "n=1")]


def cli_answers(symmtune_bin, location: str, env: dict | None = None) -> list:
    """`symmtune lookup --json --any-hardware` on each of CLI_QUERIES:
    the printed object, or None for exit code 3 (nothing tuned)."""
    out: list = []
    for kernel, world, dtype, shape in CLI_QUERIES:
        r = subprocess.run([str(symmtune_bin), "lookup", "--json", "--any-hardware", "--kernel", kernel, "--world",
                            str(world), "--dtype", dtype, "--shape", shape, "--cache", location],
                           capture_output=True, text=True, env=env)
        assert r.returncode in (0, 3), r.stderr
        out.append(json.loads(r.stdout) if r.returncode == 0 else None)
    return out


def lib_answers(location: str) -> list:
    """symmtune.lookup's to_json() on each of CLI_QUERIES, None where
    nothing is tuned."""
    out: list = []
    for kernel, world, dtype, shape in CLI_QUERIES:
        dims = {k: int(v) for k, v in (d.split("=") for d in shape.split(","))}
        try:
            m = symmtune.lookup(kernel, world, dtype, dims, backend=None, cache=location, hardware="any")
        except NoTunedConfig:
            out.append(None)
            continue
        out.append(m.to_json())
    return out


def test_lookup_answers_as_the_cli(symmtune_bin, store):
    want = cli_answers(symmtune_bin, store)
    assert lib_answers(store) == want
    assert None in want and any(w and not w["exact"] for w in want)


def test_without_the_library_import_works_and_lookup_says_how_to_get_it(tmp_path, store):
    code = ("import symmtune\n"
            "try:\n"
            f"    symmtune.lookup('allreduce', 4, 'f32', {{'n': 8}}, cache={store!r}, hardware='any')\n"
            "except symmtune._native.NativeError as e:\n"
            "    print(e)\n")
    env = {**os.environ, "SYMMTUNE_LIB": str(tmp_path / "none.so"), "PYTHONPATH": str(PYTHON_DIR)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert "does not exist" in r.stdout and "make lib" in r.stdout and "SYMMTUNE_LIB" in r.stdout


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.setenv("SYMMTUNE_CACHE", "/x/c.toml")
    assert cache.default_path() == "/x/c.toml"
    monkeypatch.delenv("SYMMTUNE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert cache.default_path() == "/xdg/symmtune/configs.toml"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.default_path() == str(tmp_path / ".cache" / "symmtune" / "configs.toml")


def test_load_sorts_as_go(store):
    es = cache.load(store)
    keys = [(e.kernel, e.backend, e.hardware, e.world, e.dtype, cache.shape_string(e.shape)) for e in es]
    assert keys == sorted(keys)
