#!/usr/bin/env python3
"""Issue 57 diagnostic: the envelope over symmtune's strategies at a twentieth
on the 190-config synthetic landscapes (fitting seeds only).

Reads the TestFitEval logs (fiteval-RANGE.log: every strategy; knob-K-V-RANGE.log:
the bandit with one knob set) and the TestFitDifficulty logs (difficulty-RANGE.log)
in this folder; writes landscapes-RANGES.csv and prints the tables by kind.

    python3 envelope.py 1-40            # the page's main table
    python3 envelope.py 1-40 41-100 171-650
"""
import csv
import math
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
STRATS = ["auto", "bandit", "surrogate", "pattern", "nelder-mead", "random", "exhaustive"]
OTHERS = ["surrogate", "pattern", "nelder-mead", "random", "exhaustive"]  # bandit is auto here
BAR, SEEDS = 7, 10

HEAD = re.compile(r"fiteval_test\.go:\d+: (\S+)\s+1/20 1/10 3/10")
ROW = re.compile(r"^\s+(synthetic-(\w+)-(\w+)-seed(\d+))\s+(\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s*$")
DIFF = re.compile(r"^\s+(synthetic-(\w+)-(\w+)-seed(\d+))\s+(\d+)\s+(\d+)\s+[\d.]+%\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+(\d+)\s+(\d+)\s*$")


def parse_fiteval(path, rename=None):
    out = defaultdict(dict)  # strategy -> landscape -> seeds at 1/20
    cur = None
    for line in open(path):
        m = HEAD.search(line)
        if m:
            cur = rename or m.group(1)
            continue
        m = ROW.match(line)
        if m and cur:
            out[cur][m.group(1)] = int(m.group(6))
    return out


def hyper(total, hits, n):
    """1 - C(total-hits, n)/C(total, n): uniform random, without replacement."""
    if total - hits < n:
        return 1.0
    return 1 - math.comb(total - hits, n) / math.comb(total, n)


