"""How often the model's technique rewrites are usable, with and without the answer prefill.

A script, not a test. For each bench task and each technique below, the model is asked for one
rewrite of the naive kernel through the search's own `SearchRun.model_rewrite` (the prompt the
product sends, with the reasoning graph's example for the edge START -> technique), once with
`prefill_header` (the answer starts with a cuda fence and the kernel's header) and once without,
with the same seeds. Each answer is classified by what the product does with it: rejected before
compiling (no code block, no kernel, another kernel, a changed parameter list), compile error,
or compiled — on a machine without a GPU that is as far as it goes ("unverified"); with one, the
candidate is checked and timed too (wrong / crashed / slower / faster). An answer that is the
original kernel again (up to white space) is marked so.

    python bench/model_answers.py [--tasks bench/tasks/*] [--model PATH] [--threads N]
        [--seeds 2] [--out results.md]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from regrapht.app.optimize import open_run  # noqa: E402
from regrapht.app.resources import GpuResources  # noqa: E402
from regrapht.evaluation.runner import load_task  # noqa: E402
from regrapht.graph import START  # noqa: E402
from regrapht.model.llama_backend import LlamaBackend, ModelSettings  # noqa: E402
from regrapht.search.options import SearchOptions  # noqa: E402
from regrapht.search.request import OptimizeOptions, OptimizeRequest  # noqa: E402
from regrapht.search.run import SearchRun, SearchTools  # noqa: E402

# Techniques a model is asked for on a naive kernel; the first two have no deterministic applier
# for most tasks, the others do (the model is still asked in the search when the applier fails).
TECHNIQUES = ("memory_coalescing", "shared_memory_tiling", "loop_unrolling", "restrict_const", "grid_stride_loop")


def outcome_class(outcome: str, reason: str) -> str:
    if outcome != "rejected":
        return outcome
    if "no code block" in reason:
        return "rejected: no code block"
    if "holds no kernel" in reason:
        return "rejected: no kernel"
    if "instead of" in reason:
        return "rejected: another kernel"
    if "parameter list" in reason:
        return "rejected: parameters changed"
    return "rejected: other"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", type=Path, default=sorted((ROOT / "bench" / "tasks").iterdir()))
    parser.add_argument("--model", default=os.environ.get("REGRAPHT_MODEL"))
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=2, help="answers per task, technique and mode")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    model = LlamaBackend(ModelSettings(path=args.model, threads=args.threads))
    counts: dict[str, collections.Counter[str]] = {"prefill": collections.Counter(), "no prefill": collections.Counter()}
    seconds: dict[str, float] = collections.defaultdict(float)
    gpu = None
    for directory in args.tasks:
        task = load_task(directory)
        kernel = task.spec.kernels[0]
        source = task.source_path.read_text(encoding="utf-8")
        with GpuResources(os.environ, Path.home()) as resources:
            wired = open_run(source, str(task.source_path), kernel.name, task.spec, resources)
            gpu = wired.evaluator.gpu_name
            for mode, prefill in (("prefill", True), ("no prefill", False)):
                for technique in TECHNIQUES:
                    for seed in range(args.seeds):
                        request = OptimizeRequest(kernel.name, source, budget=1, seed=seed, options=OptimizeOptions(
                            search=replace(SearchOptions(), prefill_header=prefill)))
                        session = SearchRun.open(request, wired.target,
                                                 SearchTools(wired.evaluator, model, wired.graph))
                        started = time.perf_counter()
                        judged = session.model_rewrite(session.original, START, technique)
                        seconds[mode] += time.perf_counter() - started
                        cls = "no answer" if judged is None else outcome_class(judged.evaluation.outcome,
                                                                               judged.evaluation.reason)
                        if (judged is not None and judged.evaluation.outcome != "rejected"
                                and " ".join(judged.candidate.source.split()) == " ".join(source.split())):
                            cls += " (the original again)"
                        counts[mode][cls] += 1
                        print(f"{task.name} {technique} seed {seed} {mode}: {cls}", file=sys.stderr, flush=True)
    classes = sorted(set(counts["prefill"]) | set(counts["no prefill"]),
                     key=lambda c: (c.startswith("rejected"), c))
    total = {mode: sum(c.values()) for mode, c in counts.items()}
    lines = [
        f"model answers per class ({', '.join(t.name for t in args.tasks)}; techniques {', '.join(TECHNIQUES)}; "
        f"{args.seeds} seeds; model {model.name}; GPU {gpu or 'none: compiled answers stay unverified'})",
        "",
        "| class | with prefill | without |",
        "|---|---|---|",
    ]
    for cls in classes:
        lines.append(f"| {cls} | {counts['prefill'][cls]} | {counts['no prefill'][cls]} |")
    compiled = {mode: sum(n for c, n in counts[mode].items() if not c.startswith(("rejected", "compile_error"))
                          and c != "no answer") for mode in counts}
    lines += [
        f"| **compiled** | **{compiled['prefill']} of {total['prefill']}** | "
        f"**{compiled['no prefill']} of {total['no prefill']}** |",
        "",
        f"model time: {seconds['prefill']:.0f} s with prefill, {seconds['no prefill']:.0f} s without",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
