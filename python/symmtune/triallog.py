"""symmtune's trial logs (the JSON-lines files ``symmtune search --log``
writes) read in Python by the one parser of them, Go's internal/triallog,
through libsymmtune (symmtune._native): a torn last line (a search killed
while writing it) is skipped and numbered, any other malformed line is a
ValueError naming the file and the line. A log whose name ends in .gz is
read gunzipped (recorded landscapes are stored so).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from . import _native

# One trial as the log holds it: config, status, score_us, rel_err, ...
# (internal/triallog.Result's JSON fields; omitted ones are absent).
Trial = dict[str, Any]


@dataclass(frozen=True)
class TrialLog:
    """A trial log read back: its trials in the order they were written,
    their line numbers, and the number of a torn last line (0: none)."""
    path: str
    results: list[Trial]
    lines: list[int]
    torn: int


def read(path: str | os.PathLike[str]) -> TrialLog:
    """The trial log at path, gunzipped when its name ends in .gz.
    ValueError for a file that cannot be read, damaged gzip data or a line
    that is not a trial."""
    p = os.fspath(path)
    a = _native.call("triallog.read", path=p)
    return TrialLog(path=p, results=a["results"], lines=a["lines"], torn=a["torn"])
