"""The ablation table from `bench/ablation.py` rows.

    python bench/merge_ablation.py DIR [--json OUT.json]

Per configuration (strategy, budget, with/without the model): the geomean over tasks of the
roofline fraction (floor time / verified best time, the original's time where nothing faster was
found), computed per seed on the tasks every configuration and seed finished (so all rows compare
the same kernels), then the mean over seeds with min and max; also the geomean speedup, how many
searches hit their time limit, and what the model's answers became. The header states the
method (shared measurements, bench/ablation.py) and how many verdicts and answers were reused. A line per budget says
whether mcgs is at or above every baseline there.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path


def geomean(values: Sequence[float]) -> float | None:
    positive = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in positive) / len(positive)) if positive and len(positive) == len(values) else None


def fraction_of(row: Mapping[str, object]) -> float | None:
    roof = row.get("roofline")
    value = roof.get("fraction") if isinstance(roof, Mapping) else None
    return float(value) if isinstance(value, int | float) else None


def speedup_of(row: Mapping[str, object]) -> float:
    best = row.get("best")
    return float(best["speedup"]) if isinstance(best, Mapping) and isinstance(best.get("speedup"), int | float) else 1.0


def load(directory: Path) -> list[dict[str, object]]:
    rows = []
    for path in sorted(directory.glob("*.json")):
        row = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(row, dict) and "config" in row:
            rows.append(row)
    return rows


def load_caches(directory: Path) -> list[dict[str, object]]:
    """The per-task measurement summaries bench/ablation.py writes (cache-<task>.json)."""
    found = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(directory.glob("cache-*.json"))]
    return [c for c in found if isinstance(c, dict)]


def cache_lines(caches: list[dict[str, object]]) -> tuple[list[str], dict[str, object]]:
    """What the shared measurements saved, and the method, for the table's header."""
    def total(part: str, key: str) -> int:
        return sum(int(c[part].get(key, 0)) for c in caches if isinstance(c.get(part), Mapping))  # type: ignore[union-attr]
    summary = {"tasks": len(caches), "judged": total("search", "misses"), "reused": total("search", "hits"),
               "recheck_judged": total("recheck", "misses"), "recheck_reused": total("recheck", "hits"),
               "model_generated": total("model_answers", "generated"), "model_reused": total("model_answers", "reused")}
    if not caches:
        return [], summary
    method = next((str(c["method"]) for c in caches if c.get("method")), "")
    lines = [f"Method: {method}.",
             f"Candidates judged (compiled, checked, timed) {summary['judged']}, verdicts reused {summary['reused']}; "
             f"re-checks judged {summary['recheck_judged']}, reused {summary['recheck_reused']}; model answers "
             f"generated {summary['model_generated']}, reused {summary['model_reused']} ({len(caches)} tasks).", ""]
    return lines, summary


def table(rows: list[dict[str, object]], caches: list[dict[str, object]] | None = None) -> tuple[str, dict[str, object]]:
    by_config: dict[str, dict[int, dict[str, dict[str, object]]]] = defaultdict(lambda: defaultdict(dict))
    meta: dict[str, tuple[str, int, bool]] = {}
    for row in rows:
        config = str(row["config"])
        unit = f"{row['task']}/{row['kernel']}"
        by_config[config][int(row["seed"])][unit] = row  # type: ignore[call-overload]
        meta[config] = (str(row["strategy"]), int(row["budget"]), bool(row["no_model"]))  # type: ignore[call-overload]
    seeds = sorted({s for per_seed in by_config.values() for s in per_seed})
    units = sorted({u for per_seed in by_config.values() for runs in per_seed.values() for u in runs})
    common = [u for u in units if all(u in by_config[c][s] and fraction_of(by_config[c][s][u]) is not None
                                      for c in by_config for s in seeds)]
    header, measured = cache_lines(caches or [])
    results: dict[str, object] = {"seeds": seeds, "tasks": common, "tasks_seen": len(units), "configs": {},
                                  "measurements": measured}
    lines = [*header, f"{len(common)} of {len(units)} kernels finished by every configuration and seed (seeds {seeds}); "
             "roofline fraction = floor / verified best time, geomean over those kernels",
             "",
             "| configuration | strategy | budget | model | geomean roofline fraction (mean of seeds) | min | max "
             "| geomean speedup | time-limited searches | model answers correct / faster / asked |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    order = sorted(by_config, key=lambda c: (meta[c][1], meta[c][0] != "mcgs", meta[c][2], meta[c][0]))
    per_budget: dict[int, dict[str, float]] = defaultdict(dict)
    for config in order:
        strategy, budget, no_model = meta[config]
        per_seed_fraction = [geomean([fraction_of(by_config[config][s][u]) or 0.0 for u in common]) for s in seeds]
        per_seed_speedup = [geomean([speedup_of(by_config[config][s][u]) for u in common]) for s in seeds]
        fractions = [f for f in per_seed_fraction if f is not None]
        speedups = [x for x in per_seed_speedup if x is not None]
        all_rows = [r for s in seeds for r in by_config[config][s].values()]
        limited = sum(1 for r in all_rows if r.get("time_limited"))
        asked = correct = faster = 0
        for r in all_rows:
            calls = r.get("model_calls")
            if isinstance(calls, Mapping):
                for use in calls.values():
                    if isinstance(use, Mapping) and use is not calls.get("choose"):
                        asked += int(use.get("calls", 0))
                        correct += int(use.get("correct", 0))
                        faster += int(use.get("faster", 0))
        mean = sum(fractions) / len(fractions) if fractions else None
        if mean is not None:
            per_budget[budget][config] = mean
        results["configs"][config] = {  # type: ignore[index]
            "strategy": strategy, "budget": budget, "no_model": no_model, "fraction_per_seed": per_seed_fraction,
            "fraction_mean": mean, "fraction_min": min(fractions) if fractions else None,
            "fraction_max": max(fractions) if fractions else None,
            "speedup_mean": sum(speedups) / len(speedups) if speedups else None,
            "time_limited": limited, "searches": len(all_rows),
            "model_answers": {"asked": asked, "correct": correct, "faster": faster},
        }

        def cell(value: float | None) -> str:
            return "n/a" if value is None else f"{value:.3f}"
        model = "-" if strategy == "rules" else "no" if no_model else "yes"
        lines.append(f"| {config} | {strategy} | {budget} | {model} | {cell(mean)} "
                     f"| {cell(min(fractions) if fractions else None)} | {cell(max(fractions) if fractions else None)} "
                     f"| {cell(sum(speedups) / len(speedups) if speedups else None)} | {limited} of {len(all_rows)} "
                     f"| {correct} / {faster} / {asked} |")
    lines.append("")
    verdicts: dict[str, object] = {}
    for budget, means in sorted(per_budget.items()):
        mcgs = means.get(f"mcgs-b{budget}")
        others = {c: m for c, m in means.items() if not c.startswith("mcgs")}
        if mcgs is None or not others:
            continue
        ahead = all(mcgs >= m for m in others.values())
        verdicts[str(budget)] = ahead
        lines.append(f"budget {budget}: mcgs {mcgs:.3f} {'>=' if ahead else '<'} every baseline "
                     f"({', '.join(f'{c} {m:.3f}' for c, m in sorted(others.items()))})")
    results["mcgs_ahead"] = verdicts
    return "\n".join(lines) + "\n", results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = load(args.runs)
    if not rows:
        print(f"merge_ablation: no ablation rows in {args.runs}", file=sys.stderr)
        return 1
    text, results = table(rows, load_caches(args.runs))
    print(text, end="")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
