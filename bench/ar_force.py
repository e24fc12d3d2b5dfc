"""Forced all-reduce configs for bench/torch_ops.py: extra rows that run
symmtune.torch.all_reduce with a config of the caller's choice beside the
one the cache gives, in one process (issue 45: one_shot_lamport and
two_shot_lamport in place, on a plain tensor, the tuned default and NCCL
side by side).

    AR_FORCE='NAME=SPEC[;NAME=SPEC...]'

SPEC is a JSON config, whose keys replace the default config's for each
size (e.g. {"algorithm":"one_shot_lamport","blocks":8,"threads":256}), or
the path of a cache that `symmtune search --cache` wrote (e.g. searched
with --where algorithm=one_shot_lamport): its entry for each size runs. A
size the config cannot run (one_shot_lamport past its 4 MiB cap,
two_shot_lamport past its 16 MiB) runs the default, and its rows say so in
their config line. bench/torch-ops.sh with LAMPORT=1 names one row per
Lamport algorithm, after it.
"""
from __future__ import annotations

import json
import os


def parse(text: str | None = None) -> dict[str, dict | str]:
    """AR_FORCE (or text) as {name: spec}."""
    text = os.environ.get("AR_FORCE", "") if text is None else text
    specs: dict[str, dict | str] = {}
    for item in filter(None, (s.strip() for s in text.split(";"))):
        name, sep, spec = item.partition("=")
        if not sep or not name:
            raise ValueError(f"AR_FORCE item {item!r}: want NAME=SPEC")
        specs[name.strip()] = json.loads(spec) if spec.lstrip().startswith("{") else spec.strip()
    return specs


def use(spec: dict | str | None) -> None:
    """Makes every later first call of an all-reduce choose spec (None: the
    cache's config, as usual) through symmtune.torch's forced hook (the
    library's allreduce.choose lays a config over the size's default, and
    runs the default where it cannot run). Forgets the calls settled so far,
    so the next call of each tensor chooses again (eagerly: call this before
    a warm-up, never inside a capture); the runners already opened stay
    open."""
    import symmtune.torch as st
    st.forced.clear()
    if isinstance(spec, dict):
        st.forced["config"] = spec
    elif spec is not None:
        st.forced["cache"] = spec
    st._choices.clear()
    st._calls.clear()
