"""What nvcc generated for each source line: PTX (compiled with `-lineinfo`) read per `.loc`.

Owns parsing PTX text into `PtxFacts`: per 1-based line of the compiled file, how many
instructions operate on f64 values (arithmetic and conversions), the widths of its global
loads/stores, its shared/local accesses and barriers, its backward branches (a loop nvcc kept:
a fully unrolled loop has none), and the functions (`.entry`/`.func`,
demangled to their short names) that hold the code, including code inlined from the line.
`parse_ptx` is pure text processing; `ptx_facts` compiles a file's text with
`compiler.Compiler.ptx` (nvcc in a subprocess) and parses the result.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from regrapht.validate.compile_db import NO_FLAGS, CompileFlags

if TYPE_CHECKING:
    from regrapht.validate.compiler import Compiler

log = logging.getLogger(__name__)

_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+")
_FUNCTION = re.compile(r"^\s*(?:\.(?:visible|weak|extern)\s+)*\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)")
_INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)\s")
_TYPE_BYTES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "f16x2": 4,
               "b32": 4, "u32": 4, "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16}
_MANGLED = re.compile(r"^_Z(?:N\d*)?(\d+)")


@dataclass
class LineCode:
    """The instructions generated for one source line (over every function holding them)."""

    instructions: int = 0
    f64: int = 0
    global_widths: list[int] = field(default_factory=list)  # bytes per thread of each ld/st.global
    shared_accesses: int = 0
    local_accesses: int = 0
    barriers: int = 0
    backward_branches: int = 0  # `bra` to a label earlier in its function: the line closes a loop
    functions: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class PtxFacts:
    lines: dict[int, LineCode]

    def at(self, line: int) -> LineCode | None:
        return self.lines.get(line)

    def between(self, first: int, last: int) -> list[tuple[int, LineCode]]:
        """The lines from `first` to `last` (1-based, inclusive) that have code, in order."""
        return sorted((n, code) for n, code in self.lines.items() if first <= n <= last)


def short_name(symbol: str) -> str:
    """`_Z9gelu_tanhPKfPfi` -> `gelu_tanh`; an extern "C" name stays as it is."""
    match = _MANGLED.match(symbol)
    if match is None:
        return symbol
    length = int(match.group(1))
    start = match.end()
    return symbol[start:start + length] or symbol


def _access_bytes(parts: list[str]) -> int:
    vector = next((int(p[1:]) for p in parts if p in ("v2", "v4", "v8")), 1)
    element = next((_TYPE_BYTES[p] for p in reversed(parts) if p in _TYPE_BYTES), 4)
    return vector * element


def parse_ptx(text: str, source_name: str) -> PtxFacts:
    """Per-line facts of the file named `source_name` (matched by base name) in `text`."""
    main_files = {number for number, path in (m.groups() for m in map(_FILE.match, text.splitlines()) if m)
                  if PurePath(path).name == PurePath(source_name).name}
    lines: dict[int, LineCode] = {}
    function = ""
    current: LineCode | None = None
    labels: set[str] = set()  # the labels defined so far in the current function
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if stripped.startswith("$") and stripped.endswith(":"):
            labels.add(stripped[:-1])
            continue
        if stripped.startswith(".loc"):
            match = _LOC.match(stripped)
            if match is not None and match.group(1) in main_files:
                current = lines.setdefault(int(match.group(2)), LineCode())
            else:
                current = None  # code of a header (or of unknown origin): not the user's line
            continue
        if stripped.startswith("."):
            match = _FUNCTION.match(stripped)
            if match is not None:
                function = short_name(match.group(1))
                current = None
                labels = set()
            continue
        if current is None:
            continue
        match = _INSTRUCTION.match(stripped + " ")
        if match is None:
            continue
        opcode = match.group(1)
        parts = opcode.split(".")
        current.instructions += 1
        current.functions.add(function)
        if "f64" in parts:
            current.f64 += 1
        if parts[0] in ("ld", "st", "ldu", "red", "atom"):
            if "global" in parts:
                current.global_widths.append(_access_bytes(parts))
            elif "shared" in parts:
                current.shared_accesses += 1
            elif "local" in parts:
                current.local_accesses += 1
        elif parts[0] in ("bar", "barrier"):
            current.barriers += 1
        elif parts[0] == "bra" and stripped.rstrip(";").split()[-1] in labels:
            current.backward_branches += 1
    return PtxFacts(lines)


def ptx_facts(compiler: Compiler, text: str, path: Path | None, arch: str,
              flags: CompileFlags = NO_FLAGS, *, timeout_s: float | None = None) -> PtxFacts | None:
    """What nvcc generates per line of `text` (the file at `path`, whose folder is searched for
    includes, compiled with the project's `flags`); None when it does not compile (within
    `timeout_s`, else the compiler's limit)."""
    name = path.name if path is not None else "kernel.cu"
    include_dirs = (str(path.parent),) if path is not None else ()
    result = compiler.ptx(text, arch=arch, file=name, include_dirs=include_dirs, flags=flags, timeout_s=timeout_s)
    if result.ptx is None:
        log.debug("no compiler confirmation for %s: %s", name, result.diagnostics[:1])
        return None
    return parse_ptx(result.ptx, result.source_name)
