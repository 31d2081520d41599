"""The kernel report's data: what the editor's report view draws, as one JSON object. Pure.

`report_data` joins the long kernel card (Markdown, for clients that show Markdown only) with
the structured parts the VS Code report renders itself: the findings with their rule docs, the
resources and occupancy, the measured time, the roofline (bytes, FLOPs, this GPU's measured
peaks, the floor, and a point for the original and for each verified version), and the last
Optimize run with every judged candidate (`search.ledger.CandidateRecord`). Numbers stay
numbers; the client formats them. Nothing here imports pygls or does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from regrapht.cards import KernelFacts, LastRun, Traffic

if TYPE_CHECKING:
    from regrapht.rules.types import Finding

VERIFIED = ("faster", "slower")


def floor_ms(traffic: Traffic) -> float | None:
    """The roofline's floor of one launch: its bytes at peak bandwidth, or its FLOPs at peak
    rate when that takes longer; None without measured peaks."""
    if not traffic.peak_gbps or traffic.peak_gbps <= 0:
        return None
    floor = traffic.bytes_moved / (traffic.peak_gbps * 1e9) * 1e3
    if traffic.flops and traffic.peak_gflops:
        floor = max(floor, traffic.flops / (traffic.peak_gflops * 1e9) * 1e3)
    return floor


def _point(label: str, kind: str, time_ms: float, traffic: Traffic) -> dict[str, object]:
    seconds = time_ms * 1e-3
    return {
        "label": label, "kind": kind, "time_ms": time_ms,
        "gbps": traffic.bytes_moved / seconds / 1e9 if seconds > 0 else None,
        "gflops": traffic.flops / seconds / 1e9 if traffic.flops and seconds > 0 else None,
    }


def roofline(traffic: Traffic, original_ms: float | None, run: LastRun | None) -> dict[str, object]:
    """The roofline of the kernel: its traffic, the peaks, the floor, and the points (the
    original, each verified version of the last run, the floor)."""
    points: list[dict[str, object]] = []
    if original_ms:
        points.append(_point("original", "original", original_ms, traffic))
    if run is not None:
        for record in run.result.history:
            if record.outcome in VERIFIED and record.time_ms:
                label = f"#{record.index} {' -> '.join(record.techniques) or 'original'}"
                points.append(_point(label, "verified", record.time_ms, traffic))
    floor = floor_ms(traffic)
    if floor is not None:
        points.append(_point("floor", "floor", floor, traffic))
    return {
        "bytes": traffic.bytes_moved, "flops": traffic.flops, "peak_gbps": traffic.peak_gbps,
        "peak_gflops": traffic.peak_gflops, "floor_ms": floor,
        "intensity": traffic.flops / traffic.bytes_moved if traffic.flops and traffic.bytes_moved else None,
        "points": points,
    }


def run_data(run: LastRun) -> dict[str, object]:
    """The last Optimize run: how it ended, its figures, the answer, every judged candidate."""
    result = run.result
    best = result.best
    c = result.counters
    return {
        "kind": run.kind, "message": run.message, "applied": run.applied, "gpu": result.gpu, "arch": result.arch,
        "strategy": result.strategy, "budget": result.budget, "baseline_ms": result.baseline_ms,
        "reason": result.reason, "wall_s": round(result.wall_s, 3), "cancelled": result.cancelled,
        "counters": {"generated": c.generated, "compiled": c.compiled, "correct": c.correct, "faster": c.faster},
        "best": None if best is None else {
            "speedup": best.speedup, "time_ms": best.time_ms, "techniques": list(best.techniques),
            "checked": best.checked, "sanitizer": best.sanitizer, "numerics": best.numerics,
        },
        "original": run.original,
        "candidates": [record.to_json(source=True) for record in result.history],
    }


def report_data(uri: str, kernel: str, markdown: str, facts: KernelFacts | None, findings: Sequence[Finding],
                doc_link: Callable[[str], str]) -> dict[str, object]:
    """The report of `kernel` (module docstring); `markdown`: its long card."""
    resources = facts.resources if facts is not None else None
    timing = facts.timing if facts is not None else None
    run = facts.last_run if facts is not None else None
    traffic = facts.traffic if facts is not None else None
    original_ms = run.result.baseline_ms if run is not None and run.result.baseline_ms else (
        timing.median_ms if timing is not None else None)
    return {
        "uri": uri, "kernel": kernel, "markdown": markdown,
        "findings": [
            {"rule": f.rule, "severity": f.severity, "line": f.span.start.line, "message": f.message,
             "technique": f.technique, "doc": doc_link(f.doc) if f.doc else None,
             "fixes": [fix.title for fix in f.fixes]}
            for f in sorted(findings, key=lambda f: (f.span.start, f.rule))
        ],
        "resources": None if resources is None else {
            "registers": resources.registers, "shared_bytes": resources.shared_bytes,
            "spill_bytes": resources.spill_bytes, "occupancy": resources.occupancy, "arch": resources.arch,
            "limiter": resources.limiter,
        },
        "timing": None if timing is None else {
            "median_ms": timing.median_ms, "p10_ms": timing.p10_ms, "p90_ms": timing.p90_ms, "runs": timing.runs,
        },
        "technique_path": list(facts.technique_path) if facts is not None else [],
        "roofline": roofline(traffic, original_ms, run) if traffic is not None else None,
        "run": run_data(run) if run is not None else None,
    }
