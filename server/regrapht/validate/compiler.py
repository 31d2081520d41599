"""nvcc compilation of one CUDA source to a cubin, with diagnostics and the ptxas resource report.

Owns: finding nvcc (PATH or $CUDA_HOME/bin) and a demangler, the nvcc command line, parsing
nvcc/ptxas messages into `Diagnostic`s mapped back to the user's file and line, parsing
`ptxas -v` into `KernelResources` per entry, the on-disk compile cache and compiling many
sources in parallel.

The cache keys on what nvcc compiled: the source, the project's `CompileFlags` (compile_db.py),
the arch, the nvcc version, the include search environment (CPATH, ...), and the content of every
file the compile included (the dependency list the host preprocessor writes while it preprocesses
the device code, `-Xcompiler -MD,-MF,...`: the files the cubin was built from, in the same pass;
nvcc's own `-MD` would preprocess the file once more, for the host side). An entry is
stored under the key of everything but the included files and holds their hashes; a lookup
whose included files changed since (a header fixed or broken) compiles again. A failure whose
included files are unknown (a missing header stops the dependency output) is not cached.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from stat import S_ISREG
from typing import Literal

import msgpack

from regrapht.children import ToolLimits, ToolRun, run_tool
from regrapht.errors import InputError
from regrapht.limits import DEFAULT_ARCH
from regrapht.set_aside import row_fits, set_aside
from regrapht.validate.compile_db import NO_FLAGS, CompileFlags

Severity = Literal["error", "warning", "remark"]
CACHE_FORMAT = 1


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int | None  # 1-based; None for messages without a line (ptxas, driver)
    severity: Severity
    message: str
    code: str | None = None  # e.g. "177-D"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.severity}: {self.message}"


@dataclass(frozen=True)
class KernelResources:
    """What `ptxas -v` says about one entry function."""

    mangled: str
    name: str  # demangled signature where a demangler exists, else the mangled name
    registers: int = 0
    shared_static_bytes: int = 0
    constant_bytes: int = 0
    stack_bytes: int = 0  # stack frame (local memory per thread)
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    barriers: int = 0

    @property
    def spill_bytes(self) -> int:
        return self.spill_store_bytes + self.spill_load_bytes

    @property
    def local_bytes(self) -> int:
        return self.stack_bytes

    @property
    def short_name(self) -> str:
        return re.sub(r"^void\s+", "", self.name).split("(", 1)[0]


@dataclass(frozen=True)
class CompileResult:
    ok: bool
    key: str
    arch: str
    cubin: bytes | None
    diagnostics: tuple[Diagnostic, ...]
    kernels: dict[str, KernelResources]  # by mangled name
    log: str = ""
    seconds: float = 0.0
    cached: bool = False
    command: tuple[str, ...] = field(default=())
    # what the compile included and each file's sha256 (None: unknown, e.g. a missing header)
    dependencies: tuple[tuple[str, str], ...] | None = None
    flags: CompileFlags = NO_FLAGS  # the project's flags it was compiled with

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    def first_error(self) -> str:
        errors = self.errors
        if errors:
            return str(errors[0])
        return self.log.strip().splitlines()[-1] if self.log.strip() else "compilation failed"

    def entries(self) -> list[str]:
        return list(self.kernels)


@dataclass(frozen=True)
class PtxResult:
    ptx: str | None  # None when nvcc failed (see diagnostics)
    source_name: str  # the name the source had in the compile (the `.file` entries of the PTX)
    diagnostics: tuple[Diagnostic, ...]


DEPENDENCY_FILE = "out.d"  # the included files of a compile, relative to its temporary folder
NVCC_NOT_FOUND = "nvcc not found on PATH or in $CUDA_HOME/bin; install the CUDA toolkit"


def find_nvcc(env: Mapping[str, str]) -> Path | None:
    """nvcc on PATH, else in $CUDA_HOME/bin or $CUDA_PATH/bin, else /usr/local/cuda/bin."""
    found = shutil.which("nvcc", path=env.get("PATH"))
    if found:
        return Path(found)
    for root in (env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / "nvcc").is_file():
            return Path(root) / "bin" / "nvcc"
    return None


def find_cuda_tool(name: str, env: Mapping[str, str]) -> Path | None:
    """A CUDA toolkit program (`compute-sanitizer`, `ncu`): on PATH, else beside nvcc, else in
    $CUDA_HOME/bin or $CUDA_PATH/bin."""
    found = shutil.which(name, path=env.get("PATH"))
    if found:
        return Path(found)
    nvcc = find_nvcc(env)
    roots = [nvcc.parent] if nvcc is not None else []
    roots += [Path(r) / "bin" for r in (env.get("CUDA_HOME"), env.get("CUDA_PATH")) if r]
    return next((r / name for r in roots if (r / name).is_file()), None)


def find_demangler(nvcc: Path | None, env: Mapping[str, str]) -> Path | None:
    """cu++filt beside nvcc or on PATH, else binutils' c++filt (both read Itanium names)."""
    if nvcc is not None and (nvcc.parent / "cu++filt").is_file():
        return nvcc.parent / "cu++filt"
    for tool in ("cu++filt", "c++filt"):
        found = shutil.which(tool, path=env.get("PATH"))
        if found:
            return Path(found)
    return None


