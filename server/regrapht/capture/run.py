"""Running the user's program under the capture library and making the capture directory.

Owns `regrapht capture`'s sequence (docs/capture.md): check the options and the output folder,
build or find the injection library and CUPTI, check that a CUDA driver and device exist, run
the program with `CUDA_INJECTION64_PATH` set (its stdin, stdout and stderr are the caller's:
its own output passes through untouched; nothing else of its environment changes), then read
what the library recorded, write the specs and the manifest, and say what was captured. The
program's exit code is the result (a signal as the shell reports it, 128 + N); captures made
before a crash are kept. Only the program and its children load the library.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regrapht.capture.build import CaptureSetupError, cupti_or_error, ensure_library
from regrapht.capture.manifest import (
    COUNTS,
    LAUNCHES,
    MANIFEST,
    STATUS,
    Recorded,
    read_recorded,
    write_manifest,
)
from regrapht.capture.sources import SourceIndex
from regrapht.capture.specs import SPECS, SpecWriter, Written
from regrapht.errors import InputError

DEFAULT_LAUNCHES = 3
DEFAULT_MAX_BYTES = 256 << 20
DEFAULT_TOTAL_BYTES = 4 << 30
OUR_FILES = (MANIFEST, LAUNCHES, STATUS, COUNTS, "owner.pid")
OUR_FOLDERS = ("data", SPECS)
PRIVILEGES_HINT = ("the driver lets only administrators profile: run as root, or set the nvidia module option "
                   "NVreg_RestrictProfilingToAdminUsers=0 (NVIDIA's ERR_NVGPUCTRPERM page)")


@dataclass(frozen=True)
class CaptureOptions:
    command: tuple[str, ...]
    out: Path
    kernel: str | None = None
    launches: int = DEFAULT_LAUNCHES
    data: bool = False
    max_bytes: int = DEFAULT_MAX_BYTES
    total_bytes: int = DEFAULT_TOTAL_BYTES
    sources: Path | None = None  # where kernels' declarations are looked for (default: the current folder)
    rtol: float | None = None  # every spec's tolerances; None: the format's defaults, a reduction's looser ones
    atol: float | None = None


@dataclass
class CaptureOutcome:
    exit_code: int  # what `regrapht capture` exits with
    program_code: int | None  # the program's own exit code; None when it did not run
    error: str | None = None  # why nothing (or not everything) was captured
    recorded: Recorded | None = None
    written: Written | None = None
    lines: list[str] = field(default_factory=list)  # the summary for stderr


def default_out(command: Sequence[str], cwd: Path) -> Path:
    return cwd / ".regrapht" / "captures" / (re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(command[0]).name) or "program")


def check_options(options: CaptureOptions) -> None:
    if not options.command:
        raise InputError("no program to run: give it after `--`, e.g. `regrapht capture -- ./app --size 1024`")
    if options.kernel is not None:
        try:
            re.compile(options.kernel)
        except re.error as error:
            raise InputError(f"--kernel {options.kernel!r} is not a regular expression: {error}") from None
    if options.launches < 1:
        raise InputError(f"--launches must be at least 1, got {options.launches}")
    if options.max_bytes < 0 or options.total_bytes < 0:
        raise InputError("--max-bytes and --total-bytes cannot be negative")
    for flag, value in (("--rtol", options.rtol), ("--atol", options.atol)):
        if value is not None and not (value >= 0 and value != float("inf")):
            raise InputError(f"{flag} must be a finite number >= 0, got {value}")


def prepare_out(out: Path) -> None:
    """Make `out` ready: created, or emptied of an earlier capture's files (only ours)."""
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", file=str(out))
    if out.is_dir():
        entries = {p.name for p in out.iterdir()}
        foreign = entries - set(OUR_FILES) - set(OUR_FOLDERS) - {MANIFEST + ".tmp"}
        if entries and foreign and MANIFEST not in entries:
            raise InputError(f"is not empty and holds no earlier capture ({', '.join(sorted(foreign)[:3])}, ...): "
                             "choose another --out", file=str(out))
        for name in OUR_FILES:
            (out / name).unlink(missing_ok=True)
        for name in OUR_FOLDERS:
            if (out / name).is_dir():
                shutil.rmtree(out / name)
    try:
        (out / "data").mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"cannot create the folder: {error.strerror or error}", file=str(out)) from error


