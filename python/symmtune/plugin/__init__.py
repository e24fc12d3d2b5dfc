"""The symmtune plugin SDK for Python: write a tunable multi-rank kernel as a
class and serve it to the symmtune host (the Go CLI) like any Go plugin.

A plugin is an executable script named ``symmtune-plugin-<name>`` in the
host's plugin directory (``cuda/`` below it for the cuda backend) that ends
with ``serve(MyKernel())``; the host starts one process per rank. See
docs/plugins.md ("In Python") and python/examples/ for templates.

This package owns the plugin side of the protocol (go-plugin's handshake,
mTLS, health and controller services in :mod:`.goplugin`; the Kernel service
of proto/kernel.proto in :mod:`.server`), the kernel interface
(:mod:`.kernel`), the cpu backend of symmetric memory (:mod:`.shm`), the
torch backend for GPUs with its rank rendezvous (:mod:`.torchmem`), the
input/reference helpers every kernel verifies with (:mod:`.reference`), and
:func:`verify_local`, which runs a kernel's ranks as threads of one process
for its tests. It needs what :data:`REQUIRES` says, and no libsymmtune for
the cpu backend.
"""

import sys

# What the SDK needs, said once: a plugin started by a Python without these
# fails with this line on stderr, which `symmtune plugins` shows.
REQUIRES = ("Python >= 3.9 with grpcio >= 1.48, protobuf >= 3.20 and cryptography >= 3.4 (numpy for the cpu "
            "examples): pip install 'symmtune[plugin,cpu]', or Debian's python3-grpcio python3-protobuf "
            "python3-cryptography python3-numpy")
if sys.version_info < (3, 9):
    raise ImportError(f"symmtune.plugin: {sys.executable} is Python {sys.version.split()[0]}; the SDK needs {REQUIRES}")
try:
    import cryptography  # noqa: F401
    import google.protobuf  # noqa: F401
    import grpc  # noqa: F401
except ImportError as e:
    raise ImportError(f"symmtune.plugin: {sys.executable} cannot import {e.name}; the SDK needs {REQUIRES}") from None

from .kernel import (Call, Cancelled, Config, Description, Instance, Kernel, Param, Problem, Team, VerifyResult,
                     bench_timing, check_config, config_string)
from .local import verify_local
from .reference import rel_err, script_version, source_hash, uniform, uniform_scalar, uniform_sum
from .server import PROTOCOL_VERSION, serve
from .shm import CpuBackend
from .torchmem import TorchBackend

__all__ = [
    "PROTOCOL_VERSION", "REQUIRES", "script_version", "verify_local", "Call", "Cancelled", "Config", "CpuBackend", "TorchBackend", "Description", "Instance", "Kernel", "Param", "Problem",
    "Team", "VerifyResult", "bench_timing", "check_config", "config_string", "rel_err", "serve", "source_hash", "uniform",
    "uniform_scalar", "uniform_sum",
]
