"""State files ReGraphT wrote and can no longer read: set aside, never fatal.

The graph overlay, compile-cache entries and the device-peaks cache are ReGraphT's own files;
when one is unreadable (cut short, overwritten, written by another version, valid msgpack of
the wrong shape) the user's work must not stop on it. The file is renamed beside itself with a
`.corrupt` suffix (kept for a bug report; a later one replaces an earlier one), a warning naming
it is logged, and the caller rebuilds it from scratch.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

logger = logging.getLogger(__name__)

SUFFIX = ".corrupt"
RowType = type | tuple[type, ...]


def set_aside(path: Path, what: str, reason: str) -> Path | None:
    """Rename the unreadable `path` to `path.corrupt` and log why; the new name, or None if
    it could not be moved (then it is left as it is: the caller rebuilds over it)."""
    target = path.with_name(path.name + SUFFIX)
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return None
    except OSError as error:
        logger.warning("unreadable %s %s (%s) could not be set aside: %s; rebuilding it", what, path, reason,
                       error.strerror or error)
        return None
    logger.warning("unreadable %s %s (%s): set aside as %s and rebuilt", what, path, reason, target.name)
    return target


def row_fits(row: object, types: tuple[RowType, ...]) -> bool:
    """`row` is a list with one value of each type in `types` (a bool is not an int here)."""
    return isinstance(row, list) and len(row) == len(types) and all(
        isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        for value, kind in zip(row, types, strict=True))