def driver_problem(load: Callable[[str], ctypes.CDLL] = ctypes.CDLL) -> str | None:
    """Why no launch could be captured on this machine (no driver, no device), or None."""
    try:
        cuda = load("libcuda.so.1")
    except OSError as error:
        return f"no CUDA driver (libcuda.so.1 cannot be loaded: {error}); capture needs an NVIDIA GPU and its driver"
    if not all(hasattr(cuda, name) for name in ("cuInit", "cuDeviceGetCount", "cuGetErrorName")):
        return "libcuda.so.1 is not a CUDA driver (cuInit, cuDeviceGetCount or cuGetErrorName missing)"
    status = int(cuda.cuInit(0))
    if status != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(status, ctypes.byref(name))
        text = name.value.decode() if name.value else f"error {status}"
        return f"the CUDA driver does not start (cuInit: {text}); no GPU is usable here"
    count = ctypes.c_int(0)
    if int(cuda.cuDeviceGetCount(ctypes.byref(count))) != 0 or count.value == 0:
        return "no CUDA device is present"
    return None


def capture_env(base: Mapping[str, str], library: Path, cupti: Path, options: CaptureOptions) -> dict[str, str]:
    env = dict(base)
    env.update({
        "CUDA_INJECTION64_PATH": str(library),
        "REGRAPHT_CAPTURE_DIR": str(options.out.resolve()),
        "REGRAPHT_CAPTURE_CUPTI": str(cupti),
        "REGRAPHT_CAPTURE_LAUNCHES": str(options.launches),
        "REGRAPHT_CAPTURE_DATA": "1" if options.data else "0",
        "REGRAPHT_CAPTURE_MAX_BYTES": str(options.max_bytes),
        "REGRAPHT_CAPTURE_TOTAL_BYTES": str(options.total_bytes),
    })
    env.pop("REGRAPHT_CAPTURE_KERNEL", None)
    if options.kernel:
        env["REGRAPHT_CAPTURE_KERNEL"] = options.kernel
    return env


def run_program(command: Sequence[str], env: Mapping[str, str]) -> int:
    """Run the program with the caller's stdio; its exit code (a signal as 128 + N)."""
    try:
        process = subprocess.Popen(list(command), env=dict(env))
    except FileNotFoundError:
        raise InputError(f"cannot run {command[0]!r}: no such program") from None
    except PermissionError:
        raise InputError(f"cannot run {command[0]!r}: not executable") from None
    while True:
        try:
            code = process.wait()
            break
        except KeyboardInterrupt:  # the program got the same SIGINT (one process group): let it finish
            process.send_signal(signal.SIGINT)
    return 128 - code if code < 0 else code


def capture(options: CaptureOptions, env: Mapping[str, str], cache_dir: Path,
            problem: Callable[[], str | None] = driver_problem,
            runner: Callable[[Sequence[str], Mapping[str, str]], int] = run_program) -> CaptureOutcome:
    """The whole `regrapht capture`: InputError for bad options, else an outcome to report."""
    check_options(options)
    if env.get("CUDA_INJECTION64_PATH"):
        return CaptureOutcome(1, None, f"CUDA_INJECTION64_PATH is already set ({env['CUDA_INJECTION64_PATH']}): "
                                       "another tool injects into CUDA programs; unset it to capture")
    try:
        library = ensure_library(env, cache_dir)
        cupti = cupti_or_error(env)
    except CaptureSetupError as error:
        return CaptureOutcome(1, None, str(error))
    if (reason := problem()) is not None:
        return CaptureOutcome(1, None, reason)
    prepare_out(options.out)
    started = time.time()
    code = runner(options.command, capture_env(env, library, cupti, options))
    return finish(options, code, started)


