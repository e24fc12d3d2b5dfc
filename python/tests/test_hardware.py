"""Fingerprints through libsymmtune: the binding carries every field (the
IDs of hardware/testdata/ids.json, written and checked by hardware's Go
tests), this machine's CPU, and a clear error where there is no GPU."""

import json
import os

import pytest

from conftest import REPO, has_libcuda
from symmtune import hardware
from symmtune.hardware import Fingerprint, HardwareError

IDS = json.loads((REPO / "hardware" / "testdata" / "ids.json").read_text())


@pytest.mark.parametrize("case", IDS, ids=lambda c: c["id"] or "zero")
def test_id_matches_go(case):
    f = Fingerprint(**case["fingerprint"])
    assert f.id() == case["id"]
    assert f.without_driver().id() == case["id_without_driver"]


def test_without_driver_keeps_everything_else():
    f = Fingerprint(kind="gpu", name="NVIDIA H200", count=4, sms=132, memory_mib=143771, compute="9.0",
                    driver="580.95.05", interconnect="NVLink x18")
    g = f.without_driver()
    assert g.driver == "" and f.driver == "580.95.05"
    assert (g.kind, g.name, g.count, g.sms, g.memory_mib, g.compute, g.interconnect) == \
        (f.kind, f.name, f.count, f.sms, f.memory_mib, f.compute, f.interconnect)


def test_cpu_is_this_machine():
    f = hardware.cpu()
    assert f.kind == "cpu" and f.count == 1 and f.interconnect == "shm"
    assert f.cores == len(os.sched_getaffinity(0))
    assert f.name and f.id() == hardware.cpu().id()
    assert f.id().startswith("cpu/")


@pytest.mark.skipif(has_libcuda(), reason="this machine has a CUDA driver")
def test_cuda_without_a_driver_is_a_clear_error():
    with pytest.raises(HardwareError, match="libcuda.so.1"):
        hardware.cuda(2)


def test_for_backend():
    assert hardware.for_backend("cpu", 4) == hardware.cpu()
    with pytest.raises(ValueError, match="rocm"):
        hardware.for_backend("rocm", 4)
