"""The plugin side of go-plugin's protocol, checked from a gRPC client of our
own the way go-plugin's Go client talks to a plugin: the cookie, the
handshake line, mutual TLS, the health, kernel and controller services, and
a clean exit. The Go host itself drives Python plugins in test_host.py and in
the Go tests (tuner/robust_test.go, cmd/symmtune/parity_test.go)."""

from __future__ import annotations

import base64
import os
import subprocess
import sys

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID

from conftest import PYTHON_DIR, REPO
from symmtune.plugin import goplugin
from symmtune.plugin._pb import kernel_pb2 as pb
from symmtune.plugin._pb import kernel_pb2_grpc as pb_grpc

EXAMPLE = REPO / "python" / "examples" / "allreduce_cpu" / "symmtune-plugin-pyallreduce"


def start(env_extra: dict[str, str], mtls: bool = True):
    """Starts the example plugin as go-plugin's client does; returns the
    process, the handshake fields, and the client's (cert, key) PEM."""
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR), PLUGIN_PROTOCOL_VERSIONS="1", **env_extra)
    client = None
    if mtls:
        cert, key, _ = goplugin.make_certificate()
        env["PLUGIN_CLIENT_CERT"] = cert.decode()
        client = (cert, key)
    proc = subprocess.Popen([sys.executable, str(EXAMPLE)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    return proc, line.rstrip("\n").split("|"), client


def channel(fields, client) -> grpc.Channel:
    target = "unix:" + fields[3]
    if client is None:
        return grpc.insecure_channel(target)
    server_der = base64.b64decode(fields[5] + "=" * (-len(fields[5]) % 4))
    server_pem = x509.load_der_x509_certificate(server_der).public_bytes(encoding=_pem())
    creds = grpc.ssl_channel_credentials(root_certificates=server_pem, private_key=client[1], certificate_chain=client[0])
    return grpc.secure_channel(target, creds, options=[("grpc.ssl_target_name_override", "localhost")])


def _pem():
    from cryptography.hazmat.primitives.serialization import Encoding

    return Encoding.PEM


COOKIE = {goplugin.MAGIC_COOKIE_KEY: goplugin.MAGIC_COOKIE_VALUE}


@pytest.fixture()
def plugin():
    proc, fields, client = start(COOKIE)
    yield proc, fields, client
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()


def test_handshake_line(plugin):
    proc, fields, _ = plugin
    assert len(fields) == 6, fields
    assert fields[0] == "1" and fields[1] == "1" and fields[2] == "unix" and fields[4] == "grpc"
    assert os.path.exists(fields[3])
    cert = x509.load_der_x509_certificate(base64.b64decode(fields[5] + "=" * (-len(fields[5]) % 4)))
    assert isinstance(cert.public_key().curve, ec.SECP256R1)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in eku and ExtendedKeyUsageOID.CLIENT_AUTH in eku


def test_services_and_graceful_shutdown(plugin):
    proc, fields, client = plugin
    with channel(fields, client) as ch:
        check = ch.unary_unary("/grpc.health.v1.Health/Check")
        assert check(b"\x0a\x06plugin", timeout=10) == goplugin.HEALTH_SERVING
        with pytest.raises(grpc.RpcError) as err:
            check(b"\x0a\x05other", timeout=10)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND

        k = pb_grpc.KernelStub(ch)
        d = k.Describe(pb.DescribeRequest(), timeout=10)
        assert d.name == "pyallreduce" and list(d.backends) == ["cpu"] and list(d.dims) == ["n"]
        problem = pb.Problem(shape={"n": 4096}, dtype="f32")
        cfg = lambda a, c: pb.Config(values={"algorithm": pb.Value(str=a), "chunk": pb.Value(int=c)})  # noqa: E731
        assert k.Validate(pb.ValidateRequest(config=cfg("one_shot", 1024), problem=problem, world=2, backend="cpu"), timeout=10).ok
        v = k.Validate(pb.ValidateRequest(config=cfg("one_shot", 3), problem=problem, world=2, backend="cpu"), timeout=10)
        assert not v.ok and v.reason == 'parameter "chunk": value 3 not in [1024 8192 65536 524288]'
        with pytest.raises(grpc.RpcError) as err:
            k.Hardware(pb.HardwareRequest(backend="cuda", world=2), timeout=10)
        assert 'has no "cuda" backend' in err.value.details()
        assert k.Hardware(pb.HardwareRequest(backend="cpu", world=2), timeout=10).kind == "cpu"
        with pytest.raises(grpc.RpcError, match="connect before setup"):
            k.Connect(pb.ConnectRequest(blobs=[]), timeout=10)
        with pytest.raises(grpc.RpcError, match="no instance"):
            k.Prepare(pb.PrepareRequest(config=cfg("one_shot", 1024)), timeout=10)

        # A rank of one, end to end.
        blob = k.Setup(pb.SetupRequest(backend="cpu", rank=0, world=1, problem=problem, group_id=f"{os.getpid()}-t"), timeout=10).blob
        k.Connect(pb.ConnectRequest(blobs=[blob]), timeout=10)
        assert not os.path.exists(blob.decode())
        k.Prepare(pb.PrepareRequest(config=cfg("two_shot", 1024)), timeout=10)
        r = k.Verify(pb.VerifyRequest(config=cfg("two_shot", 1024), seed=7), timeout=10)
        assert r.ok and r.rel_err < 1e-6
        times = k.Bench(pb.BenchRequest(config=cfg("two_shot", 1024), warmup=1, iters=3), timeout=10).times_us
        assert len(times) == 3 and all(t > 0 for t in times)
        with pytest.raises(grpc.RpcError, match="bench: iters 0, warmup 1"):
            k.Bench(pb.BenchRequest(config=cfg("two_shot", 1024), warmup=1, iters=0), timeout=10)
        k.Teardown(pb.TeardownRequest(), timeout=10)

        ch.unary_unary("/plugin.GRPCController/Shutdown")(b"", timeout=10)
    assert proc.wait(10) == 0
    assert not os.path.exists(fields[3]), "the socket outlives the plugin"


def test_without_the_cookie_it_says_it_is_a_plugin():
    proc = subprocess.run([sys.executable, str(EXAMPLE)], env=dict(os.environ, PYTHONPATH=str(PYTHON_DIR)),
                          capture_output=True, timeout=30)
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert b"This binary is a plugin" in proc.stderr


def test_without_mtls_it_serves_plaintext():
    proc, fields, _ = start(COOKIE, mtls=False)
    try:
        assert fields[5] == ""
        with channel(fields, None) as ch:
            assert ch.unary_unary("/grpc.health.v1.Health/Check")(b"", timeout=10) == goplugin.HEALTH_SERVING
            ch.unary_unary("/plugin.GRPCController/Shutdown")(b"", timeout=10)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.stderr.close()


def test_openssl_certificate_has_the_same_shape():
    cert_pem, key_pem, der = goplugin._certificate_openssl()
    cert = x509.load_pem_x509_certificate(cert_pem)
    assert cert.public_bytes(encoding=_pem()) == cert_pem or x509.load_der_x509_certificate(der) == cert
    assert isinstance(cert.public_key().curve, ec.SECP256R1)
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName) == ["localhost"]
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in eku and ExtendedKeyUsageOID.CLIENT_AUTH in eku
    # grpc accepts the pair as a server identity.
    grpc.ssl_server_credentials([(key_pem, cert_pem)])


@pytest.mark.parametrize("data,want", [(b"", ""), (b"\x0a\x06plugin", "plugin"), (b"\x08\x01\x0a\x01x\x0a\x01y", "y")])
def test_string_field(data, want):
    assert goplugin.string_field(data, 1) == want


def test_host_gone():
    assert goplugin.host_gone(1, 100)
    assert not goplugin.host_gone(os.getpid(), os.getppid())
    assert goplugin.host_gone(2 ** 22 + 12345, os.getppid())  # beyond pid_max: no such process
