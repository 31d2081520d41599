"""Output comparison: tolerances, poison, non-finite values, inputs and guards."""

from __future__ import annotations

import numpy as np

from regrapht.validate.compare import GUARD_BYTE, changed_input, compare_output, damaged_guard


def test_float_tolerance_and_poison() -> None:
    ref = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    assert compare_output("y", ref, ref + 1e-6, rtol=1e-5, atol=1e-6) is None
    assert "y[1]" in (compare_output("y", ref, np.array([1, 2.1, 3], np.float32), rtol=1e-5, atol=1e-6) or "")
    poisoned = ref.copy()
    poisoned.view(np.uint8)[4:8] = 0xFF
    assert "y[1] was not written" in (compare_output("y", ref, poisoned, rtol=1e-5, atol=1e-6) or "")
    inf = ref.copy()
    inf[2] = np.inf
    assert "y[2]" in (compare_output("y", ref, inf, rtol=1, atol=1) or "")
    nan_ref = np.array([np.nan, 1], np.float32)
    assert compare_output("y", nan_ref, nan_ref.copy(), rtol=0, atol=0) is None


def test_integers_exact() -> None:
    ref = np.array([1, 2, 3], np.uint32)
    assert compare_output("bins", ref, ref.copy(), rtol=1, atol=1) is None
    assert "bins[0]" in (compare_output("bins", ref, np.array([2, 2, 3], np.uint32), rtol=1, atol=1) or "")


def test_inputs_and_guards() -> None:
    before = np.arange(10, dtype=np.float32)
    after = before.copy()
    assert changed_input("x", before, after) is None
    after[7] = 0
    assert "x[7]" in (changed_input("x", before, after) or "")
    guard = np.full(64, GUARD_BYTE, np.uint8)
    assert damaged_guard("y", guard, guard, 64) is None
    hit = guard.copy()
    hit[4] = 0
    assert "4 bytes after its end" in (damaged_guard("y", guard, hit, 64) or "")
    assert "before its start" in (damaged_guard("y", hit, guard, 64) or "")


def test_device_summary_words_findings_like_the_host_compare() -> None:
    from regrapht.validate.compare import OutputSummary, describe_output, summarize_output

    ref = np.linspace(-2, 2, 64).astype(np.float32)
    got = ref.copy()
    got[[9, 40]] += 1
    got.view(np.uint8)[4 * 20:4 * 21] = 0xFF
    summary = summarize_output(ref, got, rtol=1e-5, atol=1e-6)
    assert summary == OutputSummary(nonfinite_count=1, nonfinite_first=20, bad_count=2, bad_first=9)
    fixed = got.copy()
    fixed[20] = ref[20]
    text = compare_output("y", ref, fixed, rtol=1e-5, atol=1e-6) or ""
    assert text.startswith("y[9]: ") and "2 elements differ" in text
    assert describe_output("y", OutputSummary(), lambda which, i: ref[i:i + 1], rtol=0, atol=0) is None
    ints = np.array([True, False, True])
    odd = ints.copy()
    odd.view(np.uint8)[2] = 2  # "true" but not the byte the original wrote: bit-exact like the device
    assert summarize_output(ints, odd, rtol=0, atol=0).bad_first == 2
