"""The optimize workflow, one home for the CLI (`regrapht optimize`), `regrapht eval` and the editor.

`run_optimize(OptimizeRequest, GpuResources)` owns the sequence all three need (the request
type is `regrapht.search.request`'s, the same one the search reads): choose the spec
(the given one, else the one beside the file, else - in the editor - one inferred from the
launch site), wire the evaluator (on the shared compiler, GPU worker and GPU lock of
`GpuResources`) and the reasoning graph, get the model from a `ModelCache`, run
`regrapht.search.optimize`, and save this machine's edge statistics to the user-local overlay
(never to the bundled graph). The search engine itself only ever receives these as arguments.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from regrapht.errors import InputError
from regrapht.search.request import ModelConfig, OptimizeOptions, OptimizeRequest
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import KernelSpec, Spec, load_spec, parse_spec, spec_path_for
from regrapht.validate.compile_db import NO_FLAGS, CompileFlags

if TYPE_CHECKING:  # the language server starts without the search engine, graph and evaluator
    from regrapht.app.model_memory import KernelModelMemory
    from regrapht.app.resources import GpuResources
    from regrapht.graph import ReasoningGraph
    from regrapht.model.backend import ModelBackend
    from regrapht.search.evidence import KernelEvidence
    from regrapht.search.pipeline import KernelTarget, OptimizeResult
    from regrapht.search.run import Progress, SearchRun
    from regrapht.validate.evaluator import CudaEvaluator
    from regrapht.validate.measurements import MeasurementCache
    from regrapht.validate.types import Evaluator, Sanitizer

__all__ = ["MODEL_STRATEGIES", "ModelCache", "ModelConfig", "OptimizeOptions", "OptimizeOutcome", "OptimizeRequest",
           "OptimizeRun", "SpecChoice", "Wire", "choose_spec", "kernel_target", "llama_model", "open_evaluator",
           "evidence_wiring", "open_run", "refuse_guesses", "run_optimize", "save_statistics", "spec_guesses"]

MODEL_STRATEGIES = ("mcgs", "random", "greedy", "cot")
# The strategies whose choices read the kernel's evidence (`GraphWalker.promise`, search/mcgs.py).
EVIDENCE_STRATEGIES = ("mcgs", "random", "greedy")


# ---------------------------------------------------------------------------------------------
# The outcome (the request is `regrapht.search.request.OptimizeRequest`, built by every caller)


@dataclass(frozen=True)
class OptimizeOutcome:
    kind: Literal["found", "nothing", "cancelled", "no_gpu"]
    message: str
    result: OptimizeResult | None = None
    launch: LaunchConfig | None = None  # the spec's launch (before)


# ---------------------------------------------------------------------------------------------
# The spec


@dataclass(frozen=True)
class SpecChoice:
    spec: Spec
    note: str  # for the progress and the log: where the spec came from


def choose_spec(request: OptimizeRequest) -> SpecChoice:
    """The given spec, else the one beside the file (`foo.cu` -> `foo.regrapht.toml`), else
    (with `infer_spec`) one inferred from the kernel's launch site. InputError for a bad or
    missing spec file or a kernel a spec cannot describe."""
    if isinstance(request.spec, Spec):
        return SpecChoice(request.spec, "spec given")
    if isinstance(request.spec, Path):
        if not request.spec.is_file():
            raise InputError("spec file not found", file=str(request.spec))
        return SpecChoice(load_spec(request.spec), f"spec {request.spec.name}")
    source_path = request.file
    if source_path is not None:
        path = spec_path_for(source_path)
        if path.is_file():
            return SpecChoice(load_spec(path), f"spec {path.name}")
        if not request.options.infer_spec:
            raise InputError(f"no spec {path.name} beside the file (write one, or run "
                             f"`regrapht spec infer {source_path} --kernel NAME`)", file=str(path))
    from regrapht.spec.infer import infer_spec

    shown = source_path.name if source_path is not None else "this file"
    include_dirs = request.options.compile.lookup(source_path).flags.include_dirs if source_path else ()
    inferred = infer_spec(request.source, request.kernel, file=str(source_path) if source_path else None,
                          include_dirs=include_dirs)
    spec = parse_spec(inferred, file="(inferred spec)")
    guessed = spec.kernels[0].guessed
    note = f"no spec beside {shown}: inferred one from the launch site (problem sizes chosen; " + \
        (f"guessed: {', '.join(guessed)})" if guessed else "counts and roles proven from the kernel's accesses)")
    return SpecChoice(spec, note)


def spec_guesses(choice: SpecChoice, kernel: str) -> tuple[str, ...]:
    """The keys the chosen spec of `kernel` marks as guesses (`guessed`)."""
    return choice.spec.kernel(kernel).guessed


def refuse_guesses(choice: SpecChoice, kernel: str) -> None:
    """InputError when the spec's `kernel` has guesses: nothing is timed on them unasked."""
    guessed = spec_guesses(choice, kernel)
    if guessed:
        where = choice.spec.file or "(inferred spec)"
        raise InputError(f"the spec of {kernel} has values not proven from the kernel ({', '.join(guessed)}): "
                         "check them (write the spec with `regrapht spec infer FILE --kernel NAME -o SPEC` and edit "
                         "it), or time on them anyway (--accept-guesses; the editor asks)", file=where)


