"""Which source file declares a captured kernel, and its parameters' names.

A mangled name carries the parameter types but not their names, and a spec's launch
expressions (a candidate's grid `(n + 255) / 256`) are written over the names the source uses.
Owns finding the `__global__` declaration of a captured kernel in the `.cu`/`.cuh` files under
the folder the program ran in (bounded: `MAX_FILES` files of at most `inputs.MAX_SOURCE_BYTES`,
build and hidden folders skipped) and naming the spec's parameters after it; and renaming a
spec written with positional names (`p0`, `p1`, ...) after a given source's declaration.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from regrapht.errors import InputError
from regrapht.inputs import read_source
from regrapht.validate.signature import KernelDecl, kernel_decls

MAX_FILES = 2000
SOURCE_SUFFIXES = (".cu", ".cuh")
SKIPPED_FOLDERS = {"build", "node_modules", "__pycache__", "CMakeFiles"}
_TYPE_WORDS = {"int", "float", "double", "char", "short", "long", "bool", "unsigned", "signed", "size_t", "const",
               "void", "__restrict__", "restrict"}


@dataclass(frozen=True)
class Declared:
    """A kernel declaration found in a file: where, and its parameter names (None: unnamed)."""

    file: Path
    decl: KernelDecl
    names: tuple[str, ...] | None


def param_names(decl: KernelDecl) -> tuple[str, ...] | None:
    """The parameters' names as declared, or None when one is unnamed or names repeat."""
    names = []
    for text in decl.params:
        written = re.sub(r"\[\s*\]\s*$", "", text.split("=")[0].strip())
        match = re.search(r"([A-Za-z_]\w*)\s*$", written)
        if match is None or match.group(1) in _TYPE_WORDS or match.start() == 0:
            return None
        names.append(match.group(1))
    return tuple(names) if len(set(names)) == len(names) else None


def source_files(root: Path, *, limit: int = MAX_FILES) -> Iterator[Path]:
    count = 0
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in SKIPPED_FOLDERS
                               and not d.startswith("cmake-build"))
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                count += 1
                if count > limit:
                    return
                yield Path(folder) / name


class SourceIndex:
    """Kernel declarations of the sources under one folder, read once, looked up by name."""

    def __init__(self, root: Path | None) -> None:
        self.by_name: dict[str, list[Declared]] = {}
        if root is None:
            return
        for path in source_files(root):
            try:
                text, _warnings = read_source(path)
            except InputError:
                continue
            if "__global__" not in text:
                continue
            for decl in kernel_decls(text):
                self.by_name.setdefault(decl.name, []).append(Declared(path, decl, param_names(decl)))

    def find(self, name: str, params: int) -> Declared | None:
        """The declaration of kernel `name` (namespaces and template arguments dropped) with `params`
        parameters; the first one found with names, else None."""
        base = name.split("<", 1)[0].strip().split("::")[-1]
        for declared in self.by_name.get(base, []):
            if len(declared.decl.params) == params and declared.names is not None:
                return declared
        return None


def rename_positional(spec_text: str, names: tuple[str, ...]) -> str:
    """A capture spec with positional names `p0`..`pN` renamed to `names`, in names and expressions."""
    table = {f"p{i}": name for i, name in enumerate(names)}
    return re.sub(r"(?<![\w.(/])p(\d+)\b(?!\.)", lambda m: table.get(m.group(0), m.group(0)), spec_text)
