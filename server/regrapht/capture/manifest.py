"""The capture directory (docs/capture.md): reading what the injection library wrote, and the manifest.

Owns the formats: `launches.jsonl` (one JSON object per line, an `enter` line when a launch is
seen and an `exit` line once it ran; the last line of an id wins, a torn last line of a crashed
program is skipped with a note), `status.json` (the library's state or why it stopped),
`counts.json` (matching launches per kernel, written when the program exits normally), the raw
allocation snapshots under `data/`, and `capture.json`, the manifest `regrapht capture` writes
once the program ended: the command, its exit, the kernels and the specs made from them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regrapht.errors import InputError

MANIFEST = "capture.json"
LAUNCHES = "launches.jsonl"
STATUS = "status.json"
COUNTS = "counts.json"
FORMAT = "regrapht-capture"
VERSION = 1
MAX_MANIFEST_BYTES = 64 << 20


@dataclass(frozen=True)
class Written:
    """Bytes of an allocation that differ after the launch: how many, the first and last offset."""

    bytes: int
    first: int
    last: int


@dataclass(frozen=True)
class Allocation:
    base: int
    size: int
    managed: bool = False
    memory_type: int = 0
    before: str | None = None  # data file, relative to the capture directory
    after: str | None = None  # written only when some byte changed
    written: Written | None = None  # None: not compared (no data, over the cap, ...)
    note: str | None = None


@dataclass(frozen=True)
class Param:
    offset: int
    size: int
    data: bytes
    allocation: int | None = None  # index into Launch.allocations when the value points into one
    alloc_offset: int = 0


@dataclass(frozen=True)
class Launch:
    id: int
    phase: str
    api: str
    mangled: str
    demangled: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    stream: int
    device: int
    capturing: bool
    param_info: str
    params: tuple[Param, ...]
    allocations: tuple[Allocation, ...]
    notes: tuple[str, ...] = ()
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.phase == "exit"


@dataclass(frozen=True)
class LibraryStatus:
    state: str  # "capturing" or "failed"; "absent" when the library never started
    error: str | None = None
    code: int = 0


@dataclass
class Recorded:
    """What the library wrote: the launches (last line per id), its status, the counts, notes."""

    launches: list[Launch]
    status: LibraryStatus
    seen: dict[str, int] | None
    notes: list[str] = field(default_factory=list)


def _dims(value: Any) -> tuple[int, int, int]:
    values = [int(v) for v in value][:3] + [1, 1, 1]
    return (values[0], values[1], values[2])


def launch_from_json(data: dict[str, Any]) -> Launch:
    allocations = []
    for a in data.get("allocations", []):
        written = a.get("written")
        allocations.append(Allocation(
            int(a["base"]), int(a["size"]), bool(a.get("managed", False)), int(a.get("memory_type", 0)),
            a.get("before"), a.get("after"),
            None if written is None else Written(int(written["bytes"]), int(written["first"]), int(written["last"])),
            a.get("note")))
    params = tuple(Param(int(p["offset"]), int(p["size"]), bytes.fromhex(p["hex"]),
                         None if p.get("allocation") is None else int(p["allocation"]), int(p.get("alloc_offset", 0)))
                   for p in data.get("params", []))
    return Launch(int(data["id"]), str(data.get("phase", "exit")), str(data.get("api", "")), str(data["mangled"]),
                  str(data.get("demangled") or data["mangled"]), _dims(data["grid"]), _dims(data["block"]),
                  int(data.get("shared_bytes", 0)), int(data.get("stream", 0)), int(data.get("device", -1)),
                  bool(data.get("capturing", False)), str(data.get("param_info", "none")), params,
                  tuple(allocations), tuple(str(n) for n in data.get("notes", [])), data.get("error"))


def read_recorded(directory: Path) -> Recorded:
    """Everything the injection library left in `directory` (launches so far after a crash too)."""
    notes: list[str] = []
    by_id: dict[int, Launch] = {}
    path = directory / LAUNCHES
    if path.is_file():
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                launch = launch_from_json(json.loads(line))
            except (ValueError, KeyError, TypeError) as error:
                notes.append(f"{LAUNCHES}:{number}: unreadable line skipped ({error})")
                continue
            by_id[launch.id] = launch
    for launch in by_id.values():
        if not launch.complete:
            notes.append(f"launch {launch.id} ({launch.mangled}) was seen but the program stopped before it "
                         "returned: its data after the launch is missing")
    status = LibraryStatus("absent")
    status_path = directory / STATUS
    if status_path.is_file():
        try:
            raw = json.loads(status_path.read_text(encoding="utf-8"))
            status = LibraryStatus(str(raw.get("state", "failed")), raw.get("error"), int(raw.get("code", 0)))
        except (ValueError, TypeError, AttributeError) as error:
            status = LibraryStatus("failed", f"{STATUS} is not readable JSON ({error})")
    seen = None
    counts = directory / COUNTS
    if counts.is_file():
        try:
            seen = {str(k): int(v) for k, v in json.loads(counts.read_text(encoding="utf-8"))["seen"].items()}
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            notes.append(f"{COUNTS} is not readable ({error})")
    return Recorded(sorted(by_id.values(), key=lambda item: item.id), status, seen, notes)


@dataclass(frozen=True)
class SpecEntry:
    """One spec a capture produced: the kernel (as the spec names it), its file, the launches."""

    kernel: str
    mangled: str
    file: str  # relative to the capture directory
    launches: tuple[int, ...]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    data: bool  # inputs and outputs from the captured buffers
    source: str | None = None  # the file declaring the kernel, when one was found under the program's folder


@dataclass(frozen=True)
class Capture:
    """A read `capture.json`."""

    directory: Path
    command: tuple[str, ...]
    exit_code: int | None
    kernels: tuple[dict[str, Any], ...]
    specs: tuple[SpecEntry, ...]
    skipped: tuple[dict[str, Any], ...]
    notes: tuple[str, ...]
    data: bool

    @property
    def program(self) -> str:
        return self.command[0] if self.command else "?"

    def specs_for(self, kernel: str) -> list[SpecEntry]:
        """The specs of `kernel` (its name as the spec writes it, or the base name), most launches first."""
        base = kernel.split("<", 1)[0].strip()
        exact = [s for s in self.specs if s.kernel == kernel]
        found = exact or [s for s in self.specs if s.kernel.split("<", 1)[0].strip().split("::")[-1] == base]
        return sorted(found, key=lambda s: -len(s.launches))


def load_capture(directory: Path) -> Capture:
    """The manifest of a capture directory; InputError naming the file when it is not one."""
    path = directory / MANIFEST
    if not path.is_file():
        raise InputError(f"not a capture directory (no {MANIFEST}; make one with `regrapht capture -- CMD`)",
                         file=str(directory))
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise InputError("the manifest is larger than 64 MiB", file=str(path))
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"not readable JSON: {error}", file=str(path)) from error
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise InputError(f"not a ReGraphT capture manifest (format is not {FORMAT!r})", file=str(path))
    try:
        specs = tuple(SpecEntry(str(s["kernel"]), str(s["mangled"]), str(s["file"]),
                                tuple(int(i) for i in s["launches"]), _dims(s["grid"]), _dims(s["block"]),
                                bool(s.get("data", False)), None if s.get("source") is None else str(s["source"]))
                      for s in raw.get("specs", []))
        return Capture(directory, tuple(str(c) for c in raw.get("command", [])),
                       None if raw.get("exit_code") is None else int(raw["exit_code"]),
                       tuple(raw.get("kernels", [])), specs, tuple(raw.get("skipped", [])),
                       tuple(str(n) for n in raw.get("notes", [])), bool(raw.get("data", False)))
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"malformed manifest: {error}", file=str(path)) from error


def write_manifest(directory: Path, manifest: dict[str, Any]) -> Path:
    path = directory / MANIFEST
    partial = path.with_name(MANIFEST + ".tmp")
    partial.write_text(json.dumps({"format": FORMAT, "version": VERSION, **manifest}, indent=2) + "\n",
                       encoding="utf-8")
    partial.replace(path)
    return path
