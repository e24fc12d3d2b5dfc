"""Does the tuner's score agree with the program? bench/search-check.sh's
helper, two steps:

    python3 bench/search_check.py top LOG CACHE KERNEL SHAPE [--n 5] [--best 5] [--ref LOG --ref-n 5]
            [--dtype bf16] [--extra JSON]
        the search's winner (its entry in CACHE, the cache file the search
        wrote: the search's own choice, not re-derived from the log), the
        best config of N of its implementations, spread from the best to
        the worst, and its best pipeline; with
        --best, the search's BEST best configs; with --ref, the REF_N best
        of another log (an exhaustive search's, or a recorded landscape in
        tuner/testdata): as torch_paired.py --configs JSON on stdout, each
        entry labelled (winner, best2.., family, pipeline, ref1..), and one
        `--where` line each on stderr;
    python3 bench/search_check.py table TOP_JSON PROGRAM_JSON SEARCH_LOG REMEASURE_LOG...
        one markdown row per config: the search's first-pass score, each remeasure
        log's score (one log per timing mode, named by the log's file name),
        the program's ratio to mm alone (pass 2), and, per source of
        scores, how many of the config pairs it orders as the program does;
    python3 bench/search_check.py summary PROGRAM_JSON WALL_S
        issue 44's row for a cell: per pass, the search winner's and the
        untuned config's ratio to the product alone against the best of
        the others measured with them (torch_paired.py --together
        --untuned), and the search's wall time.

Logs are read by symmtune.triallog (Go's parser, through libsymmtune)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from typing import Any

from symmtune import triallog


def key(config: dict[str, Any]) -> str:
    """A config as `--where` takes it: name=value, sorted by name."""
    return ",".join(f"{k}={v}" for k, v in sorted(config.items()))


def scores(path: str, refined: bool) -> dict[str, tuple[float, dict[str, Any]]]:
    """Each config's best score in the log at path, among its first-pass
    rows (refined False) or its re-measured finalist rows (True)."""
    out: dict[str, tuple[float, dict[str, Any]]] = {}
    for r in triallog.read(path).results:
        if r.get("status") != "ok" or r.get("score_us") is None or bool(r.get("refined")) != refined:
            continue
        k, s = key(r["config"]), float(r["score_us"])
        if k not in out or s < out[k][0]:
            out[k] = (s, r["config"])
    return out


def measured(path: str) -> dict[str, tuple[float, dict[str, Any]]]:
    """Each config's score: its re-measured row's where it has one."""
    return {**scores(path, False), **scores(path, True)}


def winner(cache: str, kernel: str) -> dict[str, Any]:
    """The search's winner: the config of the kernel's entry in the cache
    file the search wrote. The search chose it (tuner.Winner: the default
    keeps its place within 2%), so it is read, not chosen again here."""
    with open(cache, "rb") as f:
        entries = [e for e in tomllib.load(f).get("entry", []) if e.get("kernel") == kernel]
    if len(entries) != 1:
        raise SystemExit(f"search_check.py: {cache}: {len(entries)} {kernel} entries, want the one search's winner")
    return dict(entries[0]["config"])


def best(path: str, n: int) -> list[dict[str, Any]]:
    """The n best configs of the log at path in the search's own final
    order: its re-measured finalists by their re-measured scores, then the
    others by their first-pass scores. A re-measurement may be timed
    otherwise than the first pass (--refine-timing loaded: 13% slower
    figures on 1 x H200), so the two are never sorted together."""
    refined = scores(path, True)
    rest = {k: v for k, v in scores(path, False).items() if k not in refined}
    order = sorted(refined.values(), key=lambda sc: sc[0]) + sorted(rest.values(), key=lambda sc: sc[0])
    return [c for _, c in order[:n]]


def top(args: argparse.Namespace) -> None:
    """The search's winner; its best configs (--best); the best config of
    each implementation (a family: the pipeline, each fused tile), n of
    them spread over the families' order from best to worst, so that the
    program has differences to agree with; the best pipeline; the best of
    a reference log (--ref). Each config once, under its first label."""
    first = scores(args.log, False)
    family: dict[str, tuple[float, dict[str, Any]]] = {}
    for s, c in first.values():
        impl = str(c.get("impl"))
        if impl not in family or s < family[impl][0]:
            family[impl] = (s, c)
    ranked = [c for _, c in sorted(family.values(), key=lambda sc: sc[0])]
    n = min(args.n, len(ranked))
    labelled = [("winner", winner(args.cache, args.kernel))]
    labelled += [(f"best{i + 1}", c) for i, c in enumerate(best(args.log, args.best))]
    labelled += [("family", ranked[round(i * (len(ranked) - 1) / max(n - 1, 1))]) for i in range(n)]
    labelled += [("pipeline", c) for c in ranked if c.get("impl") == "pipeline"][:1]
    if args.ref:
        labelled += [(f"ref{i + 1}", c) for i, c in enumerate(best(args.ref, args.ref_n))]
    labelled += [("extra", c) for c in json.loads(args.extra or "[]")]
    seen: set[str] = set()
    out = []
    for label, c in labelled:
        if key(c) not in seen:
            seen.add(key(c))
            out.append({"kernel": args.kernel, "shape": args.shape, "dtype": args.dtype, "label": label, "config": c})
    json.dump(out, sys.stdout, indent=1)
    for e in out:
        print(key(e["config"]), file=sys.stderr)


def summary(args: argparse.Namespace) -> None:
    """One markdown row per pass: the winner's and the untuned config's
    ratio, the best ratio among every config measured with them (the
    winner and the untuned one included) and which label it had, each
    one's distance from that best, and the search's wall time."""
    with open(args.program) as f:
        rows = json.load(f)
    for p in sorted({r["pass"] for r in rows}):
        got = [r for r in rows if r["pass"] == p]
        top_row = min(got, key=lambda r: r["ratio"]["ours"])
        bestr = top_row["ratio"]["ours"]
        by = {r["label"]: r["ratio"]["ours"] for r in got}
        # The winner and untuned may share a config with another label:
        # the first label kept it (top), so look for "winner" and "untuned".
        won, untuned = by.get("winner"), by.get("untuned")
        r0 = got[0]

        def cell(x: float | None) -> str:
            return "—" if x is None else f"{x:.3f} ({100 * (x / bestr - 1):+.1f}%)"
        print(f"| {r0['kernel']} {r0.get('dtype', 'bf16')} {r0['shape']} | {p} | {cell(won)} | {cell(untuned)} | "
              f"{bestr:.3f} ({top_row['label']}) | {r0['ratio']['torch']:.3f} | {args.wall} s | {len(got)} |")


def agreement(scores: list[float | None], program: list[float], min_gap: float = 0.0) -> str:
    """Pairs (i, j) both measured whose program ratios differ by min_gap
    (a share of the smaller) or more: how many the scores order as the
    program does, of how many. Issue 57's bar counts pairs 2% apart: closer
    ones are within the program's own round-to-round spread."""
    same = total = 0
    for i in range(len(program)):
        for j in range(i + 1, len(program)):
            a, b = scores[i], scores[j]
            if a is None or b is None:
                continue
            if abs(program[i] - program[j]) < min_gap * min(program[i], program[j]):
                continue
            total += 1
            same += (a < b) == (program[i] < program[j])
    return f"{same}/{total}"