def p_at_least(k, n, p):
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def main(ranges):
    res = defaultdict(dict)
    land = {}
    for r in ranges:
        for s, d in parse_fiteval(os.path.join(HERE, f"fiteval-{r}.log")).items():
            res[s].update(d)
        for f in sorted(os.listdir(HERE)):
            m = re.match(rf"knob-(\w+)-(\d+)-{r}\.log$", f)
            if m:
                name = f"bandit {m.group(1)}={m.group(2)}"
                for s, d in parse_fiteval(os.path.join(HERE, f), rename=name).items():
                    res[s].update(d)
        for line in open(os.path.join(HERE, f"difficulty-{r}.log")):
            m = DIFF.match(line)
            if m:
                name, kind, shape, seed, valid, hits, p20 = m.group(1, 2, 3, 4, 5, 6, 7)
                valid, hits = int(valid), int(hits)
                n = (valid + 19) // 20
                p = hyper(valid, hits, n)
                assert abs(p - float(p20)) < 6e-4, (name, p, p20)  # the test's P1/20, 3 decimals
                land[name] = dict(kind=kind, shape=shape, seed=int(seed), valid=valid, hits=hits, n=n,
                                  p=p, auto_difficulty=int(m.group(9)))
    names = sorted(land, key=lambda x: (land[x]["kind"], land[x]["seed"]))
    for s in res:
        missing = set(names) - set(res[s])
        assert not missing, (s, sorted(missing)[:3])
    for x in names:
        assert res["auto"][x] == land[x]["auto_difficulty"], x
    knobs = sorted(s for s in res if s.startswith("bandit "))
    cols = STRATS + knobs
    tag = "_".join(ranges)
    with open(os.path.join(HERE, f"landscapes-{tag}.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["landscape", "kind", "seed", "valid", "hits3pct", "trials", "p_random", "random_expected_seeds",
                    "p_random_meets_bar"] + cols + ["envelope_strategies", "best_strategies", "envelope_with_knobs"])
        for x in names:
            L = land[x]
            env = max(res[s][x] for s in STRATS)
            best = "+".join(s for s in STRATS if s != "bandit" and res[s][x] == env)
            envk = max(res[s][x] for s in cols)
            w.writerow([x, L["kind"], L["seed"], L["valid"], L["hits"], L["n"], f"{L['p']:.4f}",
                        f"{SEEDS * L['p']:.2f}", f"{p_at_least(BAR, SEEDS, L['p']):.5f}"]
                       + [res[s][x] for s in cols] + [env, best, envk])

    kinds = sorted({land[x]["kind"] for x in names})
    print(f"seeds {', '.join(ranges)}: {len(names)} landscapes of at most 200 valid configs, "
          f"trials {sorted({land[x]['n'] for x in names})}, valid {sorted({land[x]['valid'] for x in names})}")
    # landscapes meeting the bar (7 of 10), by kind
    hdr = ["kind", "landscapes", "hits (median, range)", "auto", *OTHERS, "best single other",
           "envelope (strategies)", "envelope (+ knob variants)", "random uniform (expected)"]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    rows = kinds + ["all"]
    for k in rows:
        xs = [x for x in names if k == "all" or land[x]["kind"] == k]
        meet = {s: sum(res[s][x] >= BAR for x in xs) for s in cols}
        best = max(OTHERS, key=lambda s: meet[s])
        bests = [s for s in OTHERS if meet[s] == meet[best]]
        env = sum(max(res[s][x] for s in STRATS) >= BAR for x in xs)
        envk = sum(max(res[s][x] for s in cols) >= BAR for x in xs)
        rexp = sum(p_at_least(BAR, SEEDS, land[x]["p"]) for x in xs)
        hits = sorted(land[x]["hits"] for x in xs)
        med = hits[len(hits) // 2]
        print("| " + " | ".join([k, str(len(xs)), f"{med} ({hits[0]}-{hits[-1]})", str(meet["auto"]),
                                 *[str(meet[s]) for s in OTHERS], f"{'/'.join(bests)} {meet[best]}",
                                 str(env), str(envk), f"{rexp:.2f}"]) + " |")
    print()
    # runs within 3% (of 10 per landscape), by kind
    hdr = ["kind", "runs of", "auto", *OTHERS, *knobs, "random uniform (expected)"]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for k in rows:
        xs = [x for x in names if k == "all" or land[x]["kind"] == k]
        rexp = sum(SEEDS * land[x]["p"] for x in xs)
        print("| " + " | ".join([k, str(SEEDS * len(xs)), *[str(sum(res[s][x] for x in xs)) for s in ["auto", *OTHERS, *knobs]],
                                 f"{rexp:.1f}"]) + " |")
    print()
    # landscapes meeting the bar under each knob variant, by kind
    hdr = ["kind", "auto", *knobs]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for k in rows:
        xs = [x for x in names if k == "all" or land[x]["kind"] == k]
        print("| " + " | ".join([k, *[str(sum(res[s][x] >= BAR for x in xs)) for s in ["auto", *knobs]]]) + " |")
    print()
    # auto beside each other strategy or knob variant: landscapes over the bar for either
    hdr = ["kind", "auto", *[f"auto or {s} (+gained/-lost vs auto)" for s in OTHERS + knobs if s != "random"]]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for k in rows:
        xs = [x for x in names if k == "all" or land[x]["kind"] == k]
        cells = [k, str(sum(res["auto"][x] >= BAR for x in xs))]
        for s in OTHERS + knobs:
            if s == "random":
                continue
            u = sum(max(res["auto"][x], res[s][x]) >= BAR for x in xs)
            gain = sum(res[s][x] >= BAR > res["auto"][x] for x in xs)
            lost = sum(res["auto"][x] >= BAR > res[s][x] for x in xs)
            cells.append(f"{u} (+{gain}/-{lost})")
        print("| " + " | ".join(cells) + " |")
    print()
    # by hits: how the envelope follows the number of configs within 3%
    hdr = ["hits within 3%", "landscapes", "P random (1 try of n)", "auto", "envelope (strategies)", "envelope (+ knobs)", "random uniform (expected)"]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for h in sorted({land[x]["hits"] for x in names}):
        xs = [x for x in names if land[x]["hits"] == h]
        ps = sorted({round(land[x]["p"], 3) for x in xs})
        print("| " + " | ".join([str(h), str(len(xs)), "/".join(f"{p:.3f}" for p in ps),
                                 str(sum(res["auto"][x] >= BAR for x in xs)),
                                 str(sum(max(res[s][x] for s in STRATS) >= BAR for x in xs)),
                                 str(sum(max(res[s][x] for s in cols) >= BAR for x in xs)),
                                 f"{sum(p_at_least(BAR, SEEDS, land[x]['p']) for x in xs):.2f}"]) + " |")
    print()
    # distribution of seeds per landscape: deterministic (0 or 10) or not
    print("share of landscapes where a strategy scores 0 or 10 (seed-independent at this budget):")
    for s in cols:
        v = [res[s][x] for x in names]
        print(f"  {s}: {sum(a in (0, SEEDS) for a in v)}/{len(v)}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["1-40"])
