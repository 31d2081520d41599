"""Optimize kernel: the code action, `regrapht.optimizeKernel` and `regrapht.cancelOptimize`.

The command returns at once; the search (`regrapht.search.optimize`: model + evaluator) runs in
a daemon thread under cancellable work-done progress. The cancel flag checked between steps is
set by the progress's cancel button, by `regrapht.cancelOptimize`, and by an edit of the
kernel's text (compared with the text the search started from) or closing the document. One
search per (uri, kernel). A verified faster version is offered as a `workspace/applyEdit` that
the client asks the user to confirm; if the document changed meanwhile the result is kept and
offered as a code action built against the then current text. Without a CUDA device nothing
unverified is offered: the user is told why.

Pure parts (kernel at a position, spec choice, launch-site rewriting, the edit, messages) are
plain functions; the handlers at the bottom only move data between them and the client.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from regrapht.cards import CardSection
from regrapht.converters import confirmed_workspace_edit, from_lsp_position
from regrapht.errors import InputError
from regrapht.features.common import in_worker, log_to_client, require_document, send_status, show_message
from regrapht.features.progress import CancellableProgress
from regrapht.search.pipeline import BestVersion, OptimizeResult
from regrapht.search.session import Progress
from regrapht.search.source import code_mask, find_kernel, find_launch_sites, matching, split_top_level
from regrapht.settings import Settings
from regrapht.spec.model import Spec, parse_spec, spec_path_for
from regrapht.state import Analysis, DocumentState, ServerState
from regrapht.text import Position, Span, TextEdit
from regrapht.validate.types import LaunchConfig

log = logging.getLogger(__name__)

OPTIMIZE_COMMAND = "regrapht.optimizeKernel"
CANCEL_COMMAND = "regrapht.cancelOptimize"
CARD_SECTION = "Optimize"
_NAME = re.compile(r"[A-Za-z_]\w*")
_SIMPLE = re.compile(r"[A-Za-z_]\w*|\d+[uUlL]*")
_HOST_FUNCTIONS = frozenset({"min", "max"})
_CALL_OPEN = re.compile(r"\s*\(")


# ---------------------------------------------------------------------------------------------
# Which kernel


def kernel_at(analysis: Analysis, position: Position) -> str | None:
    """The kernel whose definition (name, signature or body) or launch site holds `position`."""
    model = analysis.model
    if model is None:
        return None
    for kernel in model.kernels:
        if kernel.span.contains(position):
            return str(kernel.name)
    for site in model.launches:
        launched = model.kernel(site.kernel) if site.span.contains(position) else None
        if launched is not None:
            return str(launched.name)
    return None


def command_target(arguments: Sequence[Any]) -> tuple[str, str | None, types.Position | None]:
    """(uri, kernel, position) from `{uri, kernel}` or `{uri, position: {line, character}}`."""
    if len(arguments) != 1 or not isinstance(arguments[0], dict) or not isinstance(arguments[0].get("uri"), str):
        raise JsonRpcInvalidParams("expected one argument {uri, kernel} or {uri, position}")
    argument = arguments[0]
    kernel, position = argument.get("kernel"), argument.get("position")
    if isinstance(kernel, str):
        return argument["uri"], kernel, None
    if isinstance(position, dict) and all(isinstance(position.get(k), int) for k in ("line", "character")):
        return argument["uri"], None, types.Position(line=position["line"], character=position["character"])
    raise JsonRpcInvalidParams("expected {uri, kernel: string} or {uri, position: {line, character}}")


# ---------------------------------------------------------------------------------------------
# The spec


@dataclass(frozen=True)
class SpecChoice:
    spec: Spec
    note: str  # for the progress and the log: where the spec came from


def choose_spec(text: str, kernel: str, source_path: Path | None) -> SpecChoice:
    """The spec beside the file (`foo.cu` -> `foo.regrapht.toml`), else one inferred from the
    kernel's launch site. InputError for a bad spec file or a kernel a spec cannot describe."""
    from regrapht.spec.infer import infer_spec

    if source_path is not None:
        path = spec_path_for(source_path)
        if path.is_file():
            try:
                spec_text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise InputError(f"cannot read spec: {error}", file=str(path)) from error
            return SpecChoice(parse_spec(spec_text, file=str(path)), f"spec {path.name}")
    shown = source_path.name if source_path is not None else "this file"
    inferred = infer_spec(text, kernel, file=str(source_path) if source_path else None)
    note = f"no spec beside {shown}: inferred one from the launch site (problem sizes are guesses)"
    return SpecChoice(parse_spec(inferred, file="(inferred spec)"), note)


