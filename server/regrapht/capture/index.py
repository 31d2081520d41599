"""Finding the captures of a kernel: for `--capture DIR` on the command line and for the editor.

Owns the lookup from a capture directory and a kernel name to the spec to use (the kernel's
spec with the most recorded launches; `--spec` picks any other), and the discovery of capture
directories near a source file: `.regrapht/captures/*/capture.json` in the file's folder and
each parent (the default `--out` of `regrapht capture` run from there), at most `MAX_PARENTS` up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from regrapht.capture.manifest import MANIFEST, Capture, SpecEntry, load_capture
from regrapht.capture.sources import param_names, rename_positional
from regrapht.errors import InputError
from regrapht.inputs import MAX_SPEC_BYTES, read_text_bounded
from regrapht.validate.signature import kernel_decls

CAPTURES_DIR = Path(".regrapht") / "captures"
MAX_PARENTS = 6
MAX_CAPTURES = 64


@dataclass(frozen=True)
class KernelCapture:
    """One kernel's captured specs in one capture."""

    capture: Capture
    specs: tuple[SpecEntry, ...]

    @property
    def launches(self) -> int:
        return sum(len(s.launches) for s in self.specs)

    @property
    def spec_path(self) -> Path:
        return self.capture.directory / self.specs[0].file

    def summary(self) -> str:
        count = self.launches
        return f"captured from `{self.capture.program}` ({count} launch{'es' if count != 1 else ''})"


def spec_from_capture(directory: Path, kernel: str) -> Path:
    """The spec `--capture DIR` means for `kernel`; InputError naming the directory otherwise."""
    capture = load_capture(directory)
    specs = capture.specs_for(kernel)
    if not specs:
        known = ", ".join(sorted({s.kernel for s in capture.specs})) or "none"
        skipped = [s for s in capture.skipped if str(s.get("kernel", "")).split("<")[0].split("(")[0].split("::")[-1]
                   == kernel.split("<")[0]]
        why = f"; it was skipped: {skipped[0].get('reason')}" if skipped else ""
        raise InputError(f"the capture has no spec for kernel {kernel!r} (specs for: {known}){why}",
                         file=str(directory))
    return capture.directory / specs[0].file


def spec_for_source(directory: Path, kernel: str, source_text: str) -> Path:
    """`spec_from_capture`, with positional parameter names (`p0`, ...) renamed after the kernel's
    declaration in `source_text` (a spec beside the capture's, `NAME.named.regrapht.toml`)."""
    path = spec_from_capture(directory, kernel)
    text = read_text_bounded(path, MAX_SPEC_BYTES, "spec")
    positional = re.findall(r'^name = "p(\d+)"$', text, flags=re.M)
    if not positional:
        return path
    base = kernel.split("<", 1)[0].strip().split("::")[-1]
    for decl in kernel_decls(source_text):
        names = param_names(decl)
        if decl.name == base and names is not None and len(names) == len(positional):
            named = path.with_name(path.name.replace(".regrapht.toml", ".named.regrapht.toml"))
            named.write_text(rename_positional(text, names), encoding="utf-8")
            return named
    return path


def captures_near(source: Path, *, max_parents: int = MAX_PARENTS) -> list[Path]:
    """Capture directories under `.regrapht/captures/` of `source`'s folder and its parents."""
    found: list[Path] = []
    folder = source.resolve().parent
    for _ in range(max_parents + 1):
        root = folder / CAPTURES_DIR
        try:
            if root.is_dir():
                found.extend(sorted(p for p in root.iterdir() if (p / MANIFEST).is_file())[:MAX_CAPTURES])
        except OSError:  # an unreadable folder is no capture
            pass
        if folder.parent == folder:
            break
        folder = folder.parent
    return found


def kernel_captures(source: Path, kernel: str) -> list[KernelCapture]:
    """Every readable capture near `source` that holds specs of `kernel`; unreadable ones are skipped."""
    out = []
    for directory in captures_near(source):
        try:
            capture = load_capture(directory)
        except InputError:
            continue
        specs = capture.specs_for(kernel)
        if specs:
            out.append(KernelCapture(capture, tuple(specs)))
    return out
