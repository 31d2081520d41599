"""Captured launches in the editor: the kernel card's "captured from `./app` (3 launches)" and the
CodeLens "Optimize against capture" (docs/capture.md).

Owns finding the captures of a kernel for an open document (`.regrapht/captures/*/` of the
file's folder and its parents, `capture.index`; a capture whose spec names another source file is
not this kernel's) and turning an `{uri, kernel, capture}` command argument into the spec the
optimize run uses. Reads small JSON manifests from disk: called in worker threads only. The
capture package is imported on first use, never at start-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from regrapht.lsp.features.common import file_path

if TYPE_CHECKING:
    from regrapht.capture.index import KernelCapture

CAPTURE_LENS_TITLE = "Optimize against capture"


def captures_for(uri: str, kernel: str) -> list[KernelCapture]:
    """The captures near the document that hold specs of `kernel` (none for untitled documents)."""
    path = file_path(uri)
    if path is None:
        return []
    from regrapht.capture.index import kernel_captures

    found = []
    for capture in kernel_captures(path, kernel):
        sources = {s.source for s in capture.specs if s.source}
        if sources and str(path.resolve()) not in sources:
            continue  # a kernel of the same name in another file
        found.append(capture)
    return found


def card_captures(uri: str, kernel: str) -> list[tuple[str, int, str]]:
    """(program, launches, spec file) of each capture, for `cards.kernel_card`."""
    return [(c.capture.program, c.launches, str(c.spec_path)) for c in captures_for(uri, kernel)]


def capture_lenses(uri: str, kernel: str, line: types.Range, command: str) -> list[types.CodeLens]:
    """One lens per capture: optimize the kernel against the capture's spec and data."""
    from regrapht.cards import capture_summary, plain_text

    lenses = []
    for capture in captures_for(uri, kernel):
        title = plain_text(f"{CAPTURE_LENS_TITLE} ({capture_summary(capture.capture.program, capture.launches)})")
        argument = {"uri": uri, "kernel": kernel, "capture": str(capture.capture.directory)}
        lenses.append(types.CodeLens(range=line, command=types.Command(title=title, command=command,
                                                                         arguments=[argument])))
    return lenses


def capture_spec(argument: object, kernel: str, text: str) -> Path | None:
    """The spec an optimize command's `capture` argument means for `kernel` (None without one);
    InputError when the folder is not a capture or holds no spec of the kernel."""
    if not isinstance(argument, dict) or not isinstance(argument.get("capture"), str):
        return None
    from regrapht.capture.index import spec_for_source

    return spec_for_source(Path(argument["capture"]), kernel, text)
