"""Buffer initialisers of the kernel spec: parsing `uniform(-1, 1)` and friends, and drawing data.

Owns the initialiser language (`uniform`, `normal`, `randint`, `zeros`, `ones`, `const`,
`arange`) and turning one into a numpy array for a given generator, count and dtype.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from regrapht.errors import InputError
from regrapht.spec.expr import Number, evaluate

_ARITY = {"uniform": 2, "normal": 2, "randint": 2, "zeros": 0, "ones": 0, "const": 1, "arange": 2}


@dataclass(frozen=True)
class Init:
    kind: str
    params: tuple[float, ...] = ()

    @property
    def random(self) -> bool:
        return self.kind in ("uniform", "normal", "randint")

    def text(self) -> str:
        if not _ARITY[self.kind]:
            return self.kind
        return f"{self.kind}({', '.join(_fmt(p) for p in self.params)})"


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


def parse_init(
    text: object, names: Mapping[str, Number] | None = None, *, file: str | None = None,
    key: str | None = None,
) -> Init:
    """Parse an initialiser; its arguments may be expressions over `names`."""
    if not isinstance(text, str):
        raise InputError(f"init must be a string such as \"uniform(-1, 1)\", got {text!r}", file=file, key=key)
    match = re.fullmatch(r"\s*([A-Za-z_]+)\s*(?:\((.*)\))?\s*", text)
    if match is None or match.group(1) not in _ARITY:
        raise InputError(
            f"unknown initialiser {text!r} (known: uniform(lo, hi), normal(mean, std), randint(lo, hi), "
            "zeros, ones, const(v), arange(start, step))", file=file, key=key,
        )
    kind, inner = match.group(1), match.group(2)
    args = _split_args(inner) if inner is not None and inner.strip() else []
    if len(args) != _ARITY[kind]:
        raise InputError(f"{kind} takes {_ARITY[kind]} arguments, got {len(args)} in {text!r}", file=file, key=key)
    params = tuple(float(evaluate(a, names or {}, file=file, key=key)) for a in args)
    if kind in ("uniform", "randint") and not params[0] < params[1]:
        raise InputError(f"{kind}: lo must be less than hi in {text!r}", file=file, key=key)
    if kind == "normal" and params[1] < 0:
        raise InputError(f"normal: std must not be negative in {text!r}", file=file, key=key)
    return Init(kind, params)


def generate(init: Init, count: int, dtype: str, rng: np.random.Generator) -> np.ndarray:
    """`count` elements of `dtype` drawn per `init` (random kinds consume `rng`)."""
    target = np.dtype(dtype)
    integer = target.kind in "iub"
    if init.kind == "zeros":
        return np.zeros(count, dtype=target)
    if init.kind == "ones":
        return np.ones(count, dtype=target)
    if init.kind == "const":
        return np.full(count, init.params[0]).astype(target)
    if init.kind == "arange":
        return (init.params[0] + init.params[1] * np.arange(count, dtype=np.float64)).astype(target)
    if target.kind == "b":
        return rng.random(count) < 0.5
    lo, hi = init.params
    if init.kind == "randint" or (init.kind == "uniform" and integer):
        return rng.integers(int(lo), int(hi), size=count, dtype=np.int64).astype(target)
    if init.kind == "uniform":
        return rng.uniform(lo, hi, size=count).astype(target)
    values = rng.normal(lo, hi, size=count)
    return (np.round(values) if integer else values).astype(target)
