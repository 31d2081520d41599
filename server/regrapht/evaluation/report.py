"""The `regrapht eval` report: per-task rows, totals, roofline fractions, markdown and an SVG chart.

Pure functions over plain dicts (the `optimize` JSON plus `recheck` and `roofline`), so the
report can be tested and regenerated without a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape


def roofline_floor_ms(bytes_moved: int, flops: float | None, peak_gbps: float | None,
                      peak_gflops: float | None) -> float | None:
    """The least time the kernel could take on this device: traffic / bandwidth, FLOPs / rate."""
    if peak_gbps is None or peak_gbps <= 0:
        return None
    floor = bytes_moved / (peak_gbps * 1e9)
    if flops and peak_gflops:
        floor = max(floor, flops / (peak_gflops * 1e9))
    return floor * 1e3


def totals(rows: Sequence[Mapping[str, object]]) -> dict[str, object]:
    """The suite's figures, plus one entry per task family under `families` (rows that name one)."""
    result = _summary(rows)
    by_family: dict[str, list[Mapping[str, object]]] = {}
    for row in rows:
        family = row.get("family")
        if isinstance(family, str):
            by_family.setdefault(family, []).append(row)
    families = {name: _summary(members) for name, members in sorted(by_family.items())}
    fractions = [f for figures in families.values()
                 if isinstance(f := figures["geomean_roofline_fraction"], float)]
    result["families"] = families
    result["min_family_roofline_fraction"] = min(fractions) if fractions else None
    return result


def _summary(rows: Sequence[Mapping[str, object]]) -> dict[str, object]:
    speedups: list[float] = []
    fractions: list[float] = []
    verified = improved = slower = wrong = 0
    for row in rows:
        best = row.get("best")
        recheck = row.get("recheck")
        ok = isinstance(recheck, Mapping) and recheck.get("outcome") in ("faster", "slower")
        if isinstance(best, Mapping) and ok:
            verified += 1
            speedup = float(best["speedup"])
            recheck_speedup = recheck.get("speedup") if isinstance(recheck, Mapping) else None
            if isinstance(recheck_speedup, int | float) and recheck_speedup < 1.0:
                slower += 1
            if speedup > 1.0:
                improved += 1
            speedups.append(speedup)
        else:
            if isinstance(best, Mapping):
                wrong += 1  # an answer the fresh re-check did not confirm
            speedups.append(1.0)  # nothing verified: the original stays, speedup 1
        roof = row.get("roofline")
        if isinstance(roof, Mapping) and isinstance(roof.get("fraction"), int | float):
            fractions.append(float(roof["fraction"]))
    return {
        "tasks": len(rows),
        "verified_correct": verified,
        "improved": improved,
        "slower": slower,
        "wrong": wrong,
        "geomean_speedup": _geomean(speedups),
        "geomean_roofline_fraction": _geomean(fractions) if fractions else None,
        "min_roofline_fraction": min(fractions) if fractions else None,
    }


def _geomean(values: Sequence[float]) -> float | None:
    positive = [v for v in values if v > 0]
    if not positive:
        return None
    return math.exp(sum(math.log(v) for v in positive) / len(positive))


def markdown(report: Mapping[str, object]) -> str:
    rows = report.get("tasks")
    total = report.get("totals")
    assert isinstance(rows, list) and isinstance(total, Mapping)
    lines = [
        f"# ReGraphT eval: strategy {report.get('strategy')}, budget {report.get('budget')}",
        "",
        f"GPU: {report.get('gpu') or 'none'}; model: {report.get('model') or 'none'} "
        f"({report.get('model_device') or '-'})",
        "",
        "| task | family | kernel | baseline ms | best ms | speedup | recheck | roofline | techniques | reason |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        best = row.get("best") or {}
        recheck = row.get("recheck") or {}
        roof = row.get("roofline") or {}
        base = (row.get("baseline") or {}).get("time_ms")
        fraction = roof.get("fraction")
        lines.append(
            f"| {row.get('task')} | {row.get('family') or '-'} | {row.get('kernel')} | {_fmt(base)} | {_fmt(best.get('time_ms'))} | "
            f"{_fmt(best.get('speedup'), 'x')} | {recheck.get('outcome', '-')} | "
            f"{'-' if fraction is None else f'{fraction:.0%}'} | {' -> '.join(best.get('techniques', [])) or '-'} | "
            f"{row.get('reason') or row.get('error') or ''} |"
        )
    lines += ["", "## Totals", ""]
    for key, value in total.items():
        if key != "families":
            lines.append(f"- {key}: {_fmt(value) if isinstance(value, float) else value}")
    families = total.get("families")
    if isinstance(families, Mapping) and families:
        lines += ["", "## Per family", "",
                  "| family | tasks | verified | improved | slower | wrong | geomean speedup "
                  "| geomean roofline | lowest roofline |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for name, figures in families.items():
            lines.append(
                f"| {name} | {figures['tasks']} | {figures['verified_correct']} | {figures['improved']} "
                f"| {figures['slower']} | {figures['wrong']} | {_fmt(figures['geomean_speedup'], 'x')} "
                f"| {_percent(figures['geomean_roofline_fraction'])} | {_percent(figures['min_roofline_fraction'])} |"
            )
    return "\n".join(lines) + "\n"


def _percent(value: object) -> str:
    return f"{value:.0%}" if isinstance(value, float) else "-"


def _fmt(value: object, suffix: str = "") -> str:
    if isinstance(value, float):
        return f"{value:.4g}{suffix}"
    return "-" if value is None else f"{value}{suffix}"


def svg_chart(rows: Sequence[Mapping[str, object]]) -> str:
    """Horizontal bars of verified speedup per task (log scale), with the 1x line."""
    entries = []
    for row in rows:
        best = row.get("best")
        speedup = float(best["speedup"]) if isinstance(best, Mapping) else 1.0
        entries.append((f"{row.get('task')}:{row.get('kernel')}", speedup))
    width, bar_h, left = 760, 22, 220
    height = 40 + bar_h * len(entries)
    top = max([s for _, s in entries] + [2.0])
    scale = (width - left - 60) / math.log10(top * 1.2)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
             '<text x="10" y="18" font-weight="bold">Verified speedup per task (log scale)</text>']
    for i, (label, speedup) in enumerate(entries):
        y = 30 + i * bar_h
        length = max(1.0, math.log10(max(speedup, 1.0)) * scale) if speedup >= 1 else 1.0
        colour = "#2e7d32" if speedup > 1.0 else "#9e9e9e"
        parts.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{escape(label)}</text>')
        parts.append(f'<rect x="{left}" y="{y + 3}" width="{length:.1f}" height="{bar_h - 6}" fill="{colour}"/>')
        parts.append(f'<text x="{left + length + 6:.1f}" y="{y + 15}">{speedup:.2f}x</text>')
    parts.append(f'<line x1="{left}" y1="26" x2="{left}" y2="{height - 4}" stroke="#000"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
