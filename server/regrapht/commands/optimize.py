"""`regrapht optimize FILE.cu --kernel NAME ...`: search for a faster, verified kernel.

JSON output is the `regrapht optimize` contract of docs/cli-contract.md. Exit codes:
0 a verified faster version was found (`best` is set); 1 the search ran but found no verified
faster version (`reason` says why: no CUDA device, nothing correct, nothing faster); 2 bad input
(a `--profile` file that is not a saved profile of the kernel included).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from regrapht.app.optimize import (
    MODEL_STRATEGIES,
    ModelCache,
    ModelConfig,
    OptimizeOptions,
    OptimizeRequest,
    choose_spec,
    run_optimize,
)
from regrapht.app.resources import GpuResources
from regrapht.commands.compiling import add_compile_arguments, compile_setup_of, flags_of
from regrapht.commands.from_capture import add_capture_argument, spec_argument
from regrapht.errors import InputError
from regrapht.inputs import MAX_JSON_BYTES, read_source, read_text_bounded
from regrapht.limits import DEFAULT_SEARCH_BUDGET, DEFAULT_SEARCH_STRATEGY, SEARCH_STRATEGIES
from regrapht.model.locate import validate_model
from regrapht.search import OptimizeResult, Progress, SearchOptions
from regrapht.search.profile_evidence import PRIOR_STRATEGIES
from regrapht.validate.profile_report import Profile, profile_from_json


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("optimize", help="search for a faster verified version of a kernel")
    parser.add_argument("file", help="the .cu file")
    parser.add_argument("--kernel", required=True, help="the __global__ kernel to optimize")
    parser.add_argument("--spec", help="the kernel spec (default: FILE's .regrapht.toml)")
    parser.add_argument("--budget", type=int, default=DEFAULT_SEARCH_BUDGET,
                        help=f"candidates to judge (default {DEFAULT_SEARCH_BUDGET})")
    parser.add_argument("--strategy", default=DEFAULT_SEARCH_STRATEGY, choices=SEARCH_STRATEGIES)
    parser.add_argument("--model", help="GGUF model file (default: $REGRAPHT_MODEL, else the embedded SmolLM2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--arch", help="e.g. sm_90 (default: the device's, else sm_90)")
    parser.add_argument("--graph", help="reasoning graph file (default: the bundled one)")
    parser.add_argument("--model-threads", type=int, default=0)
    parser.add_argument("--model-gpu-layers", type=int, default=0, help="layers offloaded to the GPU")
    parser.add_argument("--no-model", action="store_true", help="appliers only, even for mcgs/random/greedy")
    parser.add_argument("--no-fast-math", action="store_true",
                        help="leave techniques that approximate (fast-math intrinsics, float for double) out")
    parser.add_argument("--no-sanitize", action="store_true",
                        help="offer the answer without running it under compute-sanitizer first")
    parser.add_argument("--accept-guesses", action="store_true",
                        help="time on a spec whose `guessed` values are not proven from the kernel "
                             "(without a spec one is inferred; by default a spec with guesses is refused)")
    parser.add_argument("--time-limit", type=float, metavar="SECONDS",
                        help="stop the search after this long and keep the best verified so far")
    parser.add_argument("--step-cap", type=int, default=SearchOptions.step_cap)
    parser.add_argument("--epsilon", type=float, default=SearchOptions.epsilon)
    parser.add_argument("--visit-penalty", type=float, default=SearchOptions.visit_penalty, help="lambda")
    parser.add_argument("--progress", action="store_true", help="progress lines on stderr")
    parser.add_argument("--profile", metavar="PATH",
                        help="a saved Nsight Compute profile of the kernel (`regrapht bench --profile --json` output, "
                             "or its `profile` object): the techniques it points to are tried first")
    add_capture_argument(parser)
    add_compile_arguments(parser)
    parser.set_defaults(handler=run)


def load_model(args: Any, models: ModelCache, config: ModelConfig) -> None:
    """Load the model a run will ask now (a missing or corrupt file is exit 2 before any search).
    A `--model` named anyway is still checked: a bad path is exit 2 whether or not it is asked."""
    if args.strategy in MODEL_STRATEGIES and not args.no_model:
        models.get(config)
    elif args.model:
        validate_model(Path(args.model))


def optimize_file(args: Any, resources: GpuResources) -> OptimizeResult:
    """The CLI's request (the file as read, the spec beside it or `--spec`) through `run_optimize`."""
    path = Path(args.file)
    source, _warnings = read_source(path)
    options = OptimizeOptions(
        model=ModelConfig(args.model, args.model_threads, args.model_gpu_layers), use_model=not args.no_model,
        arch=args.arch, graph_path=Path(args.graph) if args.graph else None, time_limit_s=args.time_limit,
        search=SearchOptions(step_cap=args.step_cap, epsilon=args.epsilon, visit_penalty=args.visit_penalty,
                             allow_approximations=not args.no_fast_math),
        compile=compile_setup_of(args), sanitize=not args.no_sanitize, infer_spec=True,
        accept_guesses=args.accept_guesses)
    profile = load_profile(Path(args.profile), args.kernel) if args.profile else None
    request = OptimizeRequest(args.kernel, source, Path(args.file), spec_argument(args, path),
                              args.strategy, args.budget, args.seed, options, profile)
    request = replace(request, spec=choose_spec(request).spec)  # a bad spec: exit 2 before the model loads
    flags_of(args, path)  # a bad compile database or a neighbour's flags: said on stderr
    models = ModelCache()
    load_model(args, models, options.model)
    outcome = run_optimize(request, resources, models=models, progress=_print_progress if args.progress else None)
    assert outcome.result is not None  # the CLI searches without a device too (compile-only)
    return outcome.result