# ---------------------------------------------------------------------------------------------
# The model


def llama_model(config: ModelConfig) -> ModelBackend:
    """The GGUF model, run by llama.cpp in its own worker process."""
    from regrapht.model import ModelSettings, ProcessModelBackend

    model = ProcessModelBackend(ModelSettings(path=config.path or None, threads=config.threads,
                                              gpu_layers=config.gpu_layers, context=config.context))
    _ = model.info  # checks the GGUF header now: a missing or corrupt file is an InputError here
    return model


class ModelCache:
    """One model backend, reused across runs while its `ModelConfig` stays the same."""

    def __init__(self, factory: Callable[[ModelConfig], ModelBackend] = llama_model) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._config: ModelConfig | None = None
        self._model: ModelBackend | None = None

    def get(self, config: ModelConfig) -> ModelBackend:
        with self._lock:
            if self._model is None or self._config != config:
                self._model, self._config = self._factory(config), config
            return self._model


def _model_memory(request: OptimizeRequest, resources: GpuResources, model: ModelBackend) -> KernelModelMemory | None:
    """The model's failure memory for this kernel in the shared cache dir (app/model_memory.py);
    None for a model that is not a file (a test double)."""
    from regrapht.app.model_memory import open_model_memory
    from regrapht.model.backend import ModelFromFile

    path = model.path if isinstance(model, ModelFromFile) else None
    if not isinstance(path, Path):
        return None
    return open_model_memory(resources.cache_dir, path, request.source, request.kernel)


# ---------------------------------------------------------------------------------------------
# Wiring


def kernel_target(kernel: KernelSpec) -> KernelTarget:
    """The spec's launch as expressions, and the counts/values it fixes: buffer counts and integer
    scalars that do not depend on the problem-size scalar (which the odd-size check changes), so
    an applier may size a shared array by them (`bins`, `nbins`)."""
    from regrapht.search.pipeline import KernelTarget
    from regrapht.spec.expr import names_in
    from regrapht.spec.resolve import resolve, size_scalar, spec_launch

    constants: dict[str, int] = {}
    for arg in kernel.args:
        raw = arg.count if arg.is_pointer else None
        if isinstance(raw, int) and not isinstance(raw, bool):
            constants[arg.name] = raw
        elif isinstance(raw, str) and re.fullmatch(r"\s*\d+\s*", raw):
            constants[arg.name] = int(raw)
    size = size_scalar(kernel)
    floating = any(a.is_pointer and a.role != "in" and a.ctype.info.dtype.startswith(("float", "complex"))
                   for a in kernel.args)
    try:
        resolved = resolve(kernel)
    except InputError:
        return KernelTarget(spec_launch(kernel), constants, floating)
    for buffer, arg in zip(resolved.buffers, (a for a in kernel.args if a.is_pointer), strict=False):
        if size is None or size not in names_in(arg.count if arg.count is not None else ""):
            constants.setdefault(buffer.name, buffer.count)
    for name, value in resolved.scalars.items():
        if name != size and isinstance(value, int) and not isinstance(value, bool):
            constants.setdefault(name, value)
    return KernelTarget(spec_launch(kernel), constants, floating)


def no_evidence() -> KernelEvidence | None:
    return None


@dataclass
class OptimizeRun:
    """What one search is wired to: the evaluator (on the shared worker and lock), the graph and
    (`evidence`, called once the search is sure to run) what nvcc proves about the kernel."""

    evaluator: Evaluator
    graph: ReasoningGraph
    overlay_path: Path
    target: KernelTarget
    evidence: Callable[[], KernelEvidence | None] = no_evidence


def evidence_wiring(source: str, file: str, kernel: str, resources: GpuResources, arch: str | None,
                    flags: CompileFlags = NO_FLAGS) -> Callable[[], KernelEvidence | None]:
    """The kernel's evidence for the search (search/evidence.py: its findings confirmed on its PTX,
    ptxas's resources), computed on the first call and kept; None where nvcc is not installed."""
    kept: list[KernelEvidence | None] = []

    def evidence() -> KernelEvidence | None:
        if not kept:
            from regrapht.limits import DEFAULT_ARCH
            from regrapht.search.evidence import compiled_evidence

            compiler = resources.compiler_if_found()
            kept.append(None if compiler is None else compiled_evidence(
                compiler, source, kernel, Path(file).resolve(), arch or DEFAULT_ARCH, flags, timeout_s=EVIDENCE_TIMEOUT_S))
        return kept[0]
    return evidence


# nvcc's time for the PTX of the kernel's file (the evidence goes without it past this)
EVIDENCE_TIMEOUT_S = 60.0


