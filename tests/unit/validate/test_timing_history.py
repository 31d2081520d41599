"""The timing history behind the regression warning (V003): versions kept per file, kernel and
GPU; a slowdown beyond both measurements' spread is a regression, one within it is noise; the
fastest version is kept for "show the faster version"; the service records only fresh results."""

from __future__ import annotations

import time
from pathlib import Path

from regrapht.app.resources import GpuResources
from regrapht.app.validation import ValidationService
from regrapht.validate.background import FileValidation, KernelValidation
from regrapht.validate.timing_history import MAX_VERSIONS, Measured, TimingHistory, regressed, text_digest

AT = time.mktime((2026, 12, 2, 10, 2, 0, 0, 0, -1))


def measured(text: str, median: float, spread: float = 0.02, at: float = AT) -> Measured:
    return Measured(text_digest(text), median, median * (1 - spread), median * (1 + spread), at, text)


def test_slower_beyond_the_spread_is_a_regression_and_within_it_is_not() -> None:
    before = measured("a", 0.25)
    assert regressed(before, measured("b", 0.45))
    assert not regressed(before, measured("b", 0.26))  # 4%: below MIN_RATIO
    assert not regressed(before, measured("b", 0.30, spread=0.25))  # 1.2x, but the spreads overlap
    assert not regressed(before, measured("b", 0.20))  # faster


def test_record_keeps_versions_and_reports_the_regression(tmp_path: Path) -> None:
    history = TimingHistory(tmp_path / "timings")
    assert history.record("k.cu", "saxpy", "H200", measured("v1", 0.25)) is None  # nothing to compare with
    assert history.record("k.cu", "saxpy", "H200", measured("v1", 0.251)) is None  # same text measured again
    assert len(history.versions("k.cu", "saxpy", "H200")) == 1
    regression = history.record("k.cu", "saxpy", "H200", measured("v2", 0.45, at=AT + 600))
    assert regression is not None and regression.faster.text == "v1"
    assert regression.message().startswith("saxpy is 1.8x slower than at 10:02: 0.251 -> 0.45 ms")
    # another GPU has its own history; the fastest version is per GPU
    assert history.record("k.cu", "saxpy", "A100", measured("v2", 0.9)) is None
    assert history.gpus("k.cu", "saxpy") == ("H200", "A100")
    fastest = history.fastest("k.cu", "saxpy", "H200")
    assert fastest is not None and fastest.text == "v1"


def test_only_the_last_versions_are_kept_and_a_bad_file_starts_again(tmp_path: Path) -> None:
    history = TimingHistory(tmp_path / "timings")
    for i in range(MAX_VERSIONS + 3):
        history.record("k.cu", "saxpy", "H200", measured(f"v{i}", 1.0 - i * 0.01))
    kept = history.versions("k.cu", "saxpy", "H200")
    assert [v.text for v in kept] == [f"v{i}" for i in range(3, MAX_VERSIONS + 3)]
    for path in (tmp_path / "timings").glob("*.json"):
        path.write_text('{"by_gpu": {"H200": [{"digest": 1}]}}')
    assert history.versions("k.cu", "saxpy", "H200") == []
    assert history.record("k.cu", "saxpy", "H200", measured("v9", 1.0)) is None


def report(time_ms: float | None, gpu: str | None = "H200") -> dict[str, object]:
    return {"time_ms": time_ms, "time_p10_ms": time_ms and time_ms * 0.98, "time_p90_ms": time_ms and time_ms * 1.02,
            "gpu": gpu}


def test_the_service_records_fresh_measurements_only(tmp_path: Path) -> None:
    service = ValidationService(GpuResources({"REGRAPHT_CACHE_DIR": str(tmp_path / "cache")}, tmp_path))
    path = tmp_path / "saxpy.cu"
    fast = FileValidation((), (KernelValidation("saxpy", report(0.25), None),))
    slow = FileValidation((), (KernelValidation("saxpy", report(0.45), None), KernelValidation("other", None, None, "x"),
                               KernelValidation("untimed", report(None, None), None)))
    assert service.record_timings(path, "fast text", fast, now=lambda: AT) == ()
    cached_slow = FileValidation(slow.diagnostics, slow.kernels, cached=True)
    assert service.record_timings(path, "slow text", cached_slow) == ()  # measured nothing new
    (regression,) = service.record_timings(path, "slow text", slow, now=lambda: AT + 60)
    assert regression.kernel == "saxpy" and regression.before.text == "fast text"
    assert service.measured_gpus(path, "saxpy") == ("H200",)
    fastest = service.fastest_version(path, "saxpy", "H200")
    assert fastest is not None and fastest.text == "fast text"
