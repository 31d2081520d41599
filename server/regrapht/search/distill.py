"""Distilling reasoning-graph trajectories from searches run on a GPU (`regrapht graph distill`).

A search leaves a tree of judged candidates; every chain of steps from the original kernel whose
candidates were all verified correct and timed on the GPU becomes one trajectory (the graph's
input format, graph/README.md): per step the technique, what the step changed (the applier's note
and any launch change), the technique's description, the kernel before and after, and the
measured speedup of the step over the code it rewrote, with the GPU and its arch. Failed steps
(wrong, not compiled, rejected) never parent a candidate, so they never appear; a chain that is
the beginning of a longer verified chain is left out (the longer one holds its steps).

Only a corpus `train` split may be distilled: a task directory under a directory named `test`
is refused, so that the graph never learns the kernels it is evaluated on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from regrapht.cuda.view import kernel_view
from regrapht.errors import InputError
from regrapht.graph import ReasoningGraph
from regrapht.search.evidence import kernel_findings
from regrapht.search.run import SearchRun
from regrapht.spec.launch import LaunchConfig
from regrapht.techniques import is_structural
from regrapht.validate.types import Candidate

HELD_OUT = "test"


def check_train_split(directory: Path) -> None:
    """InputError unless `directory` is outside every held-out (`test`) split."""
    if HELD_OUT in directory.resolve().parts or HELD_OUT in directory.parts:
        raise InputError("graph distill reads the corpus train split only; this task is in the held-out "
                         "test split", file=str(directory))


def _kernel_text(source: str, kernel: str) -> str:
    found = kernel_view(source, kernel)
    return found.text(source) if found is not None else source


def _launch_text(launch: LaunchConfig) -> str:
    shared = f" shared={launch.shared_bytes}" if launch.shared_bytes not in ("", "0") else ""
    return f"grid=({', '.join(launch.grid)}) block=({', '.join(launch.block)}){shared}"


def trajectories_of(session: SearchRun, *, task: str, strategy: str, seed: int,
                    graph: ReasoningGraph | None) -> list[dict[str, object]]:
    """The session's verified chains as trajectory records (graph/README.md's format plus
    `task`, `gpu`, `strategy`, `seed`); [] when nothing was measured on a GPU."""
    evaluator = session.evaluator
    if evaluator.gpu_name is None:
        return []
    records: list[dict[str, object]] = []
    for chain in session.ledger.verified_chains(session.original):
        steps: list[dict[str, object]] = []
        before: Candidate = session.original
        before_speedup = 1.0
        for candidate in chain:
            evaluation = session.ledger.evaluation_of(candidate)
            record = session.ledger.history[candidate]
            if evaluation is None or evaluation.speedup is None:
                break
            technique = record.technique
            description = graph.description(technique) if graph is not None and graph.has_technique(technique) else ""
            rationale = record.note or "model answer"
            if candidate.launch != before.launch:
                rationale += f"; launch {_launch_text(candidate.launch)}"
            steps.append({
                "features": list(step_features(session, before)),
                "technique": technique,
                "rationale": rationale,
                "description": description or technique.replace("_", " "),
                "code_before": _kernel_text(before.source, session.kernel),
                "code_after": _kernel_text(candidate.source, session.kernel),
                "speedup": round(evaluation.speedup / before_speedup, 4),
                "arch": evaluator.arch,
            })
            before, before_speedup = candidate, evaluation.speedup
        if steps and len(steps) == len(chain):
            records.append({
                "kernel": session.kernel, "source": _kernel_text(session.original.source, session.kernel),
                "arch": evaluator.arch, "gpu": evaluator.gpu_name, "task": task, "strategy": strategy,
                "seed": seed, "steps": steps,
            })
    return records


def step_features(session: SearchRun, before: Candidate) -> tuple[str, ...]:
    """The evidence features of the code a step rewrote (search/evidence.py): the search's own,
    nvcc-confirmed, for the original; for a later code state the source analysis's rules and the
    proofs still holding there. With the structural appliers that match it (`idiom:`)."""
    view = session.evidence
    idioms = {f"idiom:{a.technique}" for a in session.applicable(before) if is_structural(a.technique)}
    if before == session.original:
        return tuple(sorted(set(view.evidence.features()) | idioms))
    rules = {f"rule:{f.rule}" for f in kernel_findings(before.source, session.kernel)}
    proofs = {f"proof:{t}" for t in view.evidence.proofs if view.proof_on(before.source, t) is not None}
    return tuple(sorted(rules | proofs | idioms))


def unique(records: Iterable[dict[str, object]]) -> list[dict[str, object]]:
    """Records with distinct (kernel, technique path, code after each step), first kept."""
    seen: set[tuple[object, ...]] = set()
    kept: list[dict[str, object]] = []
    for record in records:
        steps = record["steps"]
        assert isinstance(steps, list)
        key = (record["task"], record["kernel"], tuple((s["technique"], s["code_after"]) for s in steps))
        if key not in seen:
            seen.add(key)
            kept.append(record)
    return kept


def write_jsonl(path: Path, records: Iterable[dict[str, object]]) -> int:
    """Write records as JSON Lines (sorted keys: the same run gives the same bytes); the count."""
    lines = [json.dumps(r, sort_keys=True, ensure_ascii=False) for r in records]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write trajectories: {error.strerror or error}", file=str(path)) from error
    return len(lines)
