"""Building the capture injection library on first use, and finding CUPTI.

Owns where the C++ source is (package data), which compiler and CUDA/CUPTI headers build it,
where the built library is cached (`<cache dir>/capture/<key>/libregrapht_capture.so`, the key a
hash of the source, the compiler's version and the headers' contents, so a toolkit or compiler
change rebuilds it) and where `libcupti.so` is found at run time: `$REGRAPHT_CUPTI`, the CUDA
toolkit of nvcc (`lib64`, `extras/CUPTI/lib64`, `targets/*/lib`), or the `nvidia-cuda-cupti`
wheel in this Python's site-packages. The library links neither CUPTI nor the driver: it opens
both at run time, so it builds from headers alone (no GPU, no driver needed).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from regrapht.children import ToolLimits, run_tool

SOURCE = Path(__file__).resolve().parents[1] / "data" / "capture" / "regrapht_capture.cpp"
LIBRARY_NAME = "libregrapht_capture.so"
BUILD_LIMITS = ToolLimits(timeout_s=300.0)
CXX_FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-Wall", "-Wextra")


class CaptureSetupError(Exception):
    """The injection library cannot be built or CUPTI cannot be found: what and why, one line."""


@dataclass(frozen=True)
class Toolkit:
    """Headers (cuda.h, cupti.h) and the CUPTI library the capture uses."""

    include_dirs: tuple[Path, ...]
    cupti: Path | None


def _toolkit_roots(env: Mapping[str, str]) -> list[Path]:
    roots: list[Path] = []
    for name in ("CUDA_HOME", "CUDA_PATH"):
        if env.get(name):
            roots.append(Path(env[name]))
    nvcc = shutil.which("nvcc", path=env.get("PATH"))
    if nvcc:
        real = Path(nvcc).resolve()
        roots.append(real.parent.parent)
        wrapped = _wrapped_nvcc(real)
        if wrapped is not None:
            roots.append(wrapped.parent.parent)
    roots.append(Path("/usr/local/cuda"))
    roots.extend(sorted(Path("/usr/local").glob("cuda-*"), reverse=True))
    unique: list[Path] = []
    for root in roots:
        if root not in unique and root.is_dir():
            unique.append(root)
    return unique


def _wrapped_nvcc(path: Path) -> Path | None:
    """The nvcc a small wrapper script execs (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`)."""
    try:
        if path.stat().st_size > 4096:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for word in text.split():
        if word.endswith("/bin/nvcc") and Path(word).is_file():
            return Path(word)
    return None


def _wheel_dirs() -> list[Path]:
    """The `nvidia/*` folders of the pip wheels (nvidia-cuda-cupti, nvidia-cuda-runtime, ...)."""
    found: list[Path] = []
    for entry in sys.path:
        base = Path(entry) / "nvidia"
        if base.is_dir():
            found.extend(sorted(p for p in base.iterdir() if p.is_dir()))
    return found


def find_toolkit(env: Mapping[str, str]) -> Toolkit:
    """Include folders holding cuda.h and cupti.h, and the libcupti.so to load."""
    roots = _toolkit_roots(env)
    wheels = _wheel_dirs()
    includes: list[Path] = []
    for header in ("cuda.h", "cupti.h"):
        candidates = [r / "include" for r in roots] + [r / "extras" / "CUPTI" / "include" for r in roots]
        candidates += [t / "include" for r in roots for t in sorted((r / "targets").glob("*"))]
        candidates += [w / "include" for w in wheels]
        if env.get("REGRAPHT_CUPTI_INCLUDE"):
            candidates.insert(0, Path(env["REGRAPHT_CUPTI_INCLUDE"]))
        hit = next((c for c in candidates if (c / header).is_file()), None)
        if hit is not None and hit not in includes:
            includes.append(hit)
        if hit is None:
            includes = []
            break
    return Toolkit(tuple(includes), find_cupti(env, roots, wheels))


def find_cupti(env: Mapping[str, str], roots: Sequence[Path], wheels: Sequence[Path]) -> Path | None:
    if env.get("REGRAPHT_CUPTI"):
        return Path(env["REGRAPHT_CUPTI"])
    folders = [r / "lib64" for r in roots] + [r / "extras" / "CUPTI" / "lib64" for r in roots]
    folders += [t / "lib" for r in roots for t in sorted((r / "targets").glob("*"))]
    folders += [w / "lib" for w in wheels]
    for folder in folders:
        if (folder / "libcupti.so").is_file():
            return folder / "libcupti.so"
        versioned = sorted(folder.glob("libcupti.so.*")) if folder.is_dir() else []
        if versioned:
            return versioned[-1]
    return None


def find_compiler(env: Mapping[str, str]) -> Path | None:
    for name in (env.get("CXX"), "g++", "c++", "clang++"):
        if name:
            found = shutil.which(name, path=env.get("PATH"))
            if found:
                return Path(found)
    return None


def _compiler_version(compiler: Path) -> str:
    done = run_tool([str(compiler), "--version"], ToolLimits(timeout_s=30.0))
    return done.stdout.splitlines()[0] if done.returncode == 0 and done.stdout else str(compiler)


def build_key(source: str, compiler_version: str, toolkit: Toolkit) -> str:
    digest = hashlib.sha256()
    digest.update(source.encode())
    digest.update(compiler_version.encode())
    digest.update(" ".join(CXX_FLAGS).encode())
    for folder in toolkit.include_dirs:
        for header in ("cuda.h", "cupti.h", "cupti_callbacks.h", "cupti_runtime_cbid.h", "cupti_driver_cbid.h",
                       "generated_cuda_runtime_api_meta.h", "generated_cuda_meta.h"):
            path = folder / header
            if path.is_file():
                digest.update(header.encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def ensure_library(env: Mapping[str, str], cache_dir: Path) -> Path:
    """The built injection library, compiled now if this cache does not hold it yet."""
    if env.get("REGRAPHT_CAPTURE_LIBRARY"):
        path = Path(env["REGRAPHT_CAPTURE_LIBRARY"])
        if not path.is_file():
            raise CaptureSetupError(f"REGRAPHT_CAPTURE_LIBRARY names {path}, which does not exist")
        return path
    compiler = find_compiler(env)
    if compiler is None:
        raise CaptureSetupError("no C++ compiler (g++, c++ or clang++, or $CXX) to build the capture library")
    toolkit = find_toolkit(env)
    if not toolkit.include_dirs:
        raise CaptureSetupError("cuda.h and cupti.h not found: install the CUDA toolkit (nvcc on PATH, or "
                                "$CUDA_HOME) or the nvidia-cuda-cupti wheel, or set $REGRAPHT_CUPTI_INCLUDE")
    source = SOURCE.read_text(encoding="utf-8")
    key = build_key(source, _compiler_version(compiler), toolkit)
    target = cache_dir / "capture" / key / LIBRARY_NAME
    if target.is_file():
        return target
    return compile_library(compiler, toolkit, target)


def compile_library(compiler: Path, toolkit: Toolkit, target: Path) -> Path:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CaptureSetupError(f"cannot create {target.parent}: {error.strerror or error}") from error
    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    command = [str(compiler), *CXX_FLAGS, *(f"-I{d}" for d in toolkit.include_dirs), str(SOURCE),
               "-o", str(partial), "-ldl", "-lpthread"]
    done = run_tool(command, BUILD_LIMITS)
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        first = next((line for line in done.output.splitlines() if "error" in line), done.output.strip()[:300])
        raise CaptureSetupError(f"building the capture library failed ({compiler.name}): {first}")
    os.replace(partial, target)  # atomic: a concurrent build leaves one whole library
    return target


def cupti_or_error(env: Mapping[str, str]) -> Path:
    cupti = find_toolkit(env).cupti
    if cupti is None or not cupti.is_file():
        raise CaptureSetupError("libcupti.so not found: install the CUDA toolkit's CUPTI or the "
                                "nvidia-cuda-cupti wheel, or set $REGRAPHT_CUPTI to the library")
    return cupti
