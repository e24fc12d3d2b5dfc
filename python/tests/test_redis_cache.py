"""symmtune.load and symmtune.lookup on a cache kept on a real redis-server,
filled by the Go CLI's `symmtune cache merge`: the same entries as the file
they came from, credentials from the URL or the environment, and never in a
message. Skipped without redis-server unless SYMMTUNE_REQUIRE_REDIS=1."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

import symmtune
from symmtune import CacheError, CacheUnavailable
from test_cache import CPU, cli_answers, entry, lib_answers, write_cache

USER, PASSWORD = "py-user-5a1c", "py-pass-93fe"


@pytest.fixture()
def redis_port(tmp_path):
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("SYMMTUNE_REQUIRE_REDIS") == "1":
            pytest.fail("redis-server is not on PATH and SYMMTUNE_REQUIRE_REDIS=1")
        pytest.skip("redis-server is not on PATH (Debian: apt-get install redis-server; .ci/run installs it)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp_path), "--user", USER, "on", ">" + PASSWORD, "~*", "&*", "+@all",
                             "--user", "default", "off"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("redis-server did not start")
                time.sleep(0.02)
        yield port
    finally:
        proc.kill()
        proc.wait()


def fill(symmtune_bin, tmp_path, url: str) -> str:
    path = write_cache(tmp_path / "c.toml", [
        entry(1024, "n1k"), entry(4096, "n4k"),
        entry(None, "g", kernel="gemm", shape={"m": 64, "n": 64}),
    ])
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMMTUNE_")}
    subprocess.run([str(symmtune_bin), "cache", "merge", url, path], check=True, env=env, capture_output=True)
    return path


def test_redis_cache_reads_like_the_file(symmtune_bin, tmp_path, redis_port, monkeypatch):
    url = f"redis://{USER}:{PASSWORD}@127.0.0.1:{redis_port}/3"
    path = fill(symmtune_bin, tmp_path, url)
    assert symmtune.load(url) == symmtune.load(path)

    m = symmtune.lookup("allreduce", 4, "f32", {"n": 2000}, backend="cpu", cache=url, hardware=CPU)
    assert m.entry.config["tag"] == "n1k" and not m.exact
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYMMTUNE_")}
    assert lib_answers(url) == cli_answers(symmtune_bin, url, env) == cli_answers(symmtune_bin, path, env)

    # Credentials from the environment, the URL from SYMMTUNE_CACHE.
    monkeypatch.setenv("SYMMTUNE_REDIS_USERNAME", USER)
    monkeypatch.setenv("SYMMTUNE_REDIS_PASSWORD", PASSWORD)
    monkeypatch.setenv("SYMMTUNE_CACHE", f"redis://127.0.0.1:{redis_port}/3")
    assert symmtune.lookup("allreduce", 4, "f32", {"n": 4096}, backend="cpu", hardware=CPU).exact
    with pytest.raises(symmtune.NoTunedConfig) as e:
        symmtune.lookup("nope", 4, "f32", {"n": 4096}, backend="cpu", hardware=CPU)
    assert f"redis://127.0.0.1:{redis_port}/3" in str(e.value)


def test_redis_errors_show_no_credentials(redis_port, monkeypatch):
    monkeypatch.delenv("SYMMTUNE_REDIS_USERNAME", raising=False)
    monkeypatch.delenv("SYMMTUNE_REDIS_PASSWORD", raising=False)
    cases = [
        (f"redis://{USER}:wrong-{PASSWORD}@127.0.0.1:{redis_port}/0", CacheUnavailable),
        (f"redis://127.0.0.1:{redis_port}/0", CacheUnavailable),  # no password: the default user is off
        (f"redis://{USER}:{PASSWORD}@127.0.0.1:1/0", CacheUnavailable),  # nothing listens on port 1
        (f"redis://{USER}:{PASSWORD}@127.0.0.1:{redis_port}/x", CacheError),
        (f"redis://{USER}:{PASSWORD}@127.0.0.1:99999/0", CacheError),
    ]
    for url, kind in cases:
        with pytest.raises(kind) as e:
            symmtune.load(url)
        assert USER not in str(e.value) and PASSWORD not in str(e.value), str(e.value)
