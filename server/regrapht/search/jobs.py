"""Optimize runs started from the editor: one search per (uri, kernel), run in a daemon thread.

Owns: the request (the document text a search starts from), choosing the spec (beside the file,
else inferred from the launch site), the blocking search itself (`run_search`: spec, evaluator,
model, `regrapht.search.optimize`), the model cache reused across runs, when a run must stop
(`should_cancel`), and the registry of running searches and of verified results not applied yet.

No editor protocol here: the caller passes the progress (anything with `cancelled`, `cancel`,
`report`, `end`), the open document (anything shaped like `OpenDocument`) and the event loop.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from regrapht.search.messages import progress_message, progress_percentage
from regrapht.search.result_edits import kernel_changed
from regrapht.settings import Settings
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import Spec, load_spec, parse_spec, spec_path_for

if TYPE_CHECKING:  # annotations only: the server starts without the search engine
    from regrapht.search.pipeline import OptimizeResult
    from regrapht.search.run import Progress

RunKey = tuple[str, str]  # (uri, kernel)


@dataclass(frozen=True)
class SearchRequest:
    uri: str
    kernel: str
    snapshot: str  # the document text the search starts from
    version: int
    open_id: int
    settings: Settings
    source_path: Path | None = None  # the file on disk, when the document is one

    @property
    def key(self) -> RunKey:
        return self.uri, self.kernel


@dataclass(frozen=True)
class SearchOutcome:
    kind: str  # "found", "nothing", "cancelled", "no_gpu"
    message: str
    result: OptimizeResult | None = None
    launch: LaunchConfig | None = None  # the spec's launch (before)


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
            return SpecChoice(load_spec(path), f"spec {path.name}")
    shown = source_path.name if source_path is not None else "this file"
    inferred = infer_spec(text, kernel, file=str(source_path) if source_path else None)
    note = f"no spec beside {shown}: inferred one from the launch site (problem sizes are guesses)"
    return SpecChoice(parse_spec(inferred, file="(inferred spec)"), note)


# ---------------------------------------------------------------------------------------------
# The model


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
    from regrapht.model import ModelSettings, ProcessModelBackend

    model = ProcessModelBackend(ModelSettings(path=settings.model_path or None, threads=settings.model_threads,
                                       gpu_layers=settings.model_gpu_layers, context=settings.model_context))
    _ = model.info  # checks the GGUF header now: a missing or corrupt file is an InputError here
    return model


# ---------------------------------------------------------------------------------------------
# The search (blocking: call it in a worker thread)


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
            report(progress_message(progress), progress_percentage(progress))

        result = optimize(
            request.snapshot, request.kernel, wired.target, evaluator, model, wired.graph,
            settings.search_strategy, settings.search_budget, 0, cancel, on_progress,
            options=SearchOptions(use_model=model is not None),
            gpu_lock=evaluator.hold_gpu,
        )
        save_statistics(wired.graph, wired.overlay_path)
    kind = "cancelled" if result.cancelled else "found" if result.best is not None else "nothing"
    message = f"{result.best.speedup:.2f}x faster" if result.best is not None else result.reason
    return SearchOutcome(kind, message, result, wired.target.launch)


def start_daemon_thread(loop: asyncio.AbstractEventLoop, function: Callable[[], Any]) -> asyncio.Future[Any]:
    """Run `function` in a daemon thread (a search must not keep the server from exiting); the
    future, settled on `loop`, holds its value or the exception it raised."""
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
# Runs, cancelling, kept results


class RunProgress(Protocol):
    """The progress shown for a run; its cancel flag is checked between search steps."""

    @property
    def cancelled(self) -> bool: ...

    def cancel(self) -> None: ...

    def report(self, message: str, percentage: int | None = None) -> None: ...

    def end(self, message: str = "") -> None: ...


class OpenDocument(Protocol):
    """What `should_cancel` reads of the open document (`regrapht.state.DocumentState`)."""

    @property
    def closed(self) -> bool: ...

    @property
    def open_id(self) -> int: ...

    @property
    def version(self) -> int: ...

    @property
    def text(self) -> str: ...


@dataclass
class Run:
    request: SearchRequest
    kernel_text: str  # the kernel's definition in the snapshot: an edit of it cancels the run
    progress: RunProgress
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


def should_cancel(run: Run, document: OpenDocument | None) -> bool:
    """Cancel when the user asked, the document closed/reopened, or the kernel's text changed."""
    if run.progress.cancelled or run.kernel_edited:
        return True
    if document is None or document.closed or document.open_id != run.request.open_id:
        return True
    if document.version != run.checked_version:
        run.checked_version = document.version
        run.kernel_edited = kernel_changed(run.kernel_text, document.text, run.request.kernel)
    return run.kernel_edited


@dataclass
class Registry:
    """The running searches and the kept results of one server, by (uri, kernel); thread-safe."""

    runs: dict[RunKey, Run] = field(default_factory=dict)
    kept: dict[RunKey, Kept] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def running(self, key: RunKey) -> Run | None:
        with self.lock:
            return self.runs.get(key)

    def status(self, key: RunKey) -> tuple[bool, Kept | None]:
        """(is a search running, the kept result) for `key`."""
        with self.lock:
            return key in self.runs, self.kept.get(key)

    def add(self, run: Run) -> None:
        with self.lock:
            self.runs[run.request.key] = run

    def remove(self, key: RunKey) -> None:
        with self.lock:
            self.runs.pop(key, None)

    def keep(self, key: RunKey, kept: Kept) -> None:
        with self.lock:
            self.kept[key] = kept

    def forget_kept(self, key: RunKey) -> None:
        with self.lock:
            self.kept.pop(key, None)