def make_demangler(tool: Path | None) -> Callable[[Sequence[str]], dict[str, str]] | None:
    if tool is None:
        return None

    def demangle(names: Sequence[str]) -> dict[str, str]:
        if not names:
            return {}
        done = run_tool([str(tool)], ToolLimits(timeout_s=30), input_text="\n".join(names) + "\n")
        lines = done.stdout.splitlines()
        return dict(zip(names, lines, strict=False)) if done.returncode == 0 else {}

    return demangle


_DIAG = re.compile(
    r"^(?P<file>[^\s(][^(]*?)\((?P<line>\d+)\): (?P<sev>error|warning|remark|catastrophic error)"
    r"(?: #(?P<code>[\w-]+))?: (?P<msg>.*)$"
)
_GCC_DIAG = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)? (?P<sev>fatal error|error|warning): (?P<msg>.*)$")
_PTXAS_DIAG = re.compile(r"^ptxas (?P<sev>error|warning|fatal)\s*: (?P<msg>.*)$")


def parse_diagnostics(log: str, *, source_name: str, display_file: str) -> list[Diagnostic]:
    """nvcc/cudafe/gcc/ptxas messages; `source_name` (the temp copy) is reported as `display_file`."""
    diagnostics: list[Diagnostic] = []

    def where(file: str) -> str:
        return display_file if Path(file).name == source_name else file

    for line in log.splitlines():
        line = line.rstrip()
        if match := _DIAG.match(line):
            sev: Severity = "error" if "error" in match.group("sev") else (
                "warning" if match.group("sev") == "warning" else "remark")
            diagnostics.append(Diagnostic(where(match.group("file")), int(match.group("line")),
                                          sev, match.group("msg").strip(), match.group("code")))
        elif match := _GCC_DIAG.match(line):
            sev = "warning" if match.group("sev") == "warning" else "error"
            diagnostics.append(Diagnostic(where(match.group("file")), int(match.group("line")),
                                          sev, match.group("msg").strip()))
        elif match := _PTXAS_DIAG.match(line):
            sev = "warning" if match.group("sev") == "warning" else "error"
            diagnostics.append(Diagnostic(display_file, None, sev, "ptxas: " + match.group("msg").strip()))
    return diagnostics


