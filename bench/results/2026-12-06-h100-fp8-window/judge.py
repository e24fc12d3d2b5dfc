"""The rule of run.sh (beside this), applied to its two runs: DIR/w0.2s/gemmalone-56/ and DIR/w2s/gemmalone-56/
(gemmalone-e4m3_row.csv each, two rounds a shape, the second with -kernel-outside). Prints a Markdown table a
shape and the verdicts. Written before the run; standard library only."""
import re
import statistics
import sys

ROW = re.compile(r"^(\d+x\d+x\d+),fused,[^,]*,[^,]*,([^,]*),([\d.]+),.*algo\d+ ([\d.]+)/([\d.]+)(; kernel ([\d.]+)/([\d.]+))?;")


def runs(path):
    """shape -> [round 1, round 2], each a dict: us, before, after, ratio, outside; wrong: shapes whose check failed."""
    out, wrong = {}, set()
    for line in open(path):
        if ",fused," in line and "WRONG" in line:
            wrong.add(line.split(",")[0])
            continue
        m = ROW.match(line)
        if not m:
            continue
        us, before, after = float(m.group(3)), float(m.group(4)), float(m.group(5))
        out.setdefault(m.group(1), []).append({"us": us, "before": before, "after": after,
                                                "ratio": float(line.strip().split(",")[-1]),
                                                "outside": m.group(6) is not None})
    return out, wrong


def main(d):
    short, w1 = runs(f"{d}/w0.2s/gemmalone-56/gemmalone-e4m3_row.csv")
    long_, w2 = runs(f"{d}/w2s/gemmalone-56/gemmalone-e4m3_row.csv")
    shapes = [s for s in short if s in long_ and len(short[s]) == 2 and len(long_[s]) == 2]
    print("| shape | 0.2 s: after/before (r1) | 0.2 s ratio: before only / mean (r1) / round 2 (kernel around) | "
          "2 s: after/before (r1) | 2 s ratio: r1 / r2 / mean | closer to 2 s |")
    print("|---|---|---|---|---|---|")
    ab_short, ab_long, closer = [], [], {"before only": 0, "mean": 0}
    for s in shapes:
        a, b = short[s][0], short[s][1]
        x, y = long_[s][0], long_[s][1]
        if a["outside"] or not b["outside"] or x["outside"] or not y["outside"]:
            print(f"| {s} | rounds out of order | | | | |")
            continue
        ab_short.append(a["after"] / a["before"])
        ab_long.append(x["after"] / x["before"])
        before_only = a["before"] / a["us"]
        mean_both = a["ratio"]
        target = (x["ratio"] + y["ratio"]) / 2
        pick = "before only" if abs(before_only - target) < abs(mean_both - target) else "mean"
        closer[pick] += 1
        print(f"| {s} | {ab_short[-1]:.3f} | {before_only:.3f} / {mean_both:.3f} / {b['ratio']:.3f} | {ab_long[-1]:.3f} | "
              f"{x['ratio']:.3f} / {y['ratio']:.3f} / {target:.3f} | {pick} |")
    n = len(ab_short)
    print()
    print(f"shapes {n} of 8 in both windows, wrong {len(w1 | w2)}")
    if n == 0:
        print("verdict: no shapes")
        return
    ms, ml = statistics.median(ab_short), statistics.median(ab_long)
    q1 = ms >= 1.03 and ml <= 1.01 and not (w1 | w2)
    print(f"Q1: median after/before {ms:.3f} in 0.2 s windows (rule: >= 1.03), {ml:.3f} in 2 s (rule: <= 1.01): "
          + ("a transient of short windows" if q1 else "not shown to be a transient of short windows"))
    best = max(closer, key=closer.get)
    q2 = closer[best] >= 6 and n == 8 and not (w1 | w2)
    print(f"Q2: closer to the 2 s ratio: before only on {closer['before only']}, mean on {closer['mean']} (rule: 6 of 8): "
          + (f"the row-scale count quotes the {best} bracket on this card" if q2 else "the range stays"))


if __name__ == "__main__":
    main(sys.argv[1])
