"""Buffer initialisers of the kernel spec: parsing `uniform(-1, 1)` and friends, and drawing data.

Owns the initialiser language (`uniform`, `normal`, `randint`, `zeros`, `ones`, `const`,
`arange`, and `file(PATH)`, an extension: the elements of a `.npy` file, e.g. a captured buffer,
docs/kernel-spec.md): `InitSpec` as written (arguments are expressions over the kernel's scalars;
a file's path is text, relative to the spec's folder) and `Init` once evaluated. Turning an `Init`
into data is `regrapht.spec.draw` (numpy): the spec language
is read by the language server, which must not load numpy to start.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from regrapht.errors import InputError
from regrapht.spec.expr import Number, evaluate, names_in

_ARITY = {"uniform": 2, "normal": 2, "randint": 2, "zeros": 0, "ones": 0, "const": 1, "arange": 2}


@dataclass(frozen=True)
class Init:
    """An initialiser with its arguments evaluated (what the GPU worker draws from)."""

    kind: str
    params: tuple[float, ...] = ()
    path: str | None = None  # `file`: the .npy file, made absolute when the kernel is resolved

    @property
    def random(self) -> bool:
        return self.kind in ("uniform", "normal", "randint")

    def text(self) -> str:
        if self.kind == "file":
            return f"file({self.path})"
        if not _ARITY[self.kind]:
            return self.kind
        return f"{self.kind}({', '.join(_fmt(p) for p in self.params)})"


@dataclass(frozen=True)
class InitSpec:
    """An initialiser as the spec writes it: its arguments are expressions over every scalar of
    the kernel, evaluated when the kernel is resolved (so `randint(0, n)` follows `n`)."""

    kind: str
    args: tuple[str, ...] = ()
    path: str | None = None  # `file(PATH)`: the path as written

    @property
    def random(self) -> bool:
        return self.kind in ("uniform", "normal", "randint")

    def names(self) -> set[str]:
        return set().union(*(names_in(a) for a in self.args)) if self.args else set()

    def evaluate(self, names: Mapping[str, Number], *, file: str | None = None,
                 key: str | None = None) -> Init:
        if self.kind == "file":
            return Init("file", (), self.path)
        params = tuple(float(evaluate(a, names, file=file, key=key)) for a in self.args)
        shown = f"{self.kind}({', '.join(self.args)})"
        if self.kind in ("uniform", "randint") and not params[0] < params[1]:
            raise InputError(f"{self.kind}: lo must be less than hi in {shown!r} "
                             f"(here {_fmt(params[0])} and {_fmt(params[1])})", file=file, key=key)
        if self.kind == "normal" and params[1] < 0:
            raise InputError(f"normal: std must not be negative in {shown!r}", file=file, key=key)
        return Init(self.kind, params)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _split_args(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    parts.append(current)
    return [p.strip() for p in parts]


def _file_path(inner: str, text: str, file: str | None, key: str | None) -> str:
    """The path of `file(PATH)`: optionally quoted, a `.npy` file, no control characters."""
    path = inner.strip()
    if len(path) >= 2 and path[0] == path[-1] and path[0] in "'\"":
        path = path[1:-1]
    if not path or len(path) > 4096 or any(ord(c) < 32 for c in path):
        raise InputError(f"file() needs the path of a .npy file, got {text[:80]!r}", file=file, key=key)
    if not path.endswith(".npy"):
        raise InputError(f"file({path}): only .npy files are read (numpy.save writes them)", file=file, key=key)
    return path


def parse_init_spec(text: object, *, file: str | None = None, key: str | None = None) -> InitSpec:
    """Parse an initialiser's shape (kind and argument count); its arguments stay expressions."""
    if not isinstance(text, str):
        raise InputError(f"init must be a string such as \"uniform(-1, 1)\", got {text!r}", file=file, key=key)
    if (found := re.fullmatch(r"\s*file\s*\((.*)\)\s*", text, flags=re.S)) is not None:
        return InitSpec("file", (), _file_path(found.group(1), text, file, key))
    match = re.fullmatch(r"\s*([A-Za-z_]+)\s*(?:\((.*)\))?\s*", text, flags=re.S)
    if match is None or match.group(1) not in _ARITY:
        shown = text if len(text) <= 80 else text[:60] + "..."
        raise InputError(
            f"unknown initialiser {shown!r} (known: uniform(lo, hi), normal(mean, std), randint(lo, hi), "
            "zeros, ones, const(v), arange(start, step), file(path.npy))", file=file, key=key,
        )
    kind, inner = match.group(1), match.group(2)
    args = _split_args(inner) if inner is not None and inner.strip() else []
    if len(args) != _ARITY[kind]:
        raise InputError(f"{kind} takes {_ARITY[kind]} arguments, got {len(args)}", file=file, key=key)
    return InitSpec(kind, tuple(args))


def parse_init(
    text: object, names: Mapping[str, Number] | None = None, *, file: str | None = None,
    key: str | None = None,
) -> Init:
    """Parse and evaluate an initialiser; its arguments may be expressions over `names`."""
    return parse_init_spec(text, file=file, key=key).evaluate(names or {}, file=file, key=key)
