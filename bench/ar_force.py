"""Forced all-reduce configs for bench/torch_ops.py: extra rows that run
symmtune.torch.all_reduce with a config of the caller's choice beside the
one the cache gives, in one process (issue 45: one_shot_lamport in place,
on a plain tensor, the tuned default and NCCL side by side).

    AR_FORCE='NAME=SPEC[;NAME=SPEC...]'

SPEC is a JSON config, whose keys replace the default config's for each
size (e.g. {"algorithm":"one_shot_lamport","blocks":8,"threads":256}), or
the path of a cache that `symmtune search --cache` wrote (e.g. searched
with --where algorithm=one_shot_lamport): its entry for each size runs. A
size the config cannot run (one_shot_lamport past its 4 MiB cap) runs the
default, and its rows say so in their config line.
"""
from __future__ import annotations

import json
import os
from typing import Any

# Bound by _install, at the first use(): parse() needs no torch (the
# tests run it without).
_choose: Any = None
_spec: dict | str | None = None


def _install() -> None:
    """Puts _forced_choice in place of symmtune.torch.choose (whose name
    symmtune.torch's _prepare looks up at each first call of a tensor)."""
    global _choose
    if _choose is not None:
        return
    import torch
    import symmtune.torch as st
    from symmtune.kernels import Choice, default_config, not_run

    _choose = st.choose

    def _forced_choice(n: int, dtype: torch.dtype, world: int, cache=None) -> Choice:
        spec = _spec
        if spec is None:
            return _choose(n, dtype, world, cache)
        if isinstance(spec, str):
            return _choose(n, dtype, world, spec)
        elt = torch.empty((), dtype=dtype).element_size()
        cfg = default_config(n, elt, world)
        cfg.update(spec)
        if not_run(cfg, n, elt) is not None:
            return Choice(default_config(n, elt, world), "default (the forced config does not run here)")
        return Choice(cfg, "forced")

    st.choose = _forced_choice


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
    cache's config, as usual). Forgets the calls settled so far, so the next
    call of each tensor chooses again (eagerly: call this before a warm-up,
    never inside a capture); the runners already opened stay open."""
    global _spec
    _install()
    import symmtune.torch as st
    _spec = spec
    st._choices.clear()
    st._calls.clear()
