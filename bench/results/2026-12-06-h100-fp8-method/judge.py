"""The rule of check.sh (beside this), applied to its four runs: DIR/r{1,2}-{0,1}/gemmalone-56/
gemmalone-DT.csv (round, lean). Prints a Markdown table a shape and the verdict. Written before the run."""
import glob
import os
import sys


def rows(path):
    out = {}
    for line in open(path):
        c = line.strip().split(",")
        if len(c) > 10 and c[1] == "fused":
            if "WRONG" in line:
                out[c[0]] = None
            elif c[10] not in ("-", ""):
                out[c[0]] = (float(c[5]), float(c[9]), float(c[10]))  # ours µs, FP8 reference µs, ratio
    return out


def main(d):
    runs = {}
    for r in (1, 2):
        for lean in (0, 1):
            p = glob.glob(os.path.join(d, f"r{r}-{lean}", "gemmalone-56", "gemmalone-*.csv"))
            runs[(r, lean)] = rows(p[0]) if p else {}
    shapes = [s for s in runs[(1, 0)] if all(s in v for v in runs.values())]
    wrong = [s for s in shapes if any(v[s] is None for v in runs.values())]
    ok_ours, differ, ref_moves = 0, 0, 0
    print("| shape | ratio both (r1, r2) | ratio lean (r1, r2) | ours µs both / lean | FP8 ref µs both / lean | modes differ | ref moves more |")
    print("|---|---|---|---|---|---|---|")
    for s in shapes:
        if s in wrong:
            continue
        b1, b2, l1, l2 = runs[(1, 0)][s], runs[(2, 0)][s], runs[(1, 1)][s], runs[(2, 1)][s]
        ours_b, ours_l = (b1[0] + b2[0]) / 2, (l1[0] + l2[0]) / 2
        ref_b, ref_l = (b1[1] + b2[1]) / 2, (l1[1] + l2[1]) / 2
        ours_spread = max(abs(b1[0] - b2[0]), abs(l1[0] - l2[0]))
        ok_ours += abs(ours_b - ours_l) <= ours_spread
        rat_b, rat_l = (b1[2] + b2[2]) / 2, (l1[2] + l2[2]) / 2
        d = abs(rat_b - rat_l) > max(abs(b1[2] - b2[2]), abs(l1[2] - l2[2]))
        moves = abs(ref_b / ref_l - 1) > abs(ours_b / ours_l - 1)
        differ += d
        ref_moves += d and moves
        print(f"| {s} | {b1[2]:.3f}, {b2[2]:.3f} | {l1[2]:.3f}, {l2[2]:.3f} | {ours_b:.1f} / {ours_l:.1f} | "
              f"{ref_b:.1f} / {ref_l:.1f} | {'yes' if d else 'no'} | {'yes' if d and moves else '-'} |")
    n = len(shapes) - len(wrong)
    c1, c2 = not wrong and n == 12, ok_ours >= 10
    c3 = differ == 0 or ref_moves >= 0.75 * differ
    print(f"\nshapes {n} of 12 in all four runs, wrong {len(wrong)}; ours the same in both modes on {ok_ours} "
          f"(rule: 10); modes differ on {differ}, the reference moving more on {ref_moves} (rule: 3/4)")
    print("verdict: lean is the FP8 count's method" if c1 and c2 and c3 else "verdict: both modes stay")


if __name__ == "__main__":
    main(sys.argv[1])
