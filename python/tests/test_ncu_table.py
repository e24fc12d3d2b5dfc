"""bench/ncu_table.py reads Nsight Compute's raw page (ncu --import R --page
raw --csv: a header row, a row of units, one row per launch, numbers with
thousands separators) and bin/gemmalone's '# profiled' lines, and says what
limits each kernel: checked here on a small page in ncu's layout, since the
GPU session that writes the real ones has one device call."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import ncu_table  # noqa: E402

INFO = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
        "Grid Size", "Device", "CC"]
METRICS = [("dram__bytes_read.sum", "Mbyte"), ("dram__bytes_write.sum", "Kbyte"),
           ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "%"), ("gpu__time_duration.sum", "usecond"),
           ("launch__grid_size", ""), ("launch__registers_per_thread", "register/thread"),
           ("launch__shared_mem_per_block_dynamic", "Kbyte/block"), ("lts__t_sector_hit_rate.pct", "%"),
           ("sm__cycles_active.avg", "cycle"), ("sm__cycles_elapsed.avg", "cycle"),
           ("sm__cycles_elapsed.avg.per_second", "Ghz"),
           ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "%"),
           ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "%"),
           ("sm__warps_active.avg.pct_of_peak_sustained_active", "%"),
           ("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "inst"),
           ("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "inst"),
           ("smsp__average_warps_issue_stalled_selected_per_issue_active.ratio", "inst"),
           ("smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio", "inst"),
           ("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "inst")]


def q(cells) -> str:
    return ",".join(f'"{c}"' for c in cells)


def launch(i: int, name: str, grid: str, us: str, dram_mb: str, active: str, tensor: str) -> str:
    values = {"dram__bytes_read.sum": dram_mb, "dram__bytes_write.sum": "1,835.01",
              "dram__throughput.avg.pct_of_peak_sustained_elapsed": "71.20", "gpu__time_duration.sum": us,
              "launch__grid_size": "132", "launch__registers_per_thread": "168",
              "launch__shared_mem_per_block_dynamic": "197.63", "lts__t_sector_hit_rate.pct": "42.10",
              "sm__cycles_active.avg": active, "sm__cycles_elapsed.avg": "100,000",
              "sm__cycles_elapsed.avg.per_second": "1.75",
              "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": tensor,
              "sm__throughput.avg.pct_of_peak_sustained_elapsed": "30.5",
              "sm__warps_active.avg.pct_of_peak_sustained_active": "18.75",
              "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "0.50",
              "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "2.25",
              "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio": "9.00",
              "smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio": "1.50",
              "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": "1.00"}
    return q([str(i), "4242", "gemmalone", "127.0.0.1", name, "1", "13", "(384, 1, 1)", grid, "0", "9.0"] +
             [values[m] for m, _ in METRICS])


LT = "nvjet_sm90_tst_64x128_64x8_2x1_v_bz_NNN"
PAGE = "\n".join([
    "==PROF== Connected to process 4242 (/tmp/bin/gemmalone)",
    q(INFO + [m for m, _ in METRICS]),
    q([""] * len(INFO) + [u for _, u in METRICS]),
    launch(0, LT, "(1, 132, 1)", "32.10", "119.80", "97,000", "61.0"),
    launch(1, LT, "(1, 132, 1)", "31.90", "119.90", "97,000", "61.2"),
    launch(2, "hopper_gemm", "(132, 1, 1)", "34.00", "120.00", "80,000", "70.0"),
    launch(3, "hopper_gemm", "(132, 1, 1)", "34.00", "120.00", "80,000", "70.0"),
    "==PROF== Disconnected from process 4242",
]) + "\n"

GEMMALONE = """\
==PROF== Connected to process 4242 (/tmp/bin/gemmalone)
# NVIDIA H200, 132 SMs, bf16, 5 timed calls after 2 warm-up (median), extra options [], beside 0 MiB copied
shape,impl,config,spill_bytes,rel_err,us,tflops,ratio_to_cublaslt,dtype,cublaslt_fp8_us,ratio_to_cublaslt_fp8
64x14336x4096,cublaslt,algo0,-,1.66e-03,31.0,242,-,bf16,-,-
64x14336x4096,cublaslt,algo1,-,1.66e-03,33.0,228,-,bf16,-,-
# profiled 64x14336x4096 cublaslt algo0: 2 launches
# default 64x14336x4096 bf16: 64x128:s6:c2:g8:pp
# profiled 64x14336x4096 fused 64x128:s6:c2:g8:pp: 2 launches
64x14336x4096,fused,64x128:s6:c2:g8:pp,0,1.66e-03,33.5,224,0.925 (cublaslt algo0 31.0/31.0; grid 132),bf16,-,-
"""


def test_units_and_numbers():
    assert ncu_table.unit_scale("usecond") == ("second", 1e-6)
    assert ncu_table.unit_scale("Gbyte/second") == ("byte/second", 1e9)
    # ncu 2025+ (the H200's, 2026-12-02) writes short units on the raw page.
    assert ncu_table.unit_scale("us") == ("second", 1e-6)
    assert ncu_table.unit_scale("ms") == ("second", 1e-3)
    assert ncu_table.unit_scale("Gbyte/s") == ("byte/second", 1e9)
    assert ncu_table.unit_scale("Kbyte") == ("byte", 1e3)
    assert ncu_table.unit_scale("Ghz") == ("hz", 1e9)
    assert ncu_table.unit_scale("Kbyte/block") == ("byte/block", 1e3)
    assert ncu_table.unit_scale("%") == ("%", 1.0)
    assert ncu_table.number("119,800.00") == 119800.0 and ncu_table.number("n/a") is None


def test_read_raw_page():
    launches = ncu_table.read_raw(PAGE)
    assert [x["Kernel Name"] for x in launches] == [LT, LT, "hopper_gemm", "hopper_gemm"]
    first = launches[0]
    assert first["gpu__time_duration.sum"] == pytest.approx(32.1e-6)
    assert first["dram__bytes_read.sum"] == pytest.approx(119.8e6)
    assert first["launch__shared_mem_per_block_dynamic"] == pytest.approx(197630)
    assert first["sm__cycles_elapsed.avg.per_second"] == pytest.approx(1.75e9)
    assert first["Grid Size"] == "(1, 132, 1)"
    with pytest.raises(ValueError, match="not an ncu raw page"):
        ncu_table.read_raw("==PROF== nothing profiled\n")


def test_kernels_labels_and_limits():
    gl = ncu_table.Gemmalone().read(GEMMALONE)
    assert gl.profiled["64x14336x4096"] == [("cublaslt", "algo0", 2), ("fused", "64x128:s6:c2:g8:pp", 2)]
    ks = ncu_table.kernels_of("64x14336x4096", ncu_table.read_raw(PAGE), gl)
    assert [(k.label, k.n) for k in ks] == [("cuBLASLt algo0", 2), ("ours `64x128:s6:c2:g8:pp`", 2)]
    lt, ours = ks
    assert lt.us == pytest.approx(32.0) and lt.timed_us == 31.0 and ours.timed_us == 33.5
    assert ours.active_share == pytest.approx(0.8) and ours.tensor == pytest.approx(70.0)
    # 121.7 MB in 32 µs: 3.8 TB/s, 79% of 4.8 TB/s.
    assert lt.dram_gbs == pytest.approx(121.685e6 / 32e-6 / 1e9)
    assert lt.limit() == "memory" and ours.limit() == "memory"
    assert [r for r, _ in ours.stalls()] == ["long_scoreboard", "sleeping", "wait"]  # "selected" is no stall
    # 64 x 128 tiles: 112 output tiles, 0.85 of a wave on 132 SMs.
    assert ncu_table.tiles_per_sm((64, 14336, 4096), ours.tile, 132) == (112, pytest.approx(112 / 132))


def test_fp8_reference():
    # gemmalone -fp8-ref-only: cuBLASLt's FP8 product is the reference profiled beside ours.
    text = GEMMALONE.replace("cublaslt,algo", "cublaslt-fp8,algo").replace("x4096 cublaslt algo0", "x4096 cublaslt-fp8 algo0")
    gl = ncu_table.Gemmalone().read(text)
    assert gl.profiled["64x14336x4096"][0] == ("cublaslt-fp8", "algo0", 2)
    lt, ours = ncu_table.kernels_of("64x14336x4096", ncu_table.read_raw(PAGE), gl)
    assert (lt.label, lt.timed_us, ours.timed_us) == ("cuBLASLt algo0", 31.0, 33.5)


def test_limit_rule_order():
    def kern(**m: float) -> "ncu_table.Kernel":
        base = {"gpu__time_duration.sum": 1e-3, "dram__bytes_read.sum": 1e9, "dram__bytes_write.sum": 0.0,
                "sm__cycles_elapsed.avg": 100.0}
        return ncu_table.Kernel("k", "k", [{**base, **m}])
    hmma = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
    assert kern(**{hmma: 97.0, "sm__cycles_active.avg": 95.0}).limit() == "tensor"
    assert kern(**{hmma: 97.0, "sm__cycles_active.avg": 80.0}).limit() == "tail"
    assert kern(**{hmma: 70.0, "sm__cycles_active.avg": 95.0}).limit() == "latency"
    assert kern(**{hmma: 97.0, "sm__cycles_active.avg": 95.0, "dram__bytes_read.sum": 4e9}).limit() == "memory"


@pytest.mark.parametrize("attrs, peak, limit", [
    # An H100 SXM's page: 5,120 bits at 2,619,000 kHz, 3,352 GB/s; 2.8 TB/s is 84% of it.
    ({"device__attribute_global_memory_bus_width": 5120.0, "device__attribute_memory_clock_rate": 2.619e6},
     3352.32, "memory"),
    # A page without them: the H200's 4.8 TB/s, of which 2.8 TB/s is 58%.
    ({}, 4800.0, "tensor"),
])
def test_dram_peak_is_the_cards(attrs, peak, limit):
    m = {"gpu__time_duration.sum": 1e-3, "dram__bytes_read.sum": 2.8e9, "dram__bytes_write.sum": 0.0,
         "sm__cycles_elapsed.avg": 100.0, "sm__cycles_active.avg": 95.0,
         "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": 97.0, **attrs}
    k = ncu_table.Kernel("k", "k", [m])
    assert k.dram_peak_gbs == pytest.approx(peak)
    assert k.limit() == limit


def test_cycles_and_clock():
    def kern(cycles: float, ghz: float) -> "ncu_table.Kernel":
        return ncu_table.Kernel("k", "k", [{"sm__cycles_elapsed.avg": cycles,
                                            "sm__cycles_elapsed.avg.per_second": ghz * 1e9}])
    # cuBLASLt 4.27M cycles at 1.58 GHz, ours 4.24M at 1.44: fewer cycles, a lower clock.
    assert ncu_table.cycles_and_clock(kern(4.24e6, 1.44), kern(4.27e6, 1.58)) == "1.007 × 0.911"
    assert ncu_table.cycles_and_clock(None, kern(1, 1)) == "-"
    assert ncu_table.cycles_and_clock(ncu_table.Kernel("k", "k", [{"sm__cycles_elapsed.avg": 1.0}]), kern(1, 1)) == "-"


def test_markdown(tmp_path: Path, capsys):
    raw, log = tmp_path / "ncu-64x14336x4096.csv", tmp_path / "gemmalone.csv"
    raw.write_text(PAGE)
    log.write_text(GEMMALONE)
    assert ncu_table.main(["--gemmalone", str(log), str(raw)]) == 0
    out = capsys.readouterr().out
    # cuBLASLt 32.0 µs / ours 34.0 µs; 7.52 GFLOP in 34 µs: 221 TFLOP/s, 22% of 989.4.
    assert "| 64x14336x4096 | `64x128:s6:c2:g8:pp` | 0.941 | 221 (22%) | memory | 235 (24%) | memory | 70.0 / 61.1 " \
        "| 80.0 / 97.0 |" in out, out
    assert f"| cuBLASLt algo0 `{LT}` | 32.0 (31.0) | 235 | 24% | 1.75 |" in out, out
    assert ("| 168, 193 | (132,1,1) x (384,1,1) (112, 0.85) | long_scoreboard 2.2, sleeping 1.5, wait 1.0 "
            "| memory |") in out, out
    assert "DRAM 4.80 TB/s." in out, out  # the page has no device attributes
