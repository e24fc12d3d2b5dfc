"""bench/experiments/ncu_sass.py sums Nsight Compute's per-instruction warp samples by
part of the kernel: a GPU session reads its totals to tell the main loop's
cost from the epilogue's, so the grouping is checked here on a small page
in ncu's layout."""

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "experiments"))
import ncu_sass  # noqa: E402

HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Warp Stall Sampling (Not-issued Samples)",
          "Instructions Executed", "stall_barrier", "stall_long_sb", "stall_barrier (Not Issued)"]


@pytest.fixture
def page(tmp_path: Path) -> Path:
    rows = [
        ["0x10", "LDC R1, c[0x0][0x28]", "2", "2", "132", "0", "0", "0"],
        ["0x20", "HGMMA.64x256x16.F32.BF16 R24, gdesc[UR20], R24", "40", "30", "917504", "0", "0", "0"],
        ["0x30", "WARPGROUP.DEPBAR.LE gsb0, 0x1", "500", "480", "917504", "470", "0", "470"],
        ["0x40", "STG.E.128 desc[UR10][R10.64], R20", "30", "20", "7168", "0", "25", "0"],
        ["0x50", "F2FP.BF16.F32.PACK_AB R4, R5, R4", "28", "10", "7168", "0", "0", "0"],
        ["0x60", "EXIT", "", "", "0", "", "", ""],
        ["0x70", "BRA 0x70"],  # a short row, as ncu writes for unreached code
    ]
    p = tmp_path / "sass.csv"
    with open(p, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(["Kernel Name", "hopper_gemm"])
        w.writerow(HEADER)
        w.writerows(rows)
    return p


def test_groups_by_execution_count(page: Path) -> None:
    instrs = ncu_sass.read(str(page))
    assert [x.executed for x in instrs] == [132, 917504, 917504, 7168, 7168, 0]
    # The main loop's two instructions, then the epilogue's two, then the setup.
    assert ncu_sass.by_executed(instrs)[:3] == [(917504, 2, 540), (7168, 2, 58), (132, 1, 2)]
    assert ncu_sass.by_reason(instrs) == [("barrier", 470), ("long_sb", 25)]


def test_report_shares(page: Path) -> None:
    text = ncu_sass.report(ncu_sass.read(str(page)), top=2)
    assert text.startswith("600 samples over 6 instructions")
    assert "executed     917504      2 instructions   90.0%" in text
    assert "executed       7168      2 instructions    9.7%" in text
    top = text.split("top 2 instructions:\n")[1].splitlines()
    assert len(top) == 2 and "WARPGROUP.DEPBAR" in top[0] and "barrier 470" in top[0]


def test_rejects_other_pages(tmp_path: Path) -> None:
    p = tmp_path / "details.csv"
    p.write_text('"ID","Kernel Name"\n"0","hopper_gemm"\n')
    with pytest.raises(ValueError, match="not an ncu SASS source page"):
        ncu_sass.read(str(p))
