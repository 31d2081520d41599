"""The user-local overlay: search statistics learned on this machine, kept in their own file.

The bundled graph is read-only; verified outcomes (visits, mean reward, best speedup per arch)
go to a small msgpack file under the user's data dir (the caller passes the path). Saving is
atomic (temp file in the same directory, then rename), so a crash never leaves half a file, and
`merge_into_file` adds a run's new outcomes to what the file holds *now*, under a lock file, so
the editor and a CLI run (or parallel runs) that save the same overlay do not lose each other's.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgpack

from regrapht.errors import InputError
from regrapht.graph.types import EdgeStats
from regrapht.set_aside import set_aside

OVERLAY_FORMAT = "regrapht-graph-overlay"
OVERLAY_VERSION = 1
OVERLAY_NAME = "graph-overlay.msgpack"


def default_overlay_path(env: Mapping[str, str], home: Path) -> Path:
    """Where the overlay lives by default: $XDG_DATA_HOME/regrapht/, else ~/.local/share/regrapht/.

    The caller passes the environment and home directory (`os.environ`, `Path.home()`)."""
    base = env.get("XDG_DATA_HOME") or str(home / ".local" / "share")
    return Path(base) / "regrapht" / OVERLAY_NAME


class Overlay:
    """Edge statistics keyed by (u, v); pairs need not be edges of the graph."""

    def __init__(self, stats: dict[tuple[str, str], EdgeStats] | None = None) -> None:
        self._stats: dict[tuple[str, str], EdgeStats] = dict(stats or {})

    def get(self, u: str, v: str) -> EdgeStats:
        return self._stats.get((u, v), EdgeStats())

    def set(self, u: str, v: str, stats: EdgeStats) -> None:
        self._stats[(u, v)] = stats

    def items(self) -> Iterator[tuple[tuple[str, str], EdgeStats]]:
        return iter(list(self._stats.items()))

    def copy(self) -> Overlay:
        return Overlay(self._stats)

    def __len__(self) -> int:
        return len(self._stats)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Overlay) and other._stats == self._stats

    def to_document(self) -> dict[str, Any]:
        return {
            "format": OVERLAY_FORMAT,
            "version": OVERLAY_VERSION,
            "edges": [
                [u, v, s.visits, s.mean_reward, dict(sorted(s.best_speedup.items()))]
                for (u, v), s in sorted(self._stats.items())
            ],
        }


def check_header(document: object, expected_format: str, version: int, what: str, shown: str) -> dict[str, Any]:
    """`document` itself when it is a dict with this format and version; else InputError naming `shown`."""
    if not isinstance(document, dict) or document.get("format") != expected_format:
        raise InputError(f"not a ReGraphT {what} file", file=shown)
    if document.get("version") != version:
        raise InputError(f"unsupported {what} version {document.get('version')!r} (supported: {version})",
                         file=shown)
    return document


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that readers see the old file or the new one, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp creates 0600; keep the mode of the file replaced, else the usual 0644.
        os.chmod(temp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(temp, path)
    finally:
        if temp.exists():
            temp.unlink()


def save_overlay(overlay: Overlay, path: Path) -> None:
    atomic_write_bytes(path, msgpack.packb(overlay.to_document(), use_bin_type=True))


def load_overlay(path: Path) -> Overlay:
    """The overlay saved at `path`; an empty one if the file does not exist yet.

    A corrupt file is an InputError naming it (the caller may choose to start afresh)."""
    if not path.exists():
        return Overlay()
    shown = str(path)
    try:
        document = msgpack.unpackb(path.read_bytes(), raw=False, strict_map_key=False)
    except OSError as error:
        raise InputError(f"cannot read graph overlay: {error.strerror or error}", file=shown) from error
    except (ValueError, TypeError, msgpack.UnpackException) as error:  # TypeError: a list as a map key
        raise InputError(f"corrupt graph overlay ({error or 'empty file'})", file=shown) from error
    document = check_header(document, OVERLAY_FORMAT, OVERLAY_VERSION, "graph overlay", shown)
    overlay = Overlay()
    rows = document.get("edges")
    if not isinstance(rows, list):
        raise InputError("corrupt graph overlay: 'edges' is not a list", file=shown)
    for index, row in enumerate(rows):
        if not _valid_row(row):
            raise InputError(f"corrupt graph overlay: bad entry {index}", file=shown, key=f"edges[{index}]")
        u, v, visits, mean, best = row
        overlay.set(u, v, EdgeStats(int(visits), float(mean), {str(k): float(x) for k, x in best.items()}))
    return overlay


def load_overlay_or_set_aside(path: Path) -> Overlay:
    """`load_overlay`, except that an unreadable file is set aside (renamed, with a warning) and
    an empty overlay used in its place: old statistics are worth less than the user's search."""
    try:
        return load_overlay(path)
    except InputError as error:
        set_aside(path, "graph overlay", error.message)
        return Overlay()


def _valid_row(row: object) -> bool:
    if not (isinstance(row, list) and len(row) == 5):
        return False
    u, v, visits, mean, best = row
    return (
        isinstance(u, str) and isinstance(v, str) and isinstance(visits, int) and visits >= 0
        and isinstance(mean, int | float) and isinstance(best, dict)
        and all(isinstance(x, int | float) for x in best.values())
    )


def merge_into_file(path: Path, new_outcomes: Overlay) -> Overlay:
    """Add `new_outcomes` to the overlay saved at `path` and save the sum; returns it.

    Read, merge and write happen under an exclusive lock on a file beside the overlay, so
    concurrent savers serialise and each one's outcomes are kept. An unreadable overlay file is
    set aside (with a warning naming it): losing old statistics beats failing the user's search.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        current = load_overlay_or_set_aside(path)
        for (u, v), stats in new_outcomes.items():
            current.set(u, v, current.get(u, v).merged(stats))
        save_overlay(current, path)
        return current
    finally:
        os.close(lock)  # closing releases the lock