def parse_ptxas_report(log: str) -> dict[str, KernelResources]:
    """`ptxas info` lines of `-Xptxas -v` -> resources per entry function (mangled name)."""
    kernels: dict[str, KernelResources] = {}
    current: str | None = None
    values: dict[str, dict[str, int]] = {}
    for line in log.splitlines():
        if match := re.search(r"Compiling entry function '([^']+)'", line):
            current = match.group(1)
            values.setdefault(current, {})
            continue
        if match := re.search(r"Function properties for (\S+)", line):
            name = match.group(1)
            current = name if name in values else None
            continue
        if current is None:
            continue
        fields = values[current]
        if match := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line):
            fields["stack"], fields["spill_st"], fields["spill_ld"] = map(int, match.groups())
        if match := re.search(r"Used (\d+) registers", line):
            fields["registers"] = int(match.group(1))
            if m := re.search(r"used (\d+) barriers", line):
                fields["barriers"] = int(m.group(1))
            if m := re.search(r"(\d+) bytes smem", line):
                fields["smem"] = int(m.group(1))
            if m := re.search(r"(\d+) bytes cmem\[0\]", line):
                fields["cmem"] = int(m.group(1))
            if m := re.search(r"(\d+) bytes lmem", line):
                fields["stack"] = max(fields.get("stack", 0), int(m.group(1)))
    for name, fields in values.items():
        kernels[name] = KernelResources(
            mangled=name, name=name, registers=fields.get("registers", 0),
            shared_static_bytes=fields.get("smem", 0), constant_bytes=fields.get("cmem", 0),
            stack_bytes=fields.get("stack", 0), spill_store_bytes=fields.get("spill_st", 0),
            spill_load_bytes=fields.get("spill_ld", 0), barriers=fields.get("barriers", 0),
        )
    return kernels


def _to_wire(result: CompileResult) -> bytes:
    return msgpack.packb({
        "format": CACHE_FORMAT, "ok": result.ok, "key": result.key, "arch": result.arch,
        "cubin": result.cubin, "log": result.log, "seconds": result.seconds,
        "command": list(result.command),
        "dependencies": [list(d) for d in result.dependencies] if result.dependencies is not None else None,
        "diagnostics": [[d.file, d.line, d.severity, d.message, d.code] for d in result.diagnostics],
        "kernels": [[k.mangled, k.name, k.registers, k.shared_static_bytes, k.constant_bytes, k.stack_bytes,
                     k.spill_store_bytes, k.spill_load_bytes, k.barriers] for k in result.kernels.values()],
    }, use_bin_type=True)


_WIRE_FIELDS: dict[str, type | tuple[type, ...]] = {
    "ok": bool, "key": str, "arch": str, "cubin": (bytes, type(None)), "log": str, "seconds": (int, float),
    "command": list, "diagnostics": list, "kernels": list,
}
_KERNEL_ROW = (str, str, int, int, int, int, int, int, int)
DIAGNOSTIC_ROW = (str, (int, type(None)), str, str, (str, type(None)))  # a Diagnostic in a cache file


def _from_wire(data: bytes) -> CompileResult | str:
    """The cached result, or why the bytes are not one (a cache entry of another shape)."""
    try:
        raw = msgpack.unpackb(data, raw=False)
    except (ValueError, TypeError, msgpack.UnpackException) as error:
        return f"not msgpack: {error or 'empty file'}"
    if not isinstance(raw, dict) or raw.get("format") != CACHE_FORMAT:
        return f"not a format-{CACHE_FORMAT} compile cache entry"
    for name, kind in _WIRE_FIELDS.items():
        if not isinstance(raw.get(name), kind):
            return f"field {name!r} is missing or of the wrong type"
    if not all(row_fits(k, _KERNEL_ROW) for k in raw["kernels"]):
        return "a kernel entry has the wrong shape"
    if not all(row_fits(d, DIAGNOSTIC_ROW) and d[2] in ("error", "warning", "remark") for d in raw["diagnostics"]):
        return "a diagnostic has the wrong shape"
    if not all(isinstance(part, str) for part in raw["command"]):
        return "the command is not a list of strings"
    dependencies = raw.get("dependencies")  # absent in entries written before it existed: unknown
    if dependencies is not None and not (isinstance(dependencies, list)
                                         and all(row_fits(d, (str, str)) for d in dependencies)):
        return "the dependencies are not a list of (path, hash) pairs"
    kernels = {k[0]: KernelResources(*k) for k in raw["kernels"]}
    return CompileResult(
        ok=raw["ok"], key=raw["key"], arch=raw["arch"], cubin=raw["cubin"],
        diagnostics=tuple(Diagnostic(*d) for d in raw["diagnostics"]), kernels=kernels,
        log=raw["log"], seconds=float(raw["seconds"]), cached=True, command=tuple(raw["command"]),
        dependencies=tuple((d[0], d[1]) for d in dependencies) if dependencies is not None else None,
    )


