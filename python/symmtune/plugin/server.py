"""The Kernel service of proto/kernel.proto over a Python Kernel, with the
Go SDK's semantics (sdk/serve.go, sdk/wire.go): the same checks, the same
per-rank state machine (setup allocates, connect maps peers and opens the
instance, teardown releases everything) and the same error texts where the
host shows them.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import traceback
from concurrent import futures
from typing import Any, Callable, Sequence

import grpc

from . import goplugin
from ._pb import kernel_pb2 as pb
from ._pb import kernel_pb2_grpc as pb_grpc
from .kernel import (TIMINGS, Backend, Call, Config, Description, Instance, Kernel, Problem, _bench_timing, check_config,
                     config_string)

#: The version of proto/kernel.proto this SDK speaks (Go: sdk.ProtocolVersion).
#: The host refuses a plugin of another version, naming both.
PROTOCOL_VERSION = 1

log = logging.getLogger("symmtune.plugin")


class PluginError(Exception):
    """An error to return to the host as the call's failure."""


# --- conversions (Go: sdk/wire.go) -------------------------------------------


def value_to_proto(v: Any) -> pb.Value:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise TypeError(f"value {v!r}: want int or str")
    return pb.Value(str=v) if isinstance(v, str) else pb.Value(int=v)


def value_from_proto(v: pb.Value) -> int | str:
    kind = v.WhichOneof("kind")
    if kind == "int":
        return v.int
    if kind == "str":
        return v.str
    raise PluginError("empty value")


def config_to_proto(c: Config) -> pb.Config:
    return pb.Config(values={k: value_to_proto(v) for k, v in c.items()})


def config_from_proto(c: pb.Config) -> Config:
    out: Config = {}
    for k, v in c.values.items():
        try:
            out[k] = value_from_proto(v)
        except PluginError as e:
            raise PluginError(f"config key {goplugin_quote(k)}: {e}") from None
    return out


def problem_from_proto(p: pb.Problem) -> Problem:
    return Problem(shape=dict(p.shape), dtype=p.dtype)


def description_to_proto(d: Description) -> pb.Description:
    return pb.Description(
        name=d.name, kernel_version=d.kernel_version, dims=list(d.dims), dtypes=list(d.dtypes),
        params=[pb.Param(name=p.name, values=[value_to_proto(v) for v in p.values]) for p in d.params],
        default_config=config_to_proto(d.default), backends=list(d.backends), summary=d.summary,
    )


def hardware_to_proto(f) -> pb.HardwareInfo:
    return pb.HardwareInfo(kind=f.kind, name=f.name, count=f.count, cores=f.cores, sms=f.sms,
                           memory_mib=f.memory_mib, compute=f.compute, driver=f.driver,
                           interconnect=f.interconnect)


def goplugin_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _reason(e: BaseException) -> str:
    text = str(e)
    return text if text else type(e).__name__


# --- the service -------------------------------------------------------------