def load_profile(path: Path, kernel: str) -> Profile:
    """The saved profile of `kernel` at `path` (validate/profile_report.py reads its shapes);
    InputError naming the file for anything else, and for a profile that records a failure."""
    text = read_text_bounded(path, MAX_JSON_BYTES, "profile")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise InputError(f"the profile is not JSON: {error}", file=str(path)) from None
    profile = profile_from_json(data, kernel, str(path))
    if profile.outcome == "failed":
        raise InputError(f"the saved profile records no measurement: {profile.reason}", file=str(path))
    return profile


def _print_progress(progress: Progress) -> None:
    best = f" best {progress.best_speedup:.2f}x" if progress.best_speedup else ""
    print(f"[{progress.evaluated}/{progress.budget}] {progress.stage}: {progress.message}{best}", file=sys.stderr)


def run(args: Any) -> int:
    with GpuResources(os.environ, Path.home()) as resources:
        result = optimize_file(args, resources)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(summary(result))
    return 0 if result.best is not None else 1


def summary(result: OptimizeResult) -> str:
    c = result.counters
    lines = [
        f"{result.kernel}: strategy {result.strategy}, budget {result.budget}, "
        f"GPU {result.gpu or 'none'} ({result.arch})",
        f"baseline: {result.baseline_ms:.4f} ms" if result.baseline_ms is not None else "baseline: not measured",
        f"candidates: {c.generated} generated, {c.compiled} compiled, {c.correct} correct, {c.faster} faster",
        f"tokens: {result.prompt_tokens} prompt, {result.completion_tokens} completion; {result.wall_s:.1f} s",
    ]
    if result.profile is not None:
        named = ", ".join(f"{b.technique} (+{b.weight:g})" for b in result.profile.boosts) or "no technique"
        read = "raised" if result.strategy in PRIOR_STRATEGIES else f"names (not read by strategy {result.strategy}):"
        lines.append(f"profile ({result.profile.bottleneck}-bound): {read} {named}")
    if result.best is not None:
        lines.append(f"best: {result.best.speedup:.2f}x ({result.best.time_ms:.4f} ms) via "
                     f"{' -> '.join(result.best.techniques)}")
    else:
        lines.append(f"no faster verified version: {result.reason}")
    return "\n".join(lines)