def stable_agreement(scores: list[float | None], passes: list[list[float]], min_gap: float = 0.02) -> str:
    """agreement() over the pairs that every pass of the program orders the
    same way, min_gap or more apart in each: a pair the program's own
    passes order differently (or closer) is a tie of the program's, which
    no trial score can be judged against."""
    same = total = 0
    n = len(passes[0]) if passes else 0
    for i in range(n):
        for j in range(i + 1, n):
            a, b = scores[i], scores[j]
            if a is None or b is None:
                continue
            dirs = {p[i] < p[j] for p in passes}
            if len(dirs) != 1 or any(abs(p[i] - p[j]) < min_gap * min(p[i], p[j]) for p in passes):
                continue
            total += 1
            same += (a < b) == dirs.pop()
    return f"{same}/{total}"


def table(args: argparse.Namespace) -> None:
    with open(args.top) as f:
        tops = json.load(f)
    configs = [c["config"] for c in tops]
    with open(args.program) as f:
        all_rows = json.load(f)
    by_pass: dict[int, dict[str, float]] = {}
    for r in all_rows:
        ck = key({k: v for k, v in r["config"].items() if k != "source"})
        by_pass.setdefault(r["pass"], {})[ck] = r["ratio"]["ours"]
    last = max(by_pass) if by_pass else 2
    # The table's column is the last pass (the first warms the runners);
    # the agreement rows count each pass and the pairs every pass agrees on.
    program = by_pass.get(last, {})
    search = scores(args.search, False)
    sources = [("search", search)]
    # The search's own re-measurements of its finalists: the order its
    # winner was chosen by (timed as the search's --refine-timing asked).
    # Configs it did not re-measure have none here, so no pair mixes the
    # first pass's timing with the re-measurements'.
    if refined := scores(args.search, True):
        sources.append(("search refined", refined))
    sources += [(os.path.basename(p).removesuffix(".jsonl"), measured(p)) for p in args.remeasure]
    keys = [key(c) for c in configs if key(c) in program and all(key(c) in v for v in by_pass.values())]
    head = " | ".join(f"{name} (µs)" for name, _ in sources)
    print(f"| config | {head} | program: ratio to mm (pass {last}) |")
    print("|---" * (len(sources) + 2) + "|")
    for k in keys:
        cells = " | ".join(f"{s[k][0]:.1f}" if k in s else "—" for _, s in sources)
        print(f"| `{k}` | {cells} | {program[k]:.3f} |")
    prog = [program[k] for k in keys]
    agree = " | ".join(agreement([s[k][0] if k in s else None for k in keys], prog) for _, s in sources)
    print(f"| pairs ordered as the program (pass {last}) | {agree} | |")
    for p in sorted(by_pass):
        pp = [by_pass[p][k] for k in keys]
        apart = " | ".join(agreement([s[k][0] if k in s else None for k in keys], pp, 0.02) for _, s in sources)
        print(f"| pairs 2% or more apart in the program's pass {p}, ordered alike | {apart} | |")
    passes = [[by_pass[p][k] for k in keys] for p in sorted(by_pass)]
    stable = " | ".join(stable_agreement([s[k][0] if k in s else None for k in keys], passes) for _, s in sources)
    print(f"| pairs 2% or more apart in every pass, the same way, ordered alike | {stable} | |")
    won = next((key(c["config"]) for c in tops if c["label"] == "winner"), "")
    if keys and won in program:
        best = min(prog)
        print(f"\nsearch winner `{won}` in the program: {program[won]:.3f} (best of these {best:.3f}: "
              f"{100 * (program[won] / best - 1):.1f}% behind)")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("top")
    t.add_argument("log")
    t.add_argument("cache", help="the cache file the search wrote: its winner")
    t.add_argument("kernel")
    t.add_argument("shape")
    t.add_argument("--n", type=int, default=5)
    t.add_argument("--extra", default="", help="a JSON list of configs to add")
    t.add_argument("--best", type=int, default=0, help="also the search's N best configs")
    t.add_argument("--ref", default="", help="a reference log (an exhaustive search's): its --ref-n best configs too")
    t.add_argument("--ref-n", type=int, default=5)
    t.add_argument("--dtype", default="bf16")
    b = sub.add_parser("table")
    b.add_argument("top")
    b.add_argument("program")
    b.add_argument("search")
    b.add_argument("remeasure", nargs="*")
    m = sub.add_parser("summary")
    m.add_argument("program")
    m.add_argument("wall")
    args = ap.parse_args()
    {"top": top, "table": table, "summary": summary}[args.cmd](args)


if __name__ == "__main__":
    main()
