"""Per shape, each tile's ratio to cuBLASLt (geometric mean of its rounds) and to the default tile; fused rows and worst rel_err."""
import csv, glob, math, sys
from collections import defaultdict
rows = defaultdict(lambda: defaultdict(list))
nf, worst, wrong = 0, 0.0, 0
# The run folders' prefix: orows* (this screen), or one given (another screen of the same tiles).
prefix = sys.argv[1] if len(sys.argv) > 1 else "orows*"
for f in sorted(glob.glob(prefix + "/t*/gemmalone-56/gemmalone-*.csv")):
    lines = [l for l in open(f) if not l.startswith('#')]
    for r in csv.DictReader(lines):
        if r["shape"] == "shape" or r["impl"] != "fused":
            continue
        nf += 1
        e = float(r["rel_err"]); worst = max(worst, e)
        if "WRONG" in ",".join(r.values()):
            wrong += 1
        ratio = r["ratio_to_cublaslt_fp8"] if r["dtype"].startswith("e4m3") else r["ratio_to_cublaslt"]
        rows[(r["dtype"], r["shape"])][r["config"]].append(float(ratio.split()[0]))
print(f"fused rows {nf}, worst rel_err {worst:.2e}, wrong {wrong}")
tiles = ["128x128:s6:c2:g4:pp", "128x256:s4:c2:g8", "128x224:s5:c2:g16", "128x160:s6:c2:g8"]
print("| dtype | shape | " + " | ".join(tiles) + " | best over default |")
print("|---|---|" + "---|" * len(tiles) + "---|")
def key(k):
    d, s = k; m, n, kk = map(int, s.split('x')); return (d, m, n, kk)
for k in sorted(rows, key=key):
    g = {t: math.exp(sum(map(math.log, v)) / len(v)) for t, v in rows[k].items()}
    d = g[tiles[0]]
    best = max(g, key=g.get)
    cells = [f"{g[t]:.3f} ({g[t]/d:.3f})" for t in tiles]
    print(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + f" | {best} {g[best]/d:.3f} |")
