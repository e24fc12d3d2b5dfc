#!/usr/bin/env python3
"""Writes symmtune's platform wheel (py3-none-linux_x86_64) with the standard
library only: the Python package, the files python/pyproject.toml's
package-data names (the CUDA C the runtime compiles, symlinks followed),
libsymmtune.so (`make lib` builds it first) and, with --bin-dir, the Go host
and its plugins under symmtune/_bin/ with a `symmtune` console command that
runs the host (symmtune._cli). `make wheel` builds all of them, so
`pip install symmtune-*.whl` gives the CLI and the library on a machine
without Go. No build backend is needed, so it runs offline.

    python3 scripts/wheel.py --out DIR [--python-dir python] [--lib libsymmtune.so] [--bin-dir DIR]

--bin-dir holds `symmtune`, the CPU plugins `symmtune-plugin-*` and the CUDA
ones in `cuda/` (make wheel-bin builds them stripped).
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import stat
import sys
import tomllib
import zipfile
from pathlib import Path

TAG = "py3-none-linux_x86_64"
LIB = "libsymmtune.so"


def package_files(pkg_root: Path, package: str, data: list[str]) -> list[tuple[str, Path]]:
    """(path in the wheel, file) for every module of the package and its
    subpackages and every package-data match, symlinks followed."""
    pkg = pkg_root / package
    out: dict[str, Path] = {}
    for f in pkg.rglob("*.py"):
        if "__pycache__" not in f.parts:
            out[f.relative_to(pkg_root).as_posix()] = f
    for f in pkg.rglob("*.pyi"):
        out[f.relative_to(pkg_root).as_posix()] = f
    for pattern in data:
        matched = [f for f in pkg.glob(pattern) if f.is_file()]
        if not matched:
            raise SystemExit(f"wheel: package-data {pattern!r} matches nothing under {pkg}")
        for f in matched:
            out[f"{package}/{f.relative_to(pkg).as_posix()}"] = f
    return sorted(out.items())


def metadata(project: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}",
             f"Summary: {project.get('description', '')}", f"Requires-Python: {project.get('requires-python', '')}"]
    if "license" in project:
        lines.append(f"License: {project['license'].get('text', '')}")
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {d}{' and' if ';' in d else ';'} extra == \"{extra}\"" for d in deps]
    return "\n".join(lines) + "\n"


def record_line(name: str, data: bytes) -> list[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def host_files(bin_dir: Path) -> list[tuple[str, Path]]:
    """(path in the wheel, file) for the host and every plugin of bin_dir:
    symmtune, symmtune-plugin-* and cuda/symmtune-plugin-*."""
    host = bin_dir / "symmtune"
    if not host.is_file():
        raise SystemExit(f"wheel: {host} is missing: run `make wheel-bin` first")
    files = [host, *sorted(bin_dir.glob("symmtune-plugin-*")), *sorted(bin_dir.glob("cuda/symmtune-plugin-*"))]
    return [(f"symmtune/_bin/{f.relative_to(bin_dir).as_posix()}", f) for f in files if f.is_file()]


def build(python_dir: Path, out: Path, lib: Path | None = None, bin_dir: Path | None = None) -> Path:
    """Writes the wheel into out; lib: the library to ship (default: the one
    beside the package); bin_dir: the host and plugins to bundle, with the
    console command (none without it)."""
    project = tomllib.loads((python_dir / "pyproject.toml").read_text())
    meta, tool = project["project"], project.get("tool", {}).get("setuptools", {})
    data = tool.get("package-data", {})
    if list(data) != ["symmtune"] or LIB not in data["symmtune"]:
        raise SystemExit(f"wheel: pyproject's package-data must list {LIB} for the package symmtune")
    lib = lib or python_dir / "symmtune" / LIB
    if not lib.is_file():
        raise SystemExit(f"wheel: {lib} is missing: run `make lib` first")
    name, version = meta["name"], meta["version"]
    dist_info = f"{name}-{version}.dist-info"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}-{version}-{TAG}.whl"
    patterns = [p for p in data["symmtune"] if p != LIB]
    files = [(n, f.read_bytes()) for n, f in package_files(python_dir, "symmtune", patterns)]
    files.append((f"symmtune/{LIB}", lib.read_bytes()))
    executables = {f"symmtune/{LIB}"}
    if bin_dir is not None:
        for n, f in host_files(bin_dir):
            files.append((n, f.read_bytes()))
            executables.add(n)
        files.append((f"{dist_info}/entry_points.txt", b"[console_scripts]\nsymmtune = symmtune._cli:main\n"))
    files += [(f"{dist_info}/METADATA", metadata(meta).encode()),
              (f"{dist_info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: symmtune scripts/wheel.py\n"
                                     f"Root-Is-Purelib: false\nTag: {TAG}\n".encode()),
              (f"{dist_info}/top_level.txt", b"symmtune\n")]
    record = io.StringIO()
    w = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in files:
            info = zipfile.ZipInfo(n, date_time=(2026, 1, 1, 0, 0, 0))
            # pip sets the executable bits only on an entry marked a regular
            # file (S_IFREG) with them.
            info.external_attr = (stat.S_IFREG | (0o755 if n in executables else 0o644)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, b)
            w.writerow(record_line(n, b))
        w.writerow([f"{dist_info}/RECORD", "", ""])
        z.writestr(zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(2026, 1, 1, 0, 0, 0)), record.getvalue())
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="directory to write the wheel into")
    ap.add_argument("--python-dir", type=Path, default=Path(__file__).resolve().parents[1] / "python")
    ap.add_argument("--lib", type=Path, help=f"the {LIB} to ship (default: beside the package)")
    ap.add_argument("--bin-dir", type=Path, help="the host and plugins to bundle, with the symmtune command")
    a = ap.parse_args()
    print(build(a.python_dir, a.out, a.lib, a.bin_dir))


if __name__ == "__main__":
    sys.exit(main())