def finish(options: CaptureOptions, code: int, started: float) -> CaptureOutcome:
    """Read what the library recorded, write the specs and the manifest, and summarise."""
    recorded = read_recorded(options.out)
    error = None
    if recorded.status.state == "failed":
        error = f"CUPTI could not capture: {recorded.status.error}"
        if recorded.status.code == 35:  # CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
            error += f"; {PRIVILEGES_HINT}"
    elif recorded.status.state == "absent":
        error = ("the capture library never started: the program did not initialise CUDA, or the driver did not "
                 "load CUDA_INJECTION64_PATH")
    program = options.command[0]
    writer = SpecWriter(options.out, program, SourceIndex(options.sources or Path.cwd()), rtol=options.rtol,
                        atol=options.atol)
    written = writer.write_all(recorded.launches)
    kernels: dict[str, dict[str, Any]] = {}
    for launch in recorded.launches:
        record = kernels.setdefault(launch.mangled, {"mangled": launch.mangled, "signature": launch.demangled,
                                                     "recorded": 0, "seen": None})
        record["recorded"] += 1
    for mangled, seen in (recorded.seen or {}).items():
        kernels.setdefault(mangled, {"mangled": mangled, "signature": mangled, "recorded": 0})["seen"] = seen
    notes = list(recorded.notes)
    if recorded.seen is None and recorded.status.state == "capturing":
        notes.append("counts.json is missing: the program did not exit normally, so launches seen beyond those "
                     "recorded are not counted")
    if code != 0:
        notes.append(f"the program exited with {code}; the launches recorded before that are kept")
    for launch in recorded.launches:
        for allocation in launch.allocations:
            if allocation.note:
                notes.append(f"launch {launch.id} ({launch.demangled}): {allocation.note}")
        notes.extend(f"launch {launch.id} ({launch.demangled}): {note}" for note in launch.notes)
    write_manifest(options.out, {
        "command": list(options.command), "cwd": str(Path.cwd()), "started": started, "wall_s": time.time() - started,
        "exit_code": code, "data": options.data, "kernel_filter": options.kernel,
        "launches_per_kernel": options.launches, "library": {"state": recorded.status.state,
                                                             "error": recorded.status.error},
        "kernels": list(kernels.values()),
        "specs": [{"kernel": s.kernel, "mangled": s.mangled, "file": s.file, "launches": list(s.launches),
                   "grid": list(s.grid), "block": list(s.block), "data": s.data, "source": s.source}
                  for s in written.entries],
        "skipped": [{"kernel": s.kernel, "launch": s.launch, "reason": s.reason} for s in written.skipped],
        "notes": notes,
    })
    lines = [f"regrapht capture: {len(recorded.launches)} launch{'es' if len(recorded.launches) != 1 else ''} of "
             f"{len({launch.mangled for launch in recorded.launches})} kernel(s) recorded from {program} "
             f"(exit {code}); {len(written.entries)} spec(s) in {options.out / SPECS}"]
    for entry in written.entries:
        lines.append(f"  {entry.kernel}: {entry.file} ({len(entry.launches)} launch"
                     f"{'es' if len(entry.launches) != 1 else ''}, grid {list(entry.grid)}, block {list(entry.block)}"
                     f"{', captured data' if entry.data else ''})")
    for skipped in written.skipped:
        lines.append(f"  {skipped.kernel}: no spec: {skipped.reason}")
    lines.extend(f"  note: {note}" for note in notes[:20])
    if len(notes) > 20:
        lines.append(f"  ... {len(notes) - 20} more notes in {options.out / MANIFEST}")
    exit_code = code if code != 0 else (1 if error else 0)
    return CaptureOutcome(exit_code, code, error, recorded, written, lines)