# ---------------------------------------------------------------------------------------------
# The edit: the kernel replaced, launch sites updated when the launch configuration changed


def _position(text: str, offset: int) -> Position:
    line_start = text.rfind("\n", 0, offset) + 1
    return Position(text.count("\n", 0, offset), offset - line_start)


def _span(text: str, start: int, end: int) -> Span:
    return Span(_position(text, start), _position(text, end))


def _group(expr: str) -> str:
    return expr if _SIMPLE.fullmatch(expr.strip()) else f"({expr})"


def _ceil_div_to_c(expr: str) -> str | None:
    """`ceil_div(a, b)` (spec language) as C: `(a + b - 1) / b`; None if malformed."""
    while (at := expr.find("ceil_div(")) >= 0:
        open_at = at + len("ceil_div")
        close = matching(expr, open_at)
        parts = split_top_level(expr[open_at + 1 : close]) if close > 0 else []
        if len(parts) != 2:
            return None
        a, b = (_ceil_div_to_c(p) for p in parts)
        if a is None or b is None:
            return None
        expr = expr[:at] + f"({_group(a)} + {_group(b)} - 1) / {_group(b)}" + expr[close + 1 :]
    return expr


def host_expression(expr: str, arguments: Mapping[str, str]) -> str | None:
    """A launch expression over the kernel's parameter names, written with the host's argument
    texts of one launch site; None if it uses a name the site does not pass."""
    c_expr = _ceil_div_to_c(expr)
    if c_expr is None:
        return None
    unknown: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        name = match.group(0)
        if name in arguments:
            return _group(arguments[name])
        if name not in _HOST_FUNCTIONS:
            unknown.append(name)
        return name

    result = _NAME.sub(substitute, c_expr)
    return None if unknown else result


def _dims(values: Sequence[str]) -> str:
    return values[0] if len(values) == 1 else f"dim3({', '.join(values)})"


def launch_site_edits(
    text: str, kernel: str, skip: tuple[int, int], before: LaunchConfig, after: LaunchConfig
) -> tuple[list[TextEdit], list[str]]:
    """Edits of every launch site of `kernel` in `text` (outside `skip`, the kernel itself) for
    the new launch configuration `after`; problems for sites that cannot be rewritten."""
    if before == after:
        return [], []
    definition = find_kernel(text, kernel)
    params = [p.name for p in definition.params] if definition is not None else []
    masked = code_mask(text)
    edits: list[TextEdit] = []
    problems: list[str] = []
    for site in find_launch_sites(text, kernel):
        if skip[0] <= site.start < skip[1]:
            continue
        line = text.count("\n", 0, site.start) + 1
        opening = _CALL_OPEN.match(masked, site.end)
        paren = opening.end() - 1 if opening else -1
        close = matching(masked, paren) if paren >= 0 else -1
        passed = split_top_level(text[paren + 1 : close]) if close > 0 else []
        mapping = dict(zip(params, passed, strict=False))
        args = list(site.args)
        parts: list[tuple[int, tuple[str, ...], tuple[str, ...]]] = [
            (0, before.grid, after.grid), (1, before.block, after.block),
            (2, (before.shared_bytes,), (after.shared_bytes,)),
        ]
        failed = False
        for index, old, new in parts:
            if old == new:
                continue
            translated = [host_expression(e, mapping) for e in new]
            if any(t is None for t in translated):
                failed = True
                break
            value = _dims([t for t in translated if t is not None])
            if index < len(args):
                args[index] = value
            elif index == 2 and value.strip() != "0":
                args.append(value)
        if failed or len(args) < 2:
            problems.append(f"line {line}: could not rewrite the launch configuration for the host's arguments")
            continue
        edits.append(TextEdit(_span(text, site.start, site.end), f"<<<{', '.join(args)}>>>"))
    return edits, problems


@dataclass(frozen=True)
class KernelEdit:
    edits: tuple[TextEdit, ...]  # on the `text` it was built for
    problems: tuple[str, ...]  # non-empty: do not offer the edit


