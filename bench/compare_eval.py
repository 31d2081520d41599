"""Compare two `regrapht eval` reports of the same jobs (e.g. the Ray path against the local one).

    python bench/compare_eval.py A/report.json B/report.json [--names A B] > comparison.md

Per kernel: the verified speedup, the re-check's outcome and the roofline fraction of each run,
and whether the two agree on the answer's presence and correctness; then the totals. Timings
differ between runs (two measurements of one GPU), so speedups are compared, not required equal.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any


def rows_by_kernel(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(str(r.get("task")), str(r.get("kernel"))): r for r in report.get("tasks", [])}


def speedup(row: dict[str, Any] | None) -> float | None:
    best = row.get("best") if row else None
    return float(best["speedup"]) if isinstance(best, dict) and best.get("speedup") else None


def fraction(row: dict[str, Any] | None) -> float | None:
    roofline = row.get("roofline") if row else None
    value = roofline.get("fraction") if isinstance(roofline, dict) else None
    return float(value) if value is not None else None


def shown(value: float | None, suffix: str = "") -> str:
    return "-" if value is None else f"{value:.3f}{suffix}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--names", nargs=2, default=["A", "B"])
    args = parser.parse_args()
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (args.a, args.b))
    rows_a, rows_b = rows_by_kernel(a), rows_by_kernel(b)
    na, nb = args.names
    print(f"| task/kernel | {na} speedup | {nb} speedup | {na} recheck | {nb} recheck | "
          f"{na} roofline | {nb} roofline | same answer |")
    print("|---|---|---|---|---|---|---|---|")
    agree = 0
    keys = sorted(set(rows_a) | set(rows_b))
    ratios = []
    for key in keys:
        ra, rb = rows_a.get(key), rows_b.get(key)
        sa, sb = speedup(ra), speedup(rb)
        oa = (ra or {}).get("recheck", {}).get("outcome")
        ob = (rb or {}).get("recheck", {}).get("outcome")
        same = ra is not None and rb is not None and (sa is None) == (sb is None) and oa == ob
        agree += same
        if sa and sb:
            ratios.append(sb / sa)
        print(f"| {key[0]}/{key[1]} | {shown(sa, 'x')} | {shown(sb, 'x')} | {oa} | {ob} | "
              f"{shown(fraction(ra))} | {shown(fraction(rb))} | {'yes' if same else 'NO'} |")
    print()
    print(f"{agree} of {len(keys)} kernels agree (an answer in both or neither, the same re-check outcome).")
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"Speedup {nb}/{na}, geomean over the {len(ratios)} kernels both answered: {geomean:.3f}.")
    for name, report in ((na, a), (nb, b)):
        totals = report.get("totals", {})
        print(f"- {name}: improved {totals.get('improved')}, wrong {totals.get('wrong')}, slower "
              f"{totals.get('slower')}, geomean speedup {totals.get('geomean_speedup')}, geomean roofline "
              f"fraction {totals.get('geomean_roofline_fraction')}")
    return 0 if agree == len(keys) else 1


if __name__ == "__main__":
    raise SystemExit(main())
