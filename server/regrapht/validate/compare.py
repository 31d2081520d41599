"""Comparing a candidate's outputs with the original's: tolerances, poison, non-finite values.

Owns the element-wise rule of the spec: floats pass when |a - b| <= atol + rtol*|b| (b the
original's value), a NaN/Inf where the original is finite fails, integers compare exactly; and
the byte-level checks for inputs left unchanged and guard regions left intact. The GPU worker
computes the same rule on the device (CHECK_KERNELS in checker.py) and reads back only an
`OutputSummary` (counts and first indices); `summarize_output` is the numpy form of that
kernel and `describe_output` turns a summary plus the two first-bad elements into the reason,
so host and device checks word their findings identically. Pure numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

POISON_BYTE = 0xFF
GUARD_BYTE = 0xA5


def _fmt(value: object) -> str:
    return repr(value.item()) if isinstance(value, np.generic) else repr(value)


@dataclass(frozen=True)
class OutputSummary:
    """What the comparison kernel reports for one output buffer.

    `nonfinite`: elements where the original is finite and the candidate is not (an unwritten,
    poisoned float element lands here); `bad`: every other mismatch (outside the tolerance, a
    different non-finite value, or any difference for integers). Firsts are -1 when counts are 0.
    """

    nonfinite_count: int = 0
    nonfinite_first: int = -1
    bad_count: int = 0
    bad_first: int = -1

    @property
    def ok(self) -> bool:
        return self.nonfinite_count == 0 and self.bad_count == 0


def summarize_output(ref: np.ndarray, got: np.ndarray, *, rtol: float, atol: float) -> OutputSummary:
    """The numpy form of the device comparison kernels (same categories, same first indices)."""
    def first(mask: np.ndarray) -> tuple[int, int]:
        hits = np.flatnonzero(mask)
        return int(hits.size), int(hits[0]) if hits.size else -1

    if ref.dtype.kind != "f":
        # bit-exact per element, as the device compares them (bool included: a byte 2 is not True)
        bits = np.dtype(f"u{ref.dtype.itemsize}")
        count, index = first(ref.view(bits) != got.view(bits))
        return OutputSummary(bad_count=count, bad_first=index)
    ref64 = ref.astype(np.float64)
    got64 = got.astype(np.float64)
    ref_finite = np.isfinite(ref64)
    got_finite = np.isfinite(got64)
    nonfinite = ref_finite & ~got_finite
    with np.errstate(invalid="ignore"):
        diff = np.abs(got64 - ref64)
        bad_mask = ref_finite & got_finite & (diff > atol + rtol * np.abs(ref64))
    # where the original is not finite, the candidate must be non-finite in the same way
    bad_mask |= ~ref_finite & ~((np.isnan(ref64) & np.isnan(got64)) | (ref64 == got64))
    nf_count, nf_first = first(nonfinite)
    bad_count, bad_first = first(bad_mask)
    return OutputSummary(nf_count, nf_first, bad_count, bad_first)


def describe_output(name: str, summary: OutputSummary, element: Callable[[str, int], np.ndarray], *,
                    rtol: float, atol: float) -> str | None:
    """The reason for a mismatching output, or None; `element(which, i)` returns a 1-element
    array of "ref" or "got" at index i (the worker reads just those from the device)."""
    if summary.nonfinite_count:
        i = summary.nonfinite_first
        got = element("got", i)
        if np.all(got.view(np.uint8) == POISON_BYTE):
            return f"{name}[{i}] was not written ({summary.nonfinite_count} elements left unwritten or non-finite)"
        return f"{name}[{i}]: {_fmt(got[0])} where the original has {_fmt(element('ref', i)[0])}"
    if not summary.bad_count:
        return None
    i = summary.bad_first
    got, ref = element("got", i), element("ref", i)
    if ref.dtype.kind != "f":
        return f"{name}[{i}]: {_fmt(got[0])} != {_fmt(ref[0])} ({summary.bad_count} elements differ)"
    with np.errstate(invalid="ignore"):
        diff = float(abs(np.float64(got[0]) - np.float64(ref[0])))
    return (f"{name}[{i}]: {_fmt(got[0])} != {_fmt(ref[0])} "
            f"(|diff| {diff:.3g} > atol {atol:g} + rtol {rtol:g}*|b|; {summary.bad_count} elements differ)")


def compare_output(name: str, ref: np.ndarray, got: np.ndarray, *, rtol: float, atol: float) -> str | None:
    """None if `got` matches `ref`, else a reason naming the first bad element."""
    if ref.shape != got.shape:
        return f"{name}: {got.size} elements, expected {ref.size}"
    summary = summarize_output(ref, got, rtol=rtol, atol=atol)
    arrays = {"ref": ref, "got": got}
    return describe_output(name, summary, lambda which, i: arrays[which][i:i + 1], rtol=rtol, atol=atol)


def input_reason(name: str, element: int) -> str:
    return f"wrote to input {name}[{element}] (an 'in' buffer must stay unchanged)"


def changed_input(name: str, before: np.ndarray, after: np.ndarray) -> str | None:
    """None if an input buffer is byte-identical after the run, else a reason."""
    diff = np.flatnonzero(before.view(np.uint8) != after.view(np.uint8))
    if diff.size:
        return input_reason(name, int(diff[0]) // before.dtype.itemsize)
    return None


def guard_reason(name: str, before_first: int, after_first: int, guard_bytes: int) -> str | None:
    """The reason for the first damaged guard byte before (else after) a buffer; -1 = intact."""
    if before_first >= 0:
        return f"wrote outside {name}: {guard_bytes - before_first} bytes before its start"
    if after_first >= 0:
        return f"wrote outside {name}: {after_first} bytes after its end"
    return None


def damaged_guard(name: str, before: np.ndarray, after: np.ndarray, guard_bytes: int) -> str | None:
    """`before`/`after` are the guard regions (bytes) just before and after the buffer."""
    bad_before = np.flatnonzero(before != GUARD_BYTE)
    bad_after = np.flatnonzero(after != GUARD_BYTE)
    return guard_reason(name, int(bad_before[0]) if bad_before.size else -1,
                        int(bad_after[0]) if bad_after.size else -1, guard_bytes)
