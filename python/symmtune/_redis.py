"""Read access to a symmtune cache kept on a Redis server, with the standard
library only: just enough of the RESP2 protocol for AUTH, SELECT, SMEMBERS
and MGET.

The layout is cache/storage/redis.go's: the set ``symmtune:v1:slots`` lists
the slots, and the string ``symmtune:v1:slot:<slot>`` holds each slot's entry
as a one-entry cache file, which cache.parse reads like any file.

URLs are ``redis[s]://[user[:password]@]host[:port][/db]``; the user and
password may instead come from $SYMMTUNE_REDIS_USERNAME and
$SYMMTUNE_REDIS_PASSWORD. No message this module produces contains them.
"""

from __future__ import annotations

import os
import socket
import ssl
import urllib.parse
from dataclasses import dataclass, field

INDEX_KEY = b"symmtune:v1:slots"
KEY_PREFIX = b"symmtune:v1:slot:"
_MGET_CHUNK = 256


class CacheUnavailable(ConnectionError):
    """The Redis server could not be reached or refused us (Go:
    cache.ErrUnavailable). The message names the server, never credentials."""


def is_redis_url(location: str) -> bool:
    return location.lower().startswith(("redis://", "rediss://"))


@dataclass(frozen=True)
class RedisURL:
    host: str
    port: int
    db: int
    tls: bool
    username: str = field(default="", repr=False)
    password: str = field(default="", repr=False)

    def location(self) -> str:
        """The URL without credentials, as the Go side writes it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'rediss' if self.tls else 'redis'}://{host}:{self.port}/{self.db}"


def _redact_raw(location: str) -> str:
    scheme, sep, rest = location.partition("://")
    if not sep:
        return location
    for c in "?#":
        if c in rest:
            rest = rest[: rest.index(c)] + "?…"
    if "@" in rest:
        rest = "***@" + rest[rest.rindex("@") + 1:]
    return f"{scheme}://{rest}"


def parse_url(location: str) -> RedisURL:
    """Reads a redis:// or rediss:// URL; ValueError (without the password)
    when it is not one."""
    def bad(why: str) -> ValueError:
        return ValueError(f"cache location {_redact_raw(location)}: {why} "
                          "(want redis[s]://[user[:password]@]host[:port][/db])")

    try:
        u = urllib.parse.urlsplit(location)
        port = u.port or 6379
    except ValueError:
        raise bad("not a valid URL") from None
    if u.scheme.lower() not in ("redis", "rediss"):
        raise bad("not a redis:// or rediss:// URL")
    if not u.hostname:
        raise bad("no host")
    path = u.path.strip("/")
    if path and not path.isdigit():
        raise bad("the path must be a database number")
    if u.query or u.fragment:
        raise bad("no query or fragment is read")
    username = os.environ.get("SYMMTUNE_REDIS_USERNAME", "")
    password = os.environ.get("SYMMTUNE_REDIS_PASSWORD", "")
    if u.username is not None or u.password is not None:
        username = urllib.parse.unquote(u.username or "")
        if u.password is not None:
            password = urllib.parse.unquote(u.password)
    return RedisURL(host=u.hostname, port=port, db=int(path or 0), tls=u.scheme.lower() == "rediss",
                    username=username, password=password)


class _RedisError(Exception):
    """An error reply (-ERR ..., -WRONGPASS ...)."""


class _Conn:
    def __init__(self, url: RedisURL, timeout: float):
        sock = socket.create_connection((url.host, url.port), timeout=timeout)
        if url.tls:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=url.host)
        self._sock = sock
        self._buf = sock.makefile("rb")

    def close(self) -> None:
        self._buf.close()
        self._sock.close()

    def call(self, *args: bytes | str):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a.encode() if isinstance(a, str) else a
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self._sock.sendall(b"".join(out))
        return self._reply()

    def _line(self) -> bytes:
        line = self._buf.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("the connection closed mid-reply")
        return line[:-2]

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            raise _RedisError(rest.decode("utf-8", "replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self._buf.read(n + 2)
            if len(data) != n + 2:
                raise ConnectionError("the connection closed mid-reply")
            return data[:-2]
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise ConnectionError(f"unexpected reply type {kind!r}")


def fetch(location: str, timeout: float = 10.0) -> tuple[str, list[tuple[str, bytes]]]:
    """The server's redacted location and every (key, value) entry it
    holds. Raises ValueError for a bad URL and CacheUnavailable when the
    server cannot be read."""
    url = parse_url(location)
    where = url.location()
    conn = None
    try:
        conn = _Conn(url, timeout)
        if url.password:
            conn.call("AUTH", *([url.username] if url.username else []), url.password)
        if url.db:
            conn.call("SELECT", str(url.db))
        slots = sorted(conn.call("SMEMBERS", INDEX_KEY) or [])
        out: list[tuple[str, bytes]] = []
        for i in range(0, len(slots), _MGET_CHUNK):
            keys = [KEY_PREFIX + s for s in slots[i:i + _MGET_CHUNK]]
            for k, v in zip(keys, conn.call("MGET", *keys)):
                if v is not None:  # listed but deleted since (by hand)
                    out.append((k.decode("utf-8", "replace"), v))
        return where, out
    except (OSError, _RedisError) as e:
        raise CacheUnavailable(f"cache {where}: {e}") from None
    finally:
        if conn is not None:
            conn.close()
