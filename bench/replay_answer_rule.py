"""What an ablation's searches would have offered under the product's answer rule (search/answer.py).

    python bench/replay_answer_rule.py RUNDIR --out DIR

RUNDIR is an extracted `ablation-rows.tgz` (`rows/` and `logs/`, bench/gpu/run_ablation.sh). Each
task's log has one line per candidate a search judged (technique path, applier note, outcome and
speedup over the original, to two decimals), then the search's summary line; this script reads
every search's verified faster candidates from it, chooses the answer with
`regrapht.search.answer.choose_answer` (the rule every strategy's answer now goes through), and
writes the search's row to DIR with that answer's speedup and roofline fraction (floor x speedup
/ original time, as the ablation computes it). `bench/merge_ablation.py DIR` then prints the table.

The logs record no per-candidate spread (p10/p90) or run count, so the replay uses the rule's
floor (`NOISE_FLOOR`, 1%) as the noise band; on the GPU the band is at least that, so the replay
shows the rule's least effect. Speedups come from the log's two decimals where the answer is
not the search's fastest (the row's exact figure otherwise). A search whose row has an error but
whose log shows verified candidates (a model call that failed, now a failed call that loses
nothing: docs/search.md) gets the answer from its log; its floor and original time come from the
kernel's other rows. Rows of `rules` copied for other seeds are copied again.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from regrapht.search.answer import choose_answer
from regrapht.search.ledger import Judged
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.types import Candidate, Evaluation, Timing

CANDIDATE = re.compile(r"regrapht\.search\.run: (?P<kernel>\S+) \[\d+/\d+\] (?P<path>\S+) \((?P<note>.*)\): "
                       r"(?P<outcome>faster|slower|wrong|compile_error|rejected|crashed|timeout|unverified)"
                       r"(?: (?P<speedup>\d+(?:\.\d+)?)x)?")
SUMMARY = re.compile(r"^(?P<task>[^/\s]+)/(?P<kernel>\S+) (?P<config>\S+) seed (?P<seed>\d+): roofline fraction")
_LAUNCH = LaunchConfig(("1",), ("1",))


@dataclass
class Search:
    task: str
    kernel: str
    config: str
    seed: int
    faster: list[tuple[tuple[str, ...], str, float]] = field(default_factory=list)  # path, note, speedup


def searches_of(log: str) -> list[Search]:
    """Every search in one task's log, with its verified faster candidates in the order judged."""
    found: list[Search] = []
    pending: list[tuple[tuple[str, ...], str, float]] = []
    for line in log.splitlines():
        candidate = CANDIDATE.search(line)
        if candidate is not None:
            if candidate["outcome"] == "faster" and candidate["speedup"] is not None:
                pending.append((tuple(candidate["path"].split("+")), candidate["note"], float(candidate["speedup"])))
            continue
        summary = SUMMARY.match(line)
        if summary is not None:
            found.append(Search(summary["task"], summary["kernel"], summary["config"], int(summary["seed"]), pending))
            pending = []
    return found


def answer_of(search: Search) -> tuple[tuple[str, ...], str, float] | None:
    """The answer the rule picks among the search's verified faster candidates (time = 1/speedup
    of the original's; no spread recorded: the band is the floor)."""
    judged = []
    for path, note, speedup in search.faster:
        timing = Timing(1.0 / speedup, 1.0 / speedup, 1.0 / speedup, 200)
        judged.append(Judged(Candidate("+".join(path) + note, _LAUNCH, path), Evaluation("faster", "", timing, speedup),
                             speedup, note))
    chosen = choose_answer(judged)
    return None if chosen is None else (chosen.candidate.techniques, chosen.note, chosen.evaluation.speedup or 1.0)


def replay(run: Path, out: Path) -> list[str]:
    """Rows under the rule into `out`; returns one line per search whose answer changed."""
    rows = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted((run / "rows").glob("*.json"))}
    kernel_facts: dict[str, tuple[float, float]] = {}  # kernel -> (floor_ms, original ms)
    for row in rows.values():
        roof, base = row.get("roofline"), row.get("baseline")
        if isinstance(roof, dict) and roof.get("floor_ms") and isinstance(base, dict) and base.get("time_ms"):
            kernel_facts[f"{row['task']}/{row['kernel']}"] = (roof["floor_ms"], base["time_ms"])
    changes: list[str] = []
    out.mkdir(parents=True, exist_ok=True)
    for name, row in rows.items():
        if name.startswith("cache-"):
            (out / name).write_text(json.dumps(row, indent=1) + "\n", encoding="utf-8")
    replayed: dict[tuple[str, str, str, int], dict[str, object]] = {}
    for log in sorted((run / "logs").glob("*.log")):
        for search in searches_of(log.read_text(encoding="utf-8", errors="replace")):
            name = f"{search.config}-s{search.seed}-{search.task}-{search.kernel}.json"
            row = rows.get(name)
            if row is None:
                continue
            row = dict(row)
            old = row.get("best")
            answer = answer_of(search)
            facts = kernel_facts.get(f"{search.task}/{search.kernel}")
            if answer is not None and facts is not None:
                path, note, speedup = answer
                same = isinstance(old, dict) and tuple(old.get("techniques", ())) == path and \
                    abs(float(old.get("speedup", 0.0)) - speedup) <= 0.006
                exact = float(old["speedup"]) if same and isinstance(old, dict) else speedup
                floor_ms, original_ms = facts
                if not same:
                    was = "none (error)" if not isinstance(old, dict) else \
                        f"{'+'.join(old.get('techniques', []))} {float(old.get('speedup', 0.0)):.2f}x"
                    changes.append(f"{search.task} {search.config} s{search.seed}: {was} -> {'+'.join(path)} "
                                   f"{speedup:.2f}x")
                row["best"] = {"speedup": exact, "techniques": list(path), "note": note, "replayed": True}
                roof = dict(row["roofline"]) if isinstance(row.get("roofline"), dict) else {"floor_ms": floor_ms}
                roof["fraction"] = floor_ms * exact / original_ms
                row["roofline"] = roof
                row.pop("error", None)
            replayed[(search.task, search.kernel, search.config, search.seed)] = row
            (out / name).write_text(json.dumps(row, indent=1) + "\n", encoding="utf-8")
    for name, row in rows.items():  # rows copied from another seed (rules), and rows with no log
        if name.startswith("cache-") or (out / name).exists():
            continue
        source = replayed.get((row["task"], row["kernel"], row["config"], row.get("copied_from_seed", -1)))
        copy = dict(source, seed=row["seed"], copied_from_seed=row["copied_from_seed"]) if source else row
        (out / name).write_text(json.dumps(copy, indent=1) + "\n", encoding="utf-8")
    return changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="an extracted ablation-rows.tgz (rows/, logs/)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    changes = replay(args.run, args.out)
    print(f"{len(changes)} searches offer another answer under the rule:")
    for line in changes:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
