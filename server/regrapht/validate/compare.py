"""Comparing a candidate's outputs with the original's: tolerances, poison, non-finite values.

Owns the element-wise rule of the spec: floats pass when |a - b| <= atol + rtol*|b| (b the
original's value), a NaN/Inf where the original is finite fails, integers compare exactly; and
the byte-level checks for inputs left unchanged and guard regions left intact. Pure numpy.
"""

from __future__ import annotations

import numpy as np

POISON_BYTE = 0xFF
GUARD_BYTE = 0xA5


def _fmt(value: object) -> str:
    return repr(value.item()) if isinstance(value, np.generic) else repr(value)


def compare_output(name: str, ref: np.ndarray, got: np.ndarray, *, rtol: float, atol: float) -> str | None:
    """None if `got` matches `ref`, else a reason naming the first bad element."""
    if ref.shape != got.shape:
        return f"{name}: {got.size} elements, expected {ref.size}"
    if ref.dtype.kind != "f":
        bad = np.flatnonzero(ref != got)
        if bad.size:
            i = int(bad[0])
            return f"{name}[{i}]: {_fmt(got[i])} != {_fmt(ref[i])} ({bad.size} elements differ)"
        return None
    ref64 = ref.astype(np.float64)
    got64 = got.astype(np.float64)
    ref_finite = np.isfinite(ref64)
    got_finite = np.isfinite(got64)
    nonfinite = np.flatnonzero(ref_finite & ~got_finite)
    if nonfinite.size:
        i = int(nonfinite[0])
        poisoned = got.view(np.uint8).reshape(got.size, -1)[i]
        if np.all(poisoned == POISON_BYTE):
            return f"{name}[{i}] was not written ({nonfinite.size} elements left unwritten or non-finite)"
        return f"{name}[{i}]: {_fmt(got[i])} where the original has {_fmt(ref[i])}"
    with np.errstate(invalid="ignore"):
        diff = np.abs(got64 - ref64)
        bad_mask = ref_finite & (diff > atol + rtol * np.abs(ref64))
    # where the original is not finite, the candidate must be non-finite in the same way
    both = ~ref_finite
    bad_mask |= both & ~((np.isnan(ref64) & np.isnan(got64)) | (ref64 == got64))
    bad = np.flatnonzero(bad_mask)
    if bad.size:
        i = int(bad[0])
        return (f"{name}[{i}]: {_fmt(got[i])} != {_fmt(ref[i])} "
                f"(|diff| {float(diff[i]):.3g} > atol {atol:g} + rtol {rtol:g}*|b|; {bad.size} elements differ)")
    return None


def changed_input(name: str, before: np.ndarray, after: np.ndarray) -> str | None:
    """None if an input buffer is byte-identical after the run, else a reason."""
    diff = np.flatnonzero(before.view(np.uint8) != after.view(np.uint8))
    if diff.size:
        element = int(diff[0]) // before.dtype.itemsize
        return f"wrote to input {name}[{element}] (an 'in' buffer must stay unchanged)"
    return None


def damaged_guard(name: str, before: np.ndarray, after: np.ndarray, guard_bytes: int) -> str | None:
    """`before`/`after` are the guard regions (bytes) just before and after the buffer."""
    bad_before = np.flatnonzero(before != GUARD_BYTE)
    if bad_before.size:
        offset = guard_bytes - int(bad_before[0])
        return f"wrote outside {name}: {offset} bytes before its start"
    bad_after = np.flatnonzero(after != GUARD_BYTE)
    if bad_after.size:
        return f"wrote outside {name}: {int(bad_after[0])} bytes after its end"
    return None
