"""Does the tuner's score agree with the program? bench/search-check.sh's
helper, two steps:

    python3 bench/search_check.py top LOG KERNEL SHAPE [--n 5] [--extra JSON]
        the best config of N of the search's implementations, spread from
        the best to the worst, its winner and its best pipeline, as
        torch_paired.py --configs JSON on stdout, and one `--where` line
        each on stderr;
    python3 bench/search_check.py table TOP_JSON PROGRAM_JSON REMEASURE_LOG...
        one markdown row per config: the search's first-pass score, each remeasure
        log's score (one log per timing mode, named by the log's file name),
        the program's ratio to mm alone (pass 2), and, per source of
        scores, how many of the config pairs it orders as the program does.

Logs are read by symmtune.triallog (Go's parser, through libsymmtune)."""
from __future__ import annotations

import argparse
import json
import os
import sys
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


def winner(path: str) -> str:
    """The search's winner: the best re-measured finalist (the best first
    pass where nothing was re-measured)."""
    s = scores(path, True) or scores(path, False)
    return min(s.items(), key=lambda kv: kv[1][0])[0]


def top(args: argparse.Namespace) -> None:
    """The best config of each implementation (a family: the pipeline,
    each fused tile), n of them spread over the families' order from best
    to worst, so that the program has differences to agree with; then the
    search's winner and the best pipeline, where not among them."""
    first = scores(args.log, False)
    family: dict[str, tuple[float, dict[str, Any]]] = {}
    for s, c in first.values():
        impl = str(c.get("impl"))
        if impl not in family or s < family[impl][0]:
            family[impl] = (s, c)
    ranked = [c for _, c in sorted(family.values(), key=lambda sc: sc[0])]
    n = min(args.n, len(ranked))
    configs = [ranked[round(i * (len(ranked) - 1) / max(n - 1, 1))] for i in range(n)]
    extra = [first.get(winner(args.log), (0, None))[1] or measured(args.log)[winner(args.log)][1]]
    extra += [c for c in ranked if c.get("impl") == "pipeline"][:1]
    for c in extra + json.loads(args.extra or "[]"):
        if key(c) not in {key(x) for x in configs}:
            configs.append(c)
    json.dump([{"kernel": args.kernel, "shape": args.shape, "config": c} for c in configs], sys.stdout, indent=1)
    for c in configs:
        print(key(c), file=sys.stderr)


def agreement(scores: list[float | None], program: list[float]) -> str:
    """Pairs (i, j) both measured: how many the scores order as the program
    does, of how many."""
    same = total = 0
    for i in range(len(program)):
        for j in range(i + 1, len(program)):
            a, b = scores[i], scores[j]
            if a is None or b is None:
                continue
            total += 1
            same += (a < b) == (program[i] < program[j])
    return f"{same}/{total}"


def table(args: argparse.Namespace) -> None:
    with open(args.top) as f:
        configs = [c["config"] for c in json.load(f)]
    with open(args.program) as f:
        rows = [r for r in json.load(f) if r["pass"] == 2]
    program = {key({k: v for k, v in r["config"].items() if k != "source"}): r["ratio"]["ours"] for r in rows}
    search = scores(args.search, False)
    sources = [("search", search)] + [(os.path.basename(p).removesuffix(".jsonl"), measured(p)) for p in args.remeasure]
    keys = [key(c) for c in configs if key(c) in program]
    head = " | ".join(f"{name} (µs)" for name, _ in sources)
    print(f"| config | {head} | program: ratio to mm |")
    print("|---" * (len(sources) + 2) + "|")
    for k in keys:
        cells = " | ".join(f"{s[k][0]:.1f}" if k in s else "—" for _, s in sources)
        print(f"| `{k}` | {cells} | {program[k]:.3f} |")
    prog = [program[k] for k in keys]
    agree = " | ".join(agreement([s[k][0] if k in s else None for k in keys], prog) for _, s in sources)
    print(f"| pairs ordered as the program | {agree} | |")
    won = winner(args.search)
    if keys and won in program:
        best = min(prog)
        print(f"\nsearch winner `{won}` in the program: {program[won]:.3f} (best of these {best:.3f}: "
              f"{100 * (program[won] / best - 1):.1f}% behind)")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("top")
    t.add_argument("log")
    t.add_argument("kernel")
    t.add_argument("shape")
    t.add_argument("--n", type=int, default=5)
    t.add_argument("--extra", default="", help="a JSON list of configs to add")
    b = sub.add_parser("table")
    b.add_argument("top")
    b.add_argument("program")
    b.add_argument("search")
    b.add_argument("remeasure", nargs="*")
    args = ap.parse_args()
    top(args) if args.cmd == "top" else table(args)


if __name__ == "__main__":
    main()