def open_evaluator(source: str, file: str, kernel: str, spec: Spec, resources: GpuResources, *,
                   arch: str | None = None, measurements: MeasurementCache | None = None,
                   flags: CompileFlags = NO_FLAGS) -> CudaEvaluator:
    """The evaluator of `kernel` on the shared compiler, GPU worker and lock (InputError for a
    bad spec or kernel); `measurements`: verdicts shared with other evaluators of the kernel."""
    from regrapht.validate.evaluator import CudaEvaluator

    kernel_spec = spec.kernel(kernel)
    return CudaEvaluator(source, kernel_spec.name, kernel_spec, arch=arch, worker=resources.worker(),
                         cache_dir=resources.ensure_cache_dir(), compiler=resources.compiler(), file=file,
                         include_dirs=(str(Path(file).resolve().parent),), flags=flags,
                         gpu_lock=resources.gpu_lock, measurements=measurements)


def open_run(source: str, file: str, kernel: str, spec: Spec, resources: GpuResources, *,
             arch: str | None = None, graph_path: Path | None = None, flags: CompileFlags = NO_FLAGS) -> OptimizeRun:
    """Everything one search needs (InputError for a bad spec, kernel or graph file)."""
    from regrapht.graph import default_overlay_path, open_graph

    overlay_path = default_overlay_path(resources.env, resources.home)
    graph = open_graph(graph_path, overlay_path)
    evaluator = open_evaluator(source, file, kernel, spec, resources, arch=arch, flags=flags)
    return OptimizeRun(evaluator, graph, overlay_path, kernel_target(spec.kernel(kernel)),
                       evidence_wiring(source, file, kernel, resources, evaluator.arch, flags))


def open_sanitizer_for(evaluator: Evaluator, resources: GpuResources) -> Sanitizer | None:
    """compute-sanitizer for a CUDA evaluator's kernel (None for another evaluator, a test's)."""
    from regrapht.validate.evaluator import CudaEvaluator
    from regrapht.validate.sanitizer import open_sanitizer

    return open_sanitizer(evaluator, resources.env) if isinstance(evaluator, CudaEvaluator) else None


def save_statistics(graph: ReasoningGraph, overlay_path: Path) -> None:
    """Add this run's verified outcomes to the overlay file (keeping other runs' saves)."""
    from regrapht.graph import merge_into_file

    new_outcomes = graph.take_unsaved()
    if len(new_outcomes):
        graph.apply_overlay(merge_into_file(overlay_path, new_outcomes))


Wire = Callable[..., OptimizeRun]


# ---------------------------------------------------------------------------------------------
# The workflow (blocking: the editor calls it in a worker thread)


def run_optimize(
    request: OptimizeRequest,
    resources: GpuResources,
    *,
    models: ModelCache | None = None,
    note: Callable[[str], None] = lambda message: None,
    progress: Callable[[Progress], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    on_finish: Callable[[SearchRun], None] | None = None,
    wire: Wire = open_run,
) -> OptimizeOutcome:
    """Spec, evaluator, model, search, statistics (InputError for bad input). `note` gets the
    steps before the search (spec, compile, model), `progress` the search's own reports,
    `on_finish` the finished search's state (`graph distill` reads its trajectories)."""
    from regrapht.search.pipeline import SearchHooks, SearchTools, optimize

    options = request.options
    choice = choose_spec(request)
    note(choice.note)
    if not options.accept_guesses:
        refuse_guesses(choice, request.kernel)
    flags = options.compile.lookup(request.file)
    for message in (*(str(p) for p in flags.problems), *((flags.notice,) if flags.notice else ())):
        note(message)
    note("compiling the original kernel" + (f" with {flags.flags.describe()}" if not flags.flags.empty else ""))
    file = str(request.file or "untitled.cu")
    wired = wire(request.source, file, request.kernel, choice.spec, resources, arch=options.arch,
                 graph_path=options.graph_path, flags=flags.flags)
    evaluator = wired.evaluator
    if evaluator.gpu_name is None and options.require_device:
        return OptimizeOutcome("no_gpu", evaluator.no_device_reason or "no CUDA device present")
    model = None
    memory = None
    if request.strategy in MODEL_STRATEGIES and options.use_model:
        note(f"loading the model ({options.model.path or 'embedded SmolLM2'})")
        model = (models or ModelCache()).get(options.model)
        if options.model_memory:
            memory = _model_memory(request, resources, model)
    sanitizer = open_sanitizer_for(evaluator, resources) if options.sanitize and evaluator.gpu_name else None
    # what nvcc proves about the kernel leads the graph strategies (search/evidence.py)
    evidence = wired.evidence() if request.strategy in EVIDENCE_STRATEGIES else None
    result = optimize(request, wired.target, SearchTools(evaluator, model, wired.graph, memory, evidence=evidence,
                      sanitizer=sanitizer),
                      SearchHooks(cancel, progress, on_finish))
    save_statistics(wired.graph, wired.overlay_path)
    kind: Literal["found", "nothing", "cancelled"] = (
        "cancelled" if result.cancelled else "found" if result.best is not None else "nothing")
    message = f"{result.best.speedup:.2f}x faster" if result.best is not None else result.reason
    return OptimizeOutcome(kind, message, result, wired.target.launch)