# `#include` of a device or process file: /dev/stdin would read the server's JSON-RPC stream
# (were stdin not /dev/null), /dev/zero and /dev/urandom never end, /proc and /sys files change.
_DEVICE_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](?P<path>/(?:dev|proc|sys)/[^>"]*)[>"]', re.MULTILINE)


def refuse_device_includes(source: str, file: str) -> Diagnostic | None:
    """An error for the first `#include` naming a file under /dev, /proc or /sys, else None.

    A cheap first line only: an include built by a macro still reaches nvcc, whose stdin is
    /dev/null and whose memory, file size and time are limited (`regrapht.children`)."""
    match = _DEVICE_INCLUDE.search(source)
    if match is None:
        return None
    line = source.count("\n", 0, match.start()) + 1
    return Diagnostic(file, line, "error",
                      f"#include of '{match.group('path')}' refused: device and process files are never compiled")


_UNRESOLVED_EXTERN = re.compile(r"Unresolved extern function '([^']+)'")


def unresolved_externs(log: str, file: str,
                       demangle: Callable[[Sequence[str]], dict[str, str]] | None) -> Diagnostic | None:
    """An error that says what ptxas's "Unresolved extern function" means: the file calls a device
    function it only declares, defined in another file and joined by device linking (a project
    built with `-rdc=true`); one file cannot be compiled to a loadable cubin, checked or timed
    alone. The functions are named as `demangle` gives them (without one, or for a name it does
    not know: mangled)."""
    mangled = list(dict.fromkeys(_UNRESOLVED_EXTERN.findall(log)))
    if not mangled:
        return None
    names = demangle(mangled) if demangle is not None else {}
    shown = ", ".join(f"`{names.get(m, m)}`" for m in mangled)
    return Diagnostic(file, None, "error",
                      f"calls the device function {shown}, which this file declares but does not define: it is "
                      "defined in another file of the project and joined at build time by device linking "
                      "(nvcc -rdc=true); a kernel is compiled, checked and timed from its own file, so the "
                      "function's definition must be in the file or a header it includes")


def _stopped_by_limits(done: ToolRun, limits: ToolLimits, file: str) -> Diagnostic | None:
    """The error for a compile that hit a limit: its time, or its memory or file size (the tool
    or one of its children died of a signal: std::bad_alloc, SIGKILL, SIGXFSZ)."""
    if done.timed_out:
        return Diagnostic(file, None, "error",
                          f"nvcc did not finish within {limits.timeout_s:.0f} s; it and every process it "
                          "started were stopped")
    died = re.search(r"'([^']+)' died due to signal (\d+)|(out of memory|virtual memory exhausted"
                     r"|std::bad_alloc|File size limit exceeded)", done.output)
    if done.signal is None and died is None:
        return None
    what = (died.group(1) if died is not None else None) or "nvcc"
    return Diagnostic(file, None, "error",
                      f"{what} stopped at its resource limits ({limits.describe()}); the source makes the "
                      "compiler use too much memory or output (a macro or template explosion?)")


_INCLUDE_ENVIRONMENT = ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS")


def _include_environment() -> str:
    """The environment nvcc (a child of this process) searches headers by or adds flags from."""
    return "\0".join(f"{name}={os.environ.get(name, '')}" for name in _INCLUDE_ENVIRONMENT)


def parse_dependencies(text: str, compiled_in: Path) -> tuple[str, ...]:
    """The included files of a make-style dependency file (`-MD -MF`), absolute; the compiled
    source itself (the copy in `compiled_in`) left out."""
    joined = text.replace("\\\n", " ")
    _target, _, rest = joined.partition(": ")
    files: list[str] = []
    for word in re.findall(r"(?:\\.|[^\s\\])+", rest):
        name = re.sub(r"\\(.)", r"\1", word)
        path = Path(name) if os.path.isabs(name) else compiled_in / name
        if path.parent != compiled_in:
            files.append(os.path.normpath(path))
    return tuple(dict.fromkeys(files))


def content_key(base_key: str, dependencies: Sequence[tuple[str, str]]) -> str:
    """The key of what nvcc compiled: the base key and every included file's path and hash."""
    digest = hashlib.sha256(base_key.encode())
    for path, sha in dependencies:
        digest.update(f"\0{path}\0{sha}".encode())
    return digest.hexdigest()


class FileHashes:
    """sha256 of files, remembered per (inode, size, mtime, ctime): a lookup of a cached compile
    re-hashes only the included files that changed on disk (thread-safe)."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, int, int, int, int], str] = {}
        self._lock = threading.Lock()

    def of(self, path: Path) -> str | None:
        """The file's hash; None when it cannot be read or is not a regular file (then no cached
        compile that included it holds): an include of /dev/stdin must never read our stdin."""
        try:
            stat = path.stat()
        except OSError:
            return None
        if not S_ISREG(stat.st_mode):
            return None
        identity = (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
        with self._lock:
            known = self._known.get(identity)
        if known is not None:
            return known
        try:
            sha = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            return None
        with self._lock:
            self._known[identity] = sha
        return sha

    def of_all(self, paths: Sequence[str]) -> tuple[tuple[str, str], ...] | None:
        """(path, hash) per file; None when one cannot be read."""
        pairs = []
        for path in paths:
            sha = self.of(Path(path))
            if sha is None:
                return None
            pairs.append((path, sha))
        return tuple(pairs)


class CompileCache:
    """Compile results on disk, one msgpack file per key; a missing dir disables nothing."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / "compile" / f"{key}.msgpack"

    def get(self, key: str) -> CompileResult | None:
        """The cached result for `key`; None if there is none or the entry is unreadable (then it
        is set aside with a warning, and the compile that follows writes a good one)."""
        path = self._path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            set_aside(path, "compile cache entry", error.strerror or str(error))
            return None
        result = _from_wire(data)
        if isinstance(result, str):
            set_aside(path, "compile cache entry", result)
            return None
        if result.ok and result.cubin is None:
            set_aside(path, "compile cache entry", "a successful result without a cubin")
            return None
        if result.dependencies is None and result.key != key:
            set_aside(path, "compile cache entry", "it holds another key's result")
            return None
        return result

    def put(self, result: CompileResult, base_key: str | None = None) -> None:
        """Store `result` under `base_key` (the key before its included files; default its key)."""
        path = self._path(base_key or result.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(_to_wire(result))
        os.replace(tmp, path)


class Compiler:
    """Compiles CUDA sources to cubins for one arch with one nvcc; thread-safe."""

    def __init__(
        self,
        nvcc: Path,
        *,
        cache: CompileCache | None = None,
        flags: Sequence[str] = ("-O3", "-std=c++17"),
        demangler: Path | None = None,
        timeout_s: float = 300.0,
    ) -> None:
        self.nvcc = nvcc
        self.cache = cache
        self.flags = tuple(flags)
        self.demangle = make_demangler(demangler)
        self.timeout_s = timeout_s
        self.limits = ToolLimits(timeout_s=timeout_s)
        self._version: str | None = None
        self._hashes = FileHashes()

    @classmethod
    def found(cls, env: Mapping[str, str], cache_dir: Path | None) -> Compiler | None:
        """The nvcc of the environment (`find_nvcc`) compiling into `cache_dir`; None without one."""
        nvcc = find_nvcc(env)
        if nvcc is None:
            return None
        return cls(nvcc, cache=CompileCache(cache_dir) if cache_dir else None,
                   demangler=find_demangler(nvcc, env))

    @classmethod
    def from_environment(cls, env: Mapping[str, str], cache_dir: Path | None) -> Compiler:
        compiler = cls.found(env, cache_dir)
        if compiler is None:
            raise InputError(NVCC_NOT_FOUND)
        return compiler

    @property
    def version(self) -> str:
        if self._version is None:
            done = run_tool([str(self.nvcc), "--version"], ToolLimits(timeout_s=60))
            match = re.search(r"release [\d.]+, V([\d.]+)", done.stdout)
            self._version = match.group(1) if match else done.stdout.strip()[-80:]
        return self._version

    def cache_key(self, source: str, arch: str, include_dirs: Sequence[str] = (),
                  flags: CompileFlags = NO_FLAGS) -> str:
        """The key of a compile before its included files are known: the source, the flags, the
        arch, nvcc's version, the include dirs and the include search environment."""
        digest = hashlib.sha256()
        for part in (source, " ".join(self.flags), arch, self.version, "\0".join(include_dirs),
                     "\0".join(flags.arguments()), _include_environment()):
            digest.update(part.encode())
            digest.update(b"\0")
        return digest.hexdigest()

    def _command(self, kind: str, arch: str, flags: CompileFlags) -> list[str]:
        """nvcc up to the output: our flags (the project's `-std=` replaces ours), then the project's."""
        base = [f for f in self.flags if not (flags.std is not None and f.startswith("-std="))]
        return [str(self.nvcc), kind, f"-arch={arch}", *base, *flags.arguments()]

    def _current(self, hit: CompileResult, base_key: str) -> bool:
        """A cached result still holds: its included files are known and unchanged."""
        if hit.dependencies is None:
            return False
        return hit.key == content_key(base_key, hit.dependencies) and all(
            self._hashes.of(Path(path)) == sha for path, sha in hit.dependencies)

    def compile(self, source: str, *, arch: str = DEFAULT_ARCH, file: str = "kernel.cu",
                include_dirs: Sequence[str] = (), flags: CompileFlags = NO_FLAGS) -> CompileResult:
        """Compile `source` (shown as `file` in diagnostics) with the project's `flags` to a
        cubin; cached by what nvcc compiled (the module docstring)."""
        if not re.fullmatch(r"sm_\d+[af]?", arch):
            raise InputError(f"arch must look like sm_90, got {arch!r}", key="arch")
        base_key = self.cache_key(source, arch, (*include_dirs, file), flags)
        if self.cache is not None and (hit := self.cache.get(base_key)) is not None and self._current(hit, base_key):
            return replace(hit, flags=flags)
        name = Path(file).name if file.endswith((".cu", ".cuh")) else "kernel.cu"
        if (refused := refuse_device_includes(source, file)) is not None:
            return CompileResult(ok=False, key=base_key, arch=arch, cubin=None, diagnostics=(refused,),
                                 kernels={}, log=str(refused), flags=flags)
        with tempfile.TemporaryDirectory(prefix="regrapht-nvcc-") as tmp:
            src = Path(tmp) / name
            src.write_text(source, encoding="utf-8")
            out = Path(tmp) / "out.cubin"
            deps = Path(tmp) / DEPENDENCY_FILE
            # -x cu: a header (.cuh) compiles as CUDA; the included files: written by the host
            # preprocessor while it preprocesses the device code (in `tmp`, nvcc's and its cwd)
            command = [*self._command("-cubin", arch, flags), "-Xptxas", "-v",
                       *(f"-I{d}" for d in include_dirs), "-Xcompiler", f"-MD,-MF,{DEPENDENCY_FILE}",
                       "-o", str(out), "-x", "cu", name]
            started = time.monotonic()
            done = run_tool(command, self.limits, cwd=tmp)
            log, returncode = done.output, (-1 if done.timed_out else done.returncode)
            seconds = time.monotonic() - started
            cubin = out.read_bytes() if returncode == 0 and out.is_file() else None
            included = parse_dependencies(deps.read_text(encoding="utf-8", errors="replace"), Path(tmp)) \
                if deps.is_file() else None
        dependencies = self._hashes.of_all(included) if included is not None else None
        diagnostics = parse_diagnostics(log, source_name=name, display_file=file)
        stopped = _stopped_by_limits(done, self.limits, file)
        externs = unresolved_externs(log, file, self.demangle) if returncode != 0 else None
        if stopped is not None:
            diagnostics.insert(0, stopped)
        elif externs is not None:
            diagnostics.insert(0, externs)
        elif returncode != 0 and not any(d.severity == "error" for d in diagnostics):
            last = log.strip().splitlines()[-1] if log.strip() else f"nvcc exited with {returncode}"
            diagnostics.append(Diagnostic(file, None, "error", last))
        kernels = parse_ptxas_report(log) if cubin is not None else {}
        if kernels and self.demangle is not None:
            names = self.demangle([k for k in kernels if k.startswith("_Z")])
            kernels = {k: replace(v, name=names.get(k, k)) for k, v in kernels.items()}
        key = content_key(base_key, dependencies) if dependencies is not None else base_key
        result = CompileResult(ok=cubin is not None, key=key, arch=arch, cubin=cubin,
                               diagnostics=tuple(diagnostics), kernels=kernels, log=log,
                               seconds=seconds, command=tuple(command), dependencies=dependencies, flags=flags)
        # a limit hit is not cached (limits change), nor a result whose included files are unknown
        if self.cache is not None and stopped is None and dependencies is not None:
            self.cache.put(result, base_key)
        return result

    def ptx(self, source: str, *, arch: str = DEFAULT_ARCH, file: str = "kernel.cu",
            include_dirs: Sequence[str] = (), flags: CompileFlags = NO_FLAGS,
            timeout_s: float | None = None) -> PtxResult:
        """Compile `source` to PTX with line information (`-lineinfo`): what the compiler made of
        each source line, for confirming findings (validate/ptx.py). Same limits and refusals as
        `compile` (`timeout_s` replaces its time limit); not cached on disk."""
        limits = self.limits if timeout_s is None else replace(self.limits, timeout_s=timeout_s)
        if not re.fullmatch(r"sm_\d+[af]?", arch):
            raise InputError(f"arch must look like sm_90, got {arch!r}", key="arch")
        name = Path(file).name if file.endswith((".cu", ".cuh")) else "kernel.cu"
        if name.endswith(".cuh"):
            name = name[:-1]  # nvcc compiles a header only under a .cu name
        if (refused := refuse_device_includes(source, file)) is not None:
            return PtxResult(None, name, (refused,))
        with tempfile.TemporaryDirectory(prefix="regrapht-ptx-") as tmp:
            Path(tmp, name).write_text(source, encoding="utf-8")
            out = Path(tmp) / "out.ptx"
            command = [*self._command("-ptx", arch, flags), "-lineinfo",
                       *(f"-I{d}" for d in include_dirs), "-o", str(out), name]
            done = run_tool(command, limits, cwd=tmp)
            ok = not done.timed_out and done.returncode == 0 and out.is_file()
            text = out.read_text(encoding="utf-8", errors="replace") if ok else None
        diagnostics = parse_diagnostics(done.output, source_name=name, display_file=file)
        stopped = _stopped_by_limits(done, limits, file)
        if stopped is not None:
            diagnostics.insert(0, stopped)
        return PtxResult(text, name, tuple(diagnostics))

    def compile_many(self, jobs: Sequence[tuple[str, str]], *, arch: str = DEFAULT_ARCH,
                     include_dirs: Sequence[str] = (), flags: CompileFlags = NO_FLAGS,
                     workers: int | None = None) -> list[CompileResult]:
        """Compile `(source, file)` pairs in parallel across CPU cores; results in input order."""
        count = workers or max(1, os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=count) as pool:
            futures = [pool.submit(self.compile, s, arch=arch, file=f, include_dirs=include_dirs, flags=flags)
                       for s, f in jobs]
            return [f.result() for f in futures]
