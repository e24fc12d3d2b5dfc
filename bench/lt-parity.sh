#!/bin/sh
# lt-parity.sh: on a GPU machine, after `tar xzf .gpu/bins.tgz`
# (scripts/gpu-bundle.sh), checks that the Go plugins' cuBLASLt binding and
# symmtune.torch's (python/symmtune/_cublaslt.py, in a torch process) rank
# the same algorithms for the pipelines' products: cuda/cublaslt's
# TestAlgosMatchPython. PYTHON names a Python with torch (default python3).
set -eu
cd "$(dirname "$0")/../cuda/cublaslt"
SYMMTUNE_TEST_PYTHON=${PYTHON:-python3} exec ../../bin/cublaslt.test -test.run TestAlgosMatchPython -test.v
