"""The ``symmtune`` console command of the platform wheel (``make wheel``):
it runs the Go host bundled in the wheel, ``symmtune/_bin/symmtune``, in
place of this process. The host's plugin directory is then the bundle's
(``_bin``, CUDA builds in ``_bin/cuda``) unless ``--plugin-dir`` or
``$SYMMTUNE_PLUGIN_DIR`` names another, so ``pip install`` of the wheel
gives ``symmtune search`` with no Go on the machine."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def host_path() -> Path:
    """Where the wheel puts the host."""
    return Path(__file__).resolve().parent / "_bin" / "symmtune"


def main() -> None:
    host = host_path()
    if not os.access(host, os.X_OK):
        sys.stderr.write(f"symmtune: no bundled host at {host}: this symmtune package was not installed from the "
                         f"platform wheel (make wheel); in a checkout, run bin/symmtune (make build)\n")
        sys.exit(2)
    # exec, not a child: the host gets the terminal's signals and its exit
    # code is the command's, with no Python left waiting.
    os.execv(host, [str(host), *sys.argv[1:]])


if __name__ == "__main__":
    main()
