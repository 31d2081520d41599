"""Drawing buffer data for an evaluated initialiser: `generate(init, count, dtype, rng)`.

The numpy side of `regrapht.spec.init`, kept apart so that reading a spec (the language server,
`regrapht analyze`) never imports numpy; the GPU worker and the reference checks draw here.
"""

from __future__ import annotations

import numpy as np

from regrapht.spec.init import Init


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