def build_edit(text: str, snapshot: str, kernel: str, best: BestVersion, before: LaunchConfig) -> KernelEdit:
    """The edit turning `text` (the document now) into the optimized version found for
    `snapshot` (the text searched): the kernel (with helpers the answer put before it) replaced,
    and the launch sites updated if the launch configuration changed."""
    old = find_kernel(snapshot, kernel)
    current = find_kernel(text, kernel)
    if old is None or current is None or current.text(text) != old.text(snapshot):
        return KernelEdit((), (f"{kernel} changed since the search started",))
    prefix, suffix = snapshot[: old.start], snapshot[old.end :]
    source = best.source
    if not (source.startswith(prefix) and source.endswith(suffix) and len(source) >= len(prefix) + len(suffix)):
        return KernelEdit((), ("the optimized file differs outside the kernel",))
    region = source[len(prefix) : len(source) - len(suffix)]
    edits = [TextEdit(_span(text, current.start, current.end), region)]
    launch_edits, problems = launch_site_edits(text, kernel, (current.start, current.end), before, best.launch)
    return KernelEdit(tuple(edits + launch_edits), tuple(problems))


def edit_title(kernel: str, speedup: float, gpu: str | None) -> str:
    return f"Apply {speedup:.1f}x faster {kernel} (verified on {gpu or 'this GPU'})"


def kernel_changed(kernel_text: str, text: str, kernel: str) -> bool:
    """Has the definition of `kernel` in `text` changed from `kernel_text` (or disappeared)?"""
    found = find_kernel(text, kernel)
    return found is None or found.text(text) != kernel_text


# ---------------------------------------------------------------------------------------------
# Messages and card facts


def progress_message(progress: Progress) -> str:
    best = f", best {progress.best_speedup:.2f}x" if progress.best_speedup else ""
    return f"{progress.stage}: {progress.message} ({progress.evaluated}/{progress.budget}{best})"


def no_gpu_message(kernel: str, reason: str) -> str:
    return (
        f"ReGraphT cannot verify optimizations of {kernel} on this machine ({reason or 'no CUDA device'}); "
        "nothing unverified is offered. Run Optimize where a CUDA GPU is available."
    )


def path_text(best: BestVersion) -> tuple[str, ...]:
    """The technique path with the gain after each step: ("vectorize (1.80x)", ...)."""
    return tuple(
        f"{step.technique} ({step.speedup:.2f}x)" if step.speedup is not None else step.technique
        for step in best.steps
    )


def card_section(result: OptimizeResult, applied: str) -> CardSection:
    c = result.counters
    counts = f"{c.generated} candidates, {c.correct} correct, {c.faster} faster ({result.strategy})"
    if result.best is None:
        return CardSection(CARD_SECTION, f"No faster verified version: {result.reason}. {counts}.")
    best = result.best
    baseline = f" ({result.baseline_ms:.4f} -> {best.time_ms:.4f} ms)" if result.baseline_ms else ""
    steps = "\n".join(
        f"{i}. `{s.technique}`" + (f": {s.speedup:.2f}x" if s.speedup is not None else "")
        for i, s in enumerate(best.steps, 1)
    )
    return CardSection(
        CARD_SECTION,
        f"{best.speedup:.2f}x faster on {result.gpu}{baseline}, {applied}. {counts}.\n{steps}",
    )


# ---------------------------------------------------------------------------------------------
# The search, in a worker thread


@dataclass(frozen=True)
class SearchRequest:
    uri: str
    kernel: str
    snapshot: str  # the document text the search starts from
    version: int
    open_id: int
    settings: Settings

    @property
    def source_path(self) -> Path | None:
        path = to_fs_path(self.uri) if self.uri.startswith("file:") else None
        return Path(path) if path else None


@dataclass(frozen=True)
class SearchOutcome:
    kind: str  # "found", "nothing", "cancelled", "no_gpu"
    message: str
    result: OptimizeResult | None = None
    launch: LaunchConfig | None = None  # the spec's launch (before)


