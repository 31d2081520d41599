"""The ablation table from `bench/ablation.py` rows.

    python bench/merge_ablation.py DIR [--json OUT.json]

Per configuration (strategy, budget, with/without the model): the geomean over tasks of the
roofline fraction (floor time / verified best time, the original's time where nothing faster was
found), computed per seed on the tasks every configuration and seed finished (so all rows compare
the same kernels), then the mean over seeds with min and max; also the geomean speedup, how many
searches hit their time limit, and what the model's answers became. The header states the
method (shared measurements, bench/ablation.py) and how many verdicts and answers were reused. A line per budget says
whether mcgs is at or above every baseline there, and whether it is *ahead* (above the best baseline by more
than `TIE_MARGIN`), *tied* or *behind*: configurations that offer the same rewrites differ by a few 0.01%,
which is not an improvement a user would see.

Two more sections say why configurations tie or differ: how much of its budget each configuration
used (a search that stops early has run out of rewrites to judge: the move set is smaller than the
budget), and every kernel where mcgs and a baseline of the same budget offer results that differ
by more than `KERNEL_MARGIN` (mean of seeds), with the technique paths each offered.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

TIE_MARGIN = 0.005  # relative: geomeans closer than 0.5% are reported as tied
KERNEL_MARGIN = 0.002  # relative: per-kernel differences below 0.2% are not listed


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
    tasks = {str(c.get("task")) for c in caches}  # a task split into parts has one summary per part
    summary = {"tasks": len(tasks), "judged": total("search", "misses"), "reused": total("search", "hits"),
               "recheck_judged": total("recheck", "misses"), "recheck_reused": total("recheck", "hits"),
               "model_generated": total("model_answers", "generated"), "model_reused": total("model_answers", "reused")}
    if not caches:
        return [], summary
    method = next((str(c["method"]) for c in caches if c.get("method")), "")
    lines = [f"Method: {method}.",
             f"Candidates judged (compiled, checked, timed) {summary['judged']}, verdicts reused {summary['reused']}; "
             f"re-checks judged {summary['recheck_judged']}, reused {summary['recheck_reused']}; model answers "
             f"generated {summary['model_generated']}, reused {summary['model_reused']} ({len(tasks)} tasks).", ""]
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
    standing = standings(per_budget)
    for key, it in standing.items():
        lines.append(f"budget {key}: mcgs {it.mcgs:.4f} {'>=' if it.at_or_above else '<'} every baseline "
                     f"({', '.join(f'{c} {m:.4f}' for c, m in sorted(it.others.items()))}): **{it.verdict}**, "
                     f"{100 * it.margin:+.2f}% over {it.best_baseline} (ties within {100 * TIE_MARGIN:.1f}%)")
    results["mcgs_ahead"] = {budget: it.at_or_above for budget, it in standing.items()}
    results["verdicts"] = {budget: {"verdict": it.verdict, "margin": it.margin, "best_baseline": it.best_baseline}
                           for budget, it in standing.items()}
    lines += ["", *budget_lines(by_config, order, meta, seeds)]
    differences = kernel_differences(by_config, meta, seeds, common)
    results["differences"] = differences
    lines += ["", f"Kernels where mcgs and a baseline of the same budget differ by more than {100 * KERNEL_MARGIN:.1f}% "
              "(roofline fraction, mean of seeds; the technique path offered on seed "
              f"{seeds[0] if seeds else 0}):", ""]
    if differences:
        lines += ["| budget | baseline | kernel | mcgs | baseline | mcgs offered | baseline offered |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {d['budget']} | {d['baseline']} | {d['kernel']} | {d['mcgs']:.4f} | {d['other']:.4f} "
                  f"| {d['mcgs_path'] or '(original)'} | {d['other_path'] or '(original)'} |" for d in differences]
    else:
        lines.append("none: every configuration offered the same results on every kernel")
    return "\n".join(lines) + "\n", results


@dataclass(frozen=True)
class Standing:
    """mcgs against the baselines of one budget (mcgs without the model is not a baseline)."""

    mcgs: float
    others: dict[str, float]
    at_or_above: bool  # mcgs >= every baseline's geomean
    verdict: str  # ahead, tied (within TIE_MARGIN of the best baseline) or behind
    margin: float  # relative, over the best baseline
    best_baseline: str


def standings(per_budget: Mapping[int, Mapping[str, float]]) -> dict[str, Standing]:
    """Per budget with mcgs and a baseline: how mcgs stands against them."""
    found: dict[str, Standing] = {}
    for budget, means in sorted(per_budget.items()):
        mcgs = means.get(f"mcgs-b{budget}")
        others = {c: m for c, m in means.items() if not c.startswith("mcgs")}
        if mcgs is None or not others:
            continue
        best_config, best = max(others.items(), key=lambda item: item[1])
        margin = mcgs / best - 1.0 if best > 0 else 0.0
        verdict = "ahead" if margin > TIE_MARGIN else "behind" if margin < -TIE_MARGIN else "tied"
        found[str(budget)] = Standing(mcgs, others, all(mcgs >= m for m in others.values()), verdict, margin,
                                      best_config)
    return found


def technique_path(row: Mapping[str, object]) -> str:
    best = row.get("best")
    techniques = best.get("techniques") if isinstance(best, Mapping) else None
    return "+".join(str(t) for t in techniques) if isinstance(techniques, list) else ""


def budget_lines(by_config: Mapping[str, Mapping[int, Mapping[str, Mapping[str, object]]]], order: Sequence[str],
                 meta: Mapping[str, tuple[str, int, bool]], seeds: Sequence[int]) -> list[str]:
    """How much of its budget each configuration judged: a search that stops before its budget has
    no rewrite left that its strategy would judge."""
    lines = ["Budget used (candidates judged per search; a search stops early when its strategy has nothing left to judge):",
             "", "| configuration | mean | max | searches that stopped before their budget |", "|---|---|---|---|"]
    for config in order:
        budget = meta[config][1]
        used = []
        for seed in seeds:
            for row in by_config[config][seed].values():
                counts = row.get("candidates")
                if isinstance(counts, Mapping) and isinstance(counts.get("generated"), int):
                    used.append(int(counts["generated"]))
        if not used:
            continue
        early = sum(1 for n in used if n < budget)
        lines.append(f"| {config} | {sum(used) / len(used):.1f} | {max(used)} | {early} of {len(used)} |")
    return lines


def kernel_differences(by_config: Mapping[str, Mapping[int, Mapping[str, Mapping[str, object]]]],
                       meta: Mapping[str, tuple[str, int, bool]], seeds: Sequence[int],
                       common: Sequence[str]) -> list[dict[str, object]]:
    """Every (budget, baseline, kernel) where mcgs's mean-of-seeds fraction differs from the
    baseline's by more than KERNEL_MARGIN, largest difference first within a budget."""
    def mean_fraction(config: str, unit: str) -> float:
        values = [fraction_of(by_config[config][s][unit]) or 0.0 for s in seeds]
        return sum(values) / len(values)
    found: list[dict[str, object]] = []
    for config, (strategy, budget, _) in sorted(meta.items(), key=lambda item: (item[1][1], item[0])):
        mcgs_config = f"mcgs-b{budget}"
        if strategy == "mcgs" or mcgs_config not in by_config:
            continue
        rows: list[dict[str, object]] = []
        for unit in common:
            mine, theirs = mean_fraction(mcgs_config, unit), mean_fraction(config, unit)
            if theirs > 0 and abs(mine / theirs - 1.0) > KERNEL_MARGIN:
                first = seeds[0] if seeds else 0
                rows.append({"budget": budget, "baseline": config, "kernel": unit, "mcgs": mine, "other": theirs,
                             "mcgs_path": technique_path(by_config[mcgs_config][first][unit]),
                             "other_path": technique_path(by_config[config][first][unit])})
        found += sorted(rows, key=lambda d: -abs(float(d["mcgs"]) / float(d["other"]) - 1.0))  # type: ignore[arg-type]
    return found


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
