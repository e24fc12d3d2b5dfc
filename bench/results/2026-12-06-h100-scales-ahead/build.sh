#!/bin/bash
# Builds run.sh's bundle here (Go needed, no GPU): .gpu/sa/gm.txz, bin/gemmalone of main at 52d0d47 with
# sa.patch applied (the scales-ahead tiles, `:saN`; every other tile's kernel as on main, but the kernel
# versions change with the source, which is why the patch is not on main). Run from the checkout's root;
# carry [".gpu/sa"].
set -eu
sh scripts/patched-gemmalone.sh 52d0d47 "$(dirname "$0")/sa.patch" sa
