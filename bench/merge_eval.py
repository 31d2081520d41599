"""Merge `regrapht eval` reports of single tasks (run in parallel) into one report per strategy.

    python bench/merge_eval.py RUNS_DIR OUT_DIR

RUNS_DIR holds folders `eval-<strategy>-<task>/report.json`; OUT_DIR gets, per strategy,
`<strategy>/report.json`, `report.md` and `speedups.svg` (the same files `regrapht eval` writes
for a sequential run), plus `summary.md`: one table comparing the strategies. `regrapht optimize
--json` outputs in RUNS_DIR named `optimize-<strategy>-<file>-<kernel>.json` (the example kernels)
get a second table: the verified speedup per kernel and strategy.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from regrapht.evaluation.report import markdown, svg_chart, totals


def merge(runs: Path, out: Path) -> dict[str, dict[str, object]]:
    by_strategy: dict[str, list[dict[str, object]]] = defaultdict(list)
    meta: dict[str, dict[str, object]] = {}
    for report_path in sorted(runs.glob("eval-*/report.json")):
        report = json.loads(report_path.read_text(encoding="utf-8"))
        strategy = str(report["strategy"])
        by_strategy[strategy].extend(report["tasks"])
        meta.setdefault(strategy, {k: report.get(k) for k in ("budget", "seed", "gpu", "model", "model_device", "no_model", "time_limit_s")})
    merged: dict[str, dict[str, object]] = {}
    for strategy, rows in sorted(by_strategy.items()):
        report = {"strategy": strategy, **meta[strategy], "tasks": rows, "totals": totals(rows)}
        folder = out / strategy
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        (folder / "report.md").write_text(markdown(report), encoding="utf-8")
        (folder / "speedups.svg").write_text(svg_chart(rows), encoding="utf-8")
        merged[strategy] = report
    return merged


def summary_table(merged: dict[str, dict[str, object]]) -> str:
    lines = [
        "| strategy | tasks | verified correct | improved | slower | geomean speedup | geomean roofline fraction |",
        "|---|---|---|---|---|---|---|",
    ]
    for strategy, report in merged.items():
        t = report["totals"]
        assert isinstance(t, dict)
        fraction = t.get("geomean_roofline_fraction")
        speedup = t.get("geomean_speedup")
        lines.append(
            f"| {strategy} | {t['tasks']} | {t['verified_correct']} | {t['improved']} | {t['slower']} "
            f"| {speedup:.2f}x | {fraction:.2f} |" if isinstance(speedup, float) and isinstance(fraction, float)
            else f"| {strategy} | {t['tasks']} | {t['verified_correct']} | {t['improved']} | {t['slower']} | {speedup} | {fraction} |"
        )
    return "\n".join(lines) + "\n"


def optimize_cell(path: Path) -> str:
    """One kernel x strategy: the verified speedup and technique path, or why there is none."""
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "no result (killed or crashed; see its log)"
    best = result.get("best")
    if not best:
        return f"none: {result.get('reason', '?')}"[:80]
    return f"{best['speedup']:.2f}x ({', '.join(best['techniques'])}; {result['wall_s']:.0f} s)"


def optimize_table(runs: Path, strategies: list[str]) -> str:
    """Example kernels x strategies, from `optimize-<strategy>-<name>.json` files."""
    cells: dict[str, dict[str, str]] = defaultdict(dict)
    for path in sorted(runs.glob("optimize-*.json")):
        strategy, name = next(((s, path.stem[len(f"optimize-{s}-"):]) for s in strategies
                               if path.stem.startswith(f"optimize-{s}-")), ("", ""))
        if strategy:
            cells[name][strategy] = optimize_cell(path)
    if not cells:
        return ""
    used = [s for s in strategies if any(s in row for row in cells.values())]
    lines = ["| example kernel | " + " | ".join(used) + " |", "|---" * (len(used) + 1) + "|"]
    for name, row in sorted(cells.items()):
        lines.append(f"| {name} | " + " | ".join(row.get(s, "not run") for s in used) + " |")
    return "\n".join(lines) + "\n"


STRATEGY_ORDER = ["rules", "mcgs", "greedy", "random", "cot"]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    runs, out = Path(argv[0]), Path(argv[1])
    merged = merge(runs, out)
    table = summary_table(merged) if merged else ""
    if examples := optimize_table(runs, STRATEGY_ORDER):
        table += ("\n" if table else "") + examples
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text(table, encoding="utf-8")
    print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