class KernelServicer(pb_grpc.KernelServicer):
    """One rank's state. The host calls one RPC at a time per rank; the lock
    keeps a late call after a deadline from racing the next one."""

    def __init__(self, kernel: Kernel, backends: Sequence[Backend]) -> None:
        self.kernel = kernel
        self.backends = {b.name: b for b in backends}
        self.desc = kernel.describe()
        self.desc.backends = [b.name for b in backends]
        problem = check_config(self.desc.params, self.desc.default)
        if problem is not None:
            raise ValueError(f"plugin {self.desc.name}: default config: {problem}")
        # Converted once, so a description the protocol cannot carry (a
        # value neither int nor str) stops the plugin before it serves.
        self._desc_pb = description_to_proto(self.desc)
        self._mu = threading.Lock()
        self._call = Call()
        self._pending: Any = None
        self._team: Any = None
        self._instance: Instance | None = None
        self._problem: Problem | None = None

    # The host sees a failed call as the status message; a Python traceback
    # goes to stderr, which the host logs, not into the trial's error.
    def _run(self, context: grpc.ServicerContext, what: Callable[[], Any], locked: bool = True) -> Any:
        try:
            if not locked:
                return what()
            with self._mu:
                self._call._active = context.is_active
                try:
                    return what()
                finally:
                    self._call._active = None
        except PluginError as e:
            context.abort(grpc.StatusCode.UNKNOWN, str(e))
        except Exception as e:  # the kernel's own failure: the trial fails, the host goes on
            log.debug("call failed:\n%s", traceback.format_exc())
            context.abort(grpc.StatusCode.UNKNOWN, _reason(e))

    def close_all(self, timeout: float = -1) -> None:
        """Releases the rank's state. With a timeout, gives up when a call
        that never returns holds the state (the process is exiting anyway)."""
        if not self._mu.acquire(timeout=timeout):
            return
        try:
            self._close_locked()
        finally:
            self._mu.release()

    def _close_locked(self) -> None:
        for attr in ("_instance", "_team", "_pending"):
            obj = getattr(self, attr)
            setattr(self, attr, None)
            if obj is not None:
                try:
                    obj.close()
                except Exception as e:
                    log.warning("close %s: %s", attr.strip("_"), e)

    def _no_backend(self, name: str) -> str | None:
        """Why the plugin cannot run backend name, as the Go SDK words it
        (sdk/serve.go lookupBackend), or None when it serves it."""
        if name in self.backends:
            return None
        return f"plugin {self.desc.name} has no {goplugin_quote(name)} backend (it has [{' '.join(self.desc.backends)}])"

    def _backend(self, name: str) -> Backend:
        reason = self._no_backend(name)
        if reason is not None:
            raise PluginError(reason)
        return self.backends[name]

    def Describe(self, request, context):
        return self._desc_pb

    def _validate(self, config: pb.Config, problem: pb.Problem, world: int, backend: str) -> pb.ValidateResponse:
        """Validate's answer for one config. A backend the plugin does not
        serve is turned down here, so a kernel's validate need not check it
        (as in the Go SDK)."""
        c = config_from_proto(config)
        reason = self._no_backend(backend)
        if reason is None:
            reason = check_config(self.desc.params, c)
        if reason is None:
            try:
                reason = self.kernel.validate(c, problem_from_proto(problem), world, backend)
            except Exception as e:
                reason = _reason(e)
        if reason:
            return pb.ValidateResponse(ok=False, reason=str(reason))
        return pb.ValidateResponse(ok=True)

    def Validate(self, request, context):
        return self._run(context, lambda: self._validate(request.config, request.problem, request.world,
                                                         request.backend), locked=False)

    def ValidateBatch(self, request, context):
        """Validate for each config of the request, in order, in one call
        (the kernel still validates one config at a time)."""
        def run():
            results = []
            for c in request.configs:
                if context is not None and not context.is_active():
                    raise PluginError("validate batch: the call was cancelled")
                results.append(self._validate(c, request.problem, request.world, request.backend))
            return pb.ValidateBatchResponse(results=results)

        return self._run(context, run, locked=False)

    def Hardware(self, request, context):
        def run():
            b = self._backend(request.backend)
            try:
                f = b.hardware(request.world)
            except Exception as e:
                raise PluginError(f"hardware fingerprint: {_reason(e)}") from None
            return hardware_to_proto(f)

        return self._run(context, run, locked=False)

    def Setup(self, request, context):
        def run():
            b = self._backend(request.backend)
            p = problem_from_proto(request.problem)
            world, rank = request.world, request.rank
            if rank < 0 or rank >= world:
                raise PluginError(f"rank {rank} outside world {world}")
            try:
                nbytes = int(self.kernel.symmetric_bytes(p, world, b.name))
            except Exception as e:
                raise PluginError(f"symmetric size: {_reason(e)}") from None
            self._close_locked()
            try:
                pending, blob = b.allocate(rank, world, nbytes, request.group_id)
            except Exception as e:
                raise PluginError(f"rank {rank}: allocate {nbytes} symmetric bytes on {b.name}: {_reason(e)}") from None
            self._pending, self._problem = pending, p
            return pb.SetupResponse(blob=blob)

        return self._run(context, run)

    def Connect(self, request, context):
        def run():
            if self._pending is None:
                raise PluginError("connect before setup")
            try:
                team = self._pending.connect(list(request.blobs), self._call)
            except Exception as e:
                raise PluginError(f"connect: {_reason(e)}") from None
            self._pending = None
            self._team = team
            try:
                self._instance = self.kernel.open(team, self._problem)
            except Exception as e:
                raise PluginError(f"open {self.desc.name}: {_reason(e)}") from None
            return pb.ConnectResponse()

        return self._run(context, run)

    def _ready(self, c: pb.Config) -> tuple[Instance, Config]:
        if self._instance is None:
            raise PluginError("no instance: call setup and connect first")
        cfg = config_from_proto(c)
        reason = check_config(self.desc.params, cfg)
        if reason is not None:
            raise PluginError(reason)
        return self._instance, cfg

    def Precompile(self, request, context):
        def run():
            out = pb.PrecompileResponse(errors=[""] * len(request.configs))
            pre = getattr(self._instance, "precompile", None)
            if pre is None:
                return out
            errs = pre([config_from_proto(c) for c in request.configs])
            for i, e in enumerate(errs):
                if e:
                    out.errors[i] = str(e)
            return out

        return self._run(context, run)

    def Prepare(self, request, context):
        def run():
            inst, cfg = self._ready(request.config)
            try:
                inst.prepare(cfg)
            except Exception as e:
                raise PluginError(f"prepare {config_string(cfg)}: {_reason(e)}") from None
            return pb.PrepareResponse()

        return self._run(context, run)

    def Verify(self, request, context):
        def run():
            inst, cfg = self._ready(request.config)
            try:
                res = inst.verify(cfg, request.seed)
            except Exception as e:
                raise PluginError(f"verify {config_string(cfg)}: {_reason(e)}") from None
            return pb.VerifyResponse(ok=bool(res.ok), rel_err=float(res.rel_err), detail=res.detail)

        return self._run(context, run)

    def Bench(self, request, context):
        def run():
            inst, cfg = self._ready(request.config)
            if request.iters < 1 or request.warmup < 0:
                raise PluginError(f"bench: iters {request.iters}, warmup {request.warmup}")
            if request.timing not in TIMINGS:
                raise PluginError(f"bench: timing {request.timing!r}: want '' (the plugin's own) or 'loaded'")
            token = _bench_timing.set(request.timing)
            try:
                times = [float(t) for t in inst.bench(cfg, request.warmup, request.iters)]
            except Exception as e:
                raise PluginError(f"bench {config_string(cfg)}: {_reason(e)}") from None
            finally:
                _bench_timing.reset(token)
            return pb.BenchResponse(times_us=times)

        return self._run(context, run)

    def Teardown(self, request, context):
        self.close_all()
        return pb.TeardownResponse()


