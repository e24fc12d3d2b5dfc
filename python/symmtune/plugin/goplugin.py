"""The plugin side of hashicorp/go-plugin's gRPC protocol, in Python: what a
Go plugin gets from plugin.Serve (go-plugin v1.8 server.go, grpc_server.go).

* The magic cookie: the host sets SYMMTUNE_PLUGIN; without it the process
  says it is a plugin and exits 1.
* mTLS: the host passes its certificate in PLUGIN_CLIENT_CERT; the plugin
  makes its own self-signed certificate, serves TLS that requires the host's
  certificate, and returns its own in the handshake line.
* The handshake line on stdout, the first and only line written there:
  ``CORE|APP|unix|<socket path>|grpc|<base64 DER of the certificate>``.
  Later output to stdout goes to stderr, which the host logs.
* The services go-plugin's client uses besides the kernel service: the gRPC
  health service ("plugin" SERVING), GRPCController.Shutdown (exit
  gracefully), GRPCStdio.StreamStdio and GRPCBroker.StartStream (held open,
  unused). Their few messages are encoded here by hand rather than from
  generated code, so no descriptor of go-plugin's or gRPC's own .proto
  files is registered that could clash with a library the kernel imports.
* Exit when the host is gone (SYMMTUNE_HOST_PID), as the Go SDK does.
"""

from __future__ import annotations

import base64
import datetime as _dt
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, Iterator

import grpc

CORE_PROTOCOL_VERSION = 1
MAGIC_COOKIE_KEY = "SYMMTUNE_PLUGIN"
MAGIC_COOKIE_VALUE = "symmetric-memory-kernels"
ENV_HOST_PID = "SYMMTUNE_HOST_PID"

log = logging.getLogger("symmtune.plugin")


def check_cookie() -> None:
    """Exits 1 with go-plugin's message unless a symmtune host started us."""
    if os.environ.get(MAGIC_COOKIE_KEY) != MAGIC_COOKIE_VALUE:
        sys.stderr.write(
            "This binary is a plugin. These are not meant to be executed directly.\n"
            "Please execute the program that consumes these plugins, which will\n"
            "load any plugins automatically\n")
        sys.exit(1)


# --- mTLS --------------------------------------------------------------------


def make_certificate() -> tuple[bytes, bytes, bytes]:
    """A fresh self-signed ECDSA P-256 certificate for "localhost", shaped as
    go-plugin's (CA, server and client auth): (cert PEM, key PEM, cert DER).
    Uses the cryptography package when present, else the openssl command."""
    try:
        return _certificate_cryptography()
    except ImportError:
        return _certificate_openssl()


def _certificate_cryptography() -> tuple[bytes, bytes, bytes]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "symmtune"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = _dt.datetime.now(_dt.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _dt.timedelta(seconds=30))
        .not_valid_after(now + _dt.timedelta(days=3650))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=True,
                                     data_encipherment=False, key_agreement=True, key_cert_sign=True,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .sign(key, hashes.SHA256())
    )
    # Debian's cryptography-stubs (for cryptography 38) lack the key's private_bytes.
    key_pem = key.private_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem, cert.public_bytes(serialization.Encoding.DER)


def _certificate_openssl() -> tuple[bytes, bytes, bytes]:
    exe = shutil.which("openssl")
    if exe is None:
        raise RuntimeError("the host asks for mTLS, and neither the cryptography package nor the openssl "
                           "command is available to make this plugin's certificate")
    with tempfile.TemporaryDirectory(prefix="symmtune-cert-") as d:
        key, pem, der = (os.path.join(d, f) for f in ("key.pem", "cert.pem", "cert.der"))
        cmd = [exe, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
               "-keyout", key, "-out", pem, "-days", "3650", "-subj", "/O=symmtune/CN=localhost",
               "-addext", "subjectAltName=DNS:localhost",
               "-addext", "keyUsage=critical,digitalSignature,keyEncipherment,keyAgreement,keyCertSign",
               "-addext", "extendedKeyUsage=serverAuth,clientAuth"]
        subprocess.run(cmd, check=True, capture_output=True)
        subprocess.run([exe, "x509", "-in", pem, "-outform", "DER", "-out", der], check=True, capture_output=True)
        with open(pem, "rb") as a, open(key, "rb") as b, open(der, "rb") as c:
            return a.read(), b.read(), c.read()


def server_credentials() -> tuple[grpc.ServerCredentials | None, str]:
    """TLS credentials requiring the host's certificate, and this plugin's
    certificate for the handshake line; (None, "") when the host did not
    ask for mTLS."""
    client_pem = os.environ.get("PLUGIN_CLIENT_CERT", "")
    if not client_pem:
        return None, ""
    cert_pem, key_pem, der = make_certificate()
    creds = grpc.ssl_server_credentials([(key_pem, cert_pem)], root_certificates=client_pem.encode(),
                                        require_client_auth=True)
    # Unpadded standard base64, as go-plugin's base64.RawStdEncoding.
    return creds, base64.b64encode(der).decode().rstrip("=")


# --- listening and the handshake ---------------------------------------------