class ModelCache:
    """One model backend, reused across runs while the model settings stay the same."""

    def __init__(self, factory: Callable[[Settings], Any]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._key: tuple[Any, ...] | None = None
        self._model: Any = None

    def get(self, settings: Settings) -> Any:
        key = (settings.model_path, settings.model_threads, settings.model_gpu_layers, settings.model_context)
        with self._lock:
            if self._key != key:
                self._model, self._key = self._factory(settings), key
            return self._model


def llama_model(settings: Settings) -> Any:
    from regrapht.model.llama_backend import LlamaBackend, ModelSettings

    model = LlamaBackend(ModelSettings(path=settings.model_path or None, threads=settings.model_threads,
                                       gpu_layers=settings.model_gpu_layers, context=settings.model_context))
    _ = model.info  # checks the GGUF header now: a missing or corrupt file is an InputError here
    return model


def run_search(
    request: SearchRequest,
    report: Callable[[str, int | None], None],
    cancel: Callable[[], bool],
    models: Callable[[Settings], Any],
    wire: Callable[..., Any] | None = None,
) -> SearchOutcome:
    """Spec, evaluator, model, search (blocking; InputError for bad input). `wire` builds the
    evaluator + graph (default `regrapht.search.wiring.open_run`)."""
    from regrapht.search import SearchOptions, optimize
    from regrapht.search.wiring import MODEL_STRATEGIES, open_run, save_statistics

    wire = wire or open_run
    settings = request.settings
    choice = choose_spec(request.snapshot, request.kernel, request.source_path)
    report(choice.note, None)
    report("compiling the original kernel", None)
    file = str(request.source_path or "untitled.cu")
    with wire(request.snapshot, file, request.kernel, choice.spec, env=dict(os.environ), home=Path.home(),
              arch=settings.arch or None) as wired:
        evaluator = wired.evaluator
        if evaluator.gpu_name is None:
            return SearchOutcome("no_gpu", getattr(evaluator, "no_device_reason", "") or "no CUDA device present")
        model = None
        if settings.search_strategy in MODEL_STRATEGIES:
            report(f"loading the model ({settings.model_path or 'embedded SmolLM2'})", None)
            model = models(settings)

        def on_progress(progress: Progress) -> None:
            report(progress_message(progress), min(100, progress.evaluated * 100 // max(progress.budget, 1)))

        result = optimize(
            request.snapshot, request.kernel, wired.target, evaluator, model, wired.graph,
            settings.search_strategy, settings.search_budget, 0, cancel, on_progress,
            options=SearchOptions(use_model=model is not None),
            gpu_lock=lambda: evaluator.gpu_lock.hold(600.0),
        )
        save_statistics(wired.graph, wired.overlay_path)
    kind = "cancelled" if result.cancelled else "found" if result.best is not None else "nothing"
    message = f"{result.best.speedup:.2f}x faster" if result.best is not None else result.reason
    return SearchOutcome(kind, message, result, wired.target.launch)


# ---------------------------------------------------------------------------------------------
# Runs and kept results (one registry per server, owned by the event loop)


@dataclass
class Run:
    request: SearchRequest
    kernel_text: str
    progress: CancellableProgress
    kernel_edited: bool = False
    checked_version: int = -1
    task: asyncio.Future[Any] | None = None


@dataclass(frozen=True)
class Kept:
    """A verified result not applied yet, offered as a code action while the kernel is unchanged."""

    snapshot: str
    kernel_text: str
    result: OptimizeResult
    launch: LaunchConfig


@dataclass
class Registry:
    runs: dict[tuple[str, str], Run] = field(default_factory=dict)
    kept: dict[tuple[str, str], Kept] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def should_cancel(run: Run, document: DocumentState | None) -> bool:
    """Cancel when the user asked, the document closed/reopened, or the kernel's text changed."""
    if run.progress.cancelled or run.kernel_edited:
        return True
    if document is None or document.closed or document.open_id != run.request.open_id:
        return True
    if document.version != run.checked_version:
        run.checked_version = document.version
        run.kernel_edited = kernel_changed(run.kernel_text, document.text, run.request.kernel)
    return run.kernel_edited


def provide_actions(
    registry: Registry, document: DocumentState, analysis: Analysis, span: Span, document_changes: bool,
    encoding: str, annotations: bool,
) -> list[types.CodeAction]:
    """The code-action provider: Optimize (or Cancel) for the kernel at `span`, and Apply for a
    kept result (built against the analysed text, with its version)."""
    kernel = kernel_at(analysis, span.start)
    if kernel is None:
        return []
    key = (document.uri, kernel)
    argument = {"uri": document.uri, "kernel": kernel}
    with registry.lock:
        running, kept = key in registry.runs, registry.kept.get(key)
    title = f"Cancel optimizing {kernel}" if running else f"Optimize {kernel} with ReGraphT"
    command = types.Command(title=title, command=CANCEL_COMMAND if running else OPTIMIZE_COMMAND, arguments=[argument])
    actions = [types.CodeAction(title=title, kind=types.CodeActionKind.RefactorRewrite, command=command)]
    if kept is not None and kept.result.best is not None:
        text = "\n".join(analysis.lines)
        built = build_edit(text, kept.snapshot, kernel, kept.result.best, kept.launch)
        if built.edits and not built.problems:
            label = edit_title(kernel, kept.result.best.speedup, kept.result.gpu)
            edit = confirmed_workspace_edit(
                document.uri, analysis.version, built.edits, analysis.lines, encoding, label,
                " -> ".join(path_text(kept.result.best)), document_changes=document_changes, annotations=annotations,
            )
            actions.append(types.CodeAction(title=label, kind=types.CodeActionKind.RefactorRewrite, edit=edit))
    return actions


def _start_thread(loop: asyncio.AbstractEventLoop, function: Callable[[], Any]) -> asyncio.Future[Any]:
    """Run `function` in a daemon thread (a search must not keep the server from exiting)."""
    future: asyncio.Future[Any] = loop.create_future()

    def settle(setter: Callable[[Any], None], value: Any) -> None:
        if not future.done():
            setter(value)

    def body() -> None:
        try:
            value = function()
        except BaseException as error:  # noqa: BLE001  (handed to the awaiting coroutine, not swallowed)
            loop.call_soon_threadsafe(settle, future.set_exception, error)
        else:
            loop.call_soon_threadsafe(settle, future.set_result, value)

    threading.Thread(target=body, name="regrapht-optimize", daemon=True).start()
    return future


# ---------------------------------------------------------------------------------------------
# Handlers


def _edit_caps(server: LanguageServer) -> tuple[bool, bool, bool]:
    """(applyEdit, documentChanges, change annotations) support of the client."""
    workspace = server.client_capabilities.workspace
    edit = workspace.workspace_edit if workspace else None
    return (
        bool(workspace and workspace.apply_edit),
        bool(edit and edit.document_changes),
        bool(edit and edit.change_annotation_support),
    )


def register(server: LanguageServer, state: ServerState) -> None:
    registry = Registry()
    models = ModelCache(llama_model)

    def provider(document: DocumentState, analysis: Analysis, span: Span, document_changes: bool) -> list[Any]:
        return provide_actions(registry, document, analysis, span, document_changes, state.encoding, _edit_caps(server)[2])

    state.code_action_providers.append(provider)

    @server.command(OPTIMIZE_COMMAND)
    async def optimize_kernel(*arguments: Any) -> dict[str, Any]:
        """Async, returns at once: resolves the kernel (worker), starts the search in a daemon
        thread under cancellable progress; `finish` handles the outcome on the loop."""
        uri, kernel, position = command_target(arguments)
        document = require_document(state, uri)
        analysis = await in_worker(server, state.ensure_analysis, document)
        if position is not None:
            kernel = kernel_at(analysis, from_lsp_position(position, analysis.lines, state.encoding))
        if kernel is None or analysis.kernel(kernel) is None:
            raise JsonRpcInvalidParams(f"no __global__ kernel {'at that position' if kernel is None else repr(kernel)} in {uri}")
        key = (uri, kernel)
        if key in registry.runs:
            log_to_client(server, state, logging.INFO, f"regrapht: already optimizing {kernel}")
            return {"started": False, "reason": f"already optimizing {kernel}"}
        snapshot = "\n".join(analysis.lines)
        found = find_kernel(snapshot, kernel)
        request = SearchRequest(uri, kernel, snapshot, analysis.version, document.open_id, state.settings)
        run = Run(request, found.text(snapshot) if found else "", CancellableProgress(server, state, f"Optimizing {kernel}"))
        with registry.lock:
            registry.runs[key] = run
        await run.progress.begin("reading the spec")
        send_status(server, state, "searching", f"optimizing {kernel}")
        run.task = asyncio.ensure_future(finish(run))
        run.task.add_done_callback(lambda task: _failed(kernel, task))
        return {"started": True, "token": run.progress.token}

    def _failed(kernel: str, task: asyncio.Future[Any]) -> None:
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log.error("optimizing %s failed", kernel, exc_info=error)
            show_message(server, state, logging.ERROR, f"ReGraphT: optimizing {kernel} failed: {error!r}")

    @server.command(CANCEL_COMMAND)
    def cancel_optimize(*arguments: Any) -> dict[str, Any]:
        """Sync on the loop: sets the run's cancel flag (the worker stops at the next step)."""
        uri, kernel, _ = command_target(arguments)
        run = registry.runs.get((uri, kernel or ""))
        if run is not None:
            run.progress.cancel()
        return {"cancelled": run is not None}

    async def finish(run: Run) -> None:
        """On the loop: awaits the worker, then reports, applies or keeps the result."""
        request, progress = run.request, run.progress
        assert state.loop is not None
        key = (request.uri, request.kernel)

        def report(message: str, percentage: int | None) -> None:
            progress.report(message, percentage)
            log.info("optimize %s: %s", request.kernel, message)

        def cancel() -> bool:
            return should_cancel(run, state.get(request.uri))

        outcome: SearchOutcome | None = None
        try:
            outcome = await _start_thread(state.loop, lambda: run_search(request, report, cancel, models.get))
        except InputError as error:
            show_message(server, state, logging.ERROR, f"ReGraphT could not optimize {request.kernel}: {error}")
        finally:
            with registry.lock:
                registry.runs.pop(key, None)
            if outcome is None:
                progress.end("failed")
            send_status(server, state, "ready", "ReGraphT ready")
        if outcome is not None:
            await handle_outcome(run, outcome)

    async def handle_outcome(run: Run, outcome: SearchOutcome) -> None:
        request, progress, kernel = run.request, run.progress, run.request.kernel
        result = outcome.result
        if outcome.kind == "no_gpu":
            progress.end("cannot verify on this machine")
            show_message(server, state, logging.WARNING, no_gpu_message(kernel, outcome.message))
            return
        if result is None or outcome.launch is None:
            return
        applied = "not applied"
        if result.best is not None and not run.kernel_edited:
            with registry.lock:
                registry.kept[(request.uri, kernel)] = Kept(request.snapshot, run.kernel_text, result, outcome.launch)
        if result.best is not None:
            state.update_kernel_facts(request.uri, kernel, technique_path=path_text(result.best))
        if outcome.kind == "cancelled":
            progress.end("cancelled" + (" (the kernel was edited)" if run.kernel_edited else ""))
            log_to_client(server, state, logging.INFO, f"regrapht: optimizing {kernel} cancelled; {outcome.message}")
        elif outcome.kind == "nothing":
            progress.end(outcome.message)
            log_to_client(server, state, logging.INFO, f"regrapht: {kernel}: no faster verified version: {outcome.message}")
        else:
            progress.end(outcome.message)
            applied = await offer(run, result, outcome.launch)
        _set_section(request.uri, kernel, card_section(result, applied))

    async def offer(run: Run, result: OptimizeResult, launch: LaunchConfig) -> str:
        """Sends the confirmed applyEdit if the document is still the searched version."""
        request, kernel, best = run.request, run.request.kernel, result.best
        assert best is not None and run.kernel_text
        can_apply, document_changes, annotations = _edit_caps(server)
        title = edit_title(kernel, best.speedup, result.gpu)
        if not state.is_current(request.uri, request.open_id, request.version) or not can_apply:
            why = "the file changed during the search" if can_apply else "this editor cannot apply edits"
            show_message(server, state, logging.WARNING, f"ReGraphT found a {best.speedup:.1f}x faster {kernel} but "
                         f"{why}; the result is kept: use the code action '{title}' on the kernel.")
            return "kept (offered as a code action)"
        built = build_edit(request.snapshot, request.snapshot, kernel, best, launch)
        if built.problems:
            show_message(server, state, logging.WARNING, f"ReGraphT found a {best.speedup:.1f}x faster {kernel} "
                         f"but cannot apply it automatically: {'; '.join(built.problems)}")
            return "not applied"
        lines = request.snapshot.split("\n")
        edit = confirmed_workspace_edit(request.uri, request.version, built.edits, lines, state.encoding, title,
                                        " -> ".join(path_text(best)), document_changes=document_changes,
                                        annotations=annotations)
        answer = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=title))
        if answer.applied:
            with registry.lock:
                registry.kept.pop((request.uri, kernel), None)
            return "applied"
        log_to_client(server, state, logging.INFO, f"regrapht: {title} not applied ({answer.failure_reason or 'declined'}); "
                      "it stays available as a code action")
        return "kept (offered as a code action)"

    def _set_section(uri: str, kernel: str, section: CardSection) -> None:
        facts = state.facts_for(uri, kernel)
        others = tuple(s for s in (facts.sections if facts else ()) if s.title != CARD_SECTION)
        state.update_kernel_facts(uri, kernel, sections=(*others, section))