# --- serve -------------------------------------------------------------------


def serve(kernel: Kernel, backends: Sequence[Backend] | None = None, *, protocol_version: int = PROTOCOL_VERSION) -> None:
    """Runs kernel as a symmtune plugin process and never returns: checks the
    magic cookie, serves the Kernel service (plus go-plugin's health,
    controller, stdio and broker services) over mTLS on a unix socket,
    prints the handshake line, and exits when the host shuts it down or is
    gone. backends defaults to the cpu (shared-memory) backend.

    protocol_version is for tests that need a plugin of another protocol;
    plugins leave it alone.
    """
    goplugin.check_cookie()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if backends is None:
        from .shm import CpuBackend

        backends = [CpuBackend()]
    servicer = KernelServicer(kernel, backends)
    shutdown = threading.Event()
    # Two workers stay busy for the process's life (stdio and broker
    # streams); the host sends one kernel call at a time, plus health
    # checks and, after a deadline, a teardown that waits for the lock.
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="symmtune-rpc"),
                         options=[("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)])
    pb_grpc.add_KernelServicer_to_server(servicer, server)
    goplugin.add_services(server, shutdown)
    creds, cert = goplugin.server_credentials()
    path = goplugin.listen(server, creds)
    server.start()
    goplugin.ignore_interrupts()

    def exit_now(code: int) -> None:
        servicer.close_all(timeout=2)
        _remove(path)
        sys.stderr.flush()
        os._exit(code)

    goplugin.watch_host(lambda: exit_now(3))
    goplugin.handshake(protocol_version, path, cert)
    shutdown.wait()
    # Let the Shutdown call's reply go out, then release the rank's memory.
    server.stop(grace=0.5).wait()
    exit_now(0)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