def socket_path() -> str:
    """A fresh path for the plugin's unix socket, in PLUGIN_UNIX_SOCKET_DIR
    when the host sets one (go-plugin's serverListener_unix)."""
    d = os.environ.get("PLUGIN_UNIX_SOCKET_DIR") or None
    fd, path = tempfile.mkstemp(prefix="plugin", dir=d)
    os.close(fd)
    os.unlink(path)
    return path


def listen(server: grpc.Server, creds: grpc.ServerCredentials | None) -> str:
    """Binds server to a new unix socket and returns its path."""
    path = socket_path()
    target = "unix:" + path
    port = server.add_secure_port(target, creds) if creds is not None else server.add_insecure_port(target)
    if port == 0:
        raise RuntimeError(f"cannot listen on {path}")
    return path


def handshake(app_version: int, path: str, cert: str) -> None:
    """Writes the line go-plugin's client waits for, then sends whatever is
    later written to stdout to stderr, where the host logs it."""
    line = f"{CORE_PROTOCOL_VERSION}|{app_version}|unix|{path}|grpc|{cert}\n"
    sys.stdout.flush()
    os.write(1, line.encode())
    os.dup2(2, 1)


# --- go-plugin's services ----------------------------------------------------


def _varint(data: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        if i >= len(data):
            raise ValueError("truncated varint")
        b = data[i]
        i += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, i
        shift += 7


def string_field(data: bytes, number: int) -> str:
    """The last value of a string field in a protobuf message (the only
    field type the health request has)."""
    i, out = 0, ""
    while i < len(data):
        key, i = _varint(data, i)
        wire = key & 7
        if wire == 0:
            _, i = _varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = _varint(data, i)
            if key >> 3 == number:
                out = data[i:i + n].decode("utf-8", "replace")
            i += n
        else:
            raise ValueError(f"unsupported wire type {wire}")
    return out


# grpc.health.v1.HealthCheckResponse{status: SERVING}: field 1, varint 1.
HEALTH_SERVING = b"\x08\x01"


def _health_check(request: bytes, context: grpc.ServicerContext) -> bytes:
    service = string_field(request, 1)
    if service not in ("", "plugin"):
        context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {service!r}")
    return HEALTH_SERVING


def _hold_open(stop: threading.Event) -> Callable:
    def stream(request, context: grpc.ServicerContext) -> Iterator[bytes]:
        # Nothing is sent: the stream only stays open until the host closes
        # it or the plugin shuts down, as an idle Go plugin's does.
        done = threading.Event()
        context.add_callback(done.set)
        while not done.is_set() and not stop.is_set():
            done.wait(0.5)
        return
        yield  # a generator: the response is an (empty) stream

    return stream


def _drain(stop: threading.Event) -> Callable:
    def stream(requests, context: grpc.ServicerContext) -> Iterator[bytes]:
        for _ in requests:
            if stop.is_set():
                break
        return
        yield

    return stream


def add_services(server: grpc.Server, shutdown: threading.Event) -> None:
    """Registers health, controller, stdio and broker on server; a Shutdown
    call sets shutdown."""

    def shutdown_call(request: bytes, context: grpc.ServicerContext) -> bytes:
        shutdown.set()
        return b""

    server.add_generic_rpc_handlers([
        grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
            "Check": grpc.unary_unary_rpc_method_handler(_health_check)}),
        grpc.method_handlers_generic_handler("plugin.GRPCController", {
            "Shutdown": grpc.unary_unary_rpc_method_handler(shutdown_call)}),
        grpc.method_handlers_generic_handler("plugin.GRPCStdio", {
            "StreamStdio": grpc.unary_stream_rpc_method_handler(_hold_open(shutdown))}),
        grpc.method_handlers_generic_handler("plugin.GRPCBroker", {
            "StartStream": grpc.stream_stream_rpc_method_handler(_drain(shutdown))}),
    ])


# --- the host ----------------------------------------------------------------


def host_pid() -> int:
    """The PID to watch: SYMMTUNE_HOST_PID, else the parent's."""
    try:
        pid = int(os.environ.get(ENV_HOST_PID, ""))
        if pid > 0:
            return pid
    except ValueError:
        pass
    return os.getppid()


def host_gone(pid: int, first_ppid: int) -> bool:
    """Whether the host that started this process no longer runs. A parent
    of 1 means re-parented to init, unless init was the parent all along."""
    if pid <= 1:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    return first_ppid != 1 and os.getppid() == 1


def watch_host(on_gone: Callable[[], None], every: float = 1.0) -> threading.Thread:
    """Calls on_gone (which should exit) once the host is gone, so no rank
    outlives its search even when the host was killed with SIGKILL."""
    pid, first_ppid = host_pid(), os.getppid()

    def loop() -> None:
        while True:
            time.sleep(every)
            if host_gone(pid, first_ppid):
                log.warning("symmtune host is gone; plugin exiting (host_pid %d)", pid)
                on_gone()

    t = threading.Thread(target=loop, name="symmtune-watch-host", daemon=True)
    t.start()
    return t


def ignore_interrupts() -> None:
    """Ctrl-C at a terminal reaches the host, which then ends the ranks in
    order; the plugin itself ignores SIGINT, as go-plugin's servers do."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
