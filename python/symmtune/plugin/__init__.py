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
torch backend for GPUs with its rank rendezvous (:mod:`.torchmem`), and the
input/reference helpers every kernel verifies with (:mod:`.reference`).
"""

from .kernel import (Call, Cancelled, Config, Description, Instance, Kernel, Param, Problem, Team, VerifyResult,
                     check_config, config_string)
from .reference import rel_err, source_hash, uniform, uniform_scalar, uniform_sum
from .server import PROTOCOL_VERSION, serve
from .shm import CpuBackend
from .torchmem import TorchBackend

__all__ = [
    "PROTOCOL_VERSION", "Call", "Cancelled", "Config", "CpuBackend", "TorchBackend", "Description", "Instance", "Kernel", "Param", "Problem",
    "Team", "VerifyResult", "check_config", "config_string", "rel_err", "serve", "source_hash", "uniform",
    "uniform_scalar", "uniform_sum",
]
