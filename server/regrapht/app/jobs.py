"""Optimize runs started from the editor: one search per (uri, kernel), run in a daemon thread.

Owns: the editor's `OptimizeRequest` for a kernel of a `DocumentSnapshot` (the document text
a search starts from, under the settings of that moment: `optimize_request`), the blocking search
itself (`run_search`, over `regrapht.app.optimize.run_optimize`), when a run must stop
(`should_cancel`), and the registry of running searches and of verified results not applied yet.

No editor protocol here: the caller passes the progress (anything with `cancelled`, `cancel`,
`report`, `end`), the open document (anything shaped like `OpenDocument`) and the event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from regrapht.app.messages import progress_message, progress_percentage
from regrapht.app.optimize import (
    ModelCache,
    ModelConfig,
    OptimizeOptions,
    OptimizeOutcome,
    OptimizeRequest,
    Wire,
    open_run,
    run_optimize,
)
from regrapht.app.result_edits import kernel_changed
from regrapht.cards import KernelFacts
from regrapht.search.options import SearchOptions
from regrapht.settings import Settings
from regrapht.snapshot import DocumentSnapshot
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.compile_db import compile_setup
from regrapht.validate.profile_report import Profile, source_digest

if TYPE_CHECKING:  # annotations only: the server starts without the search engine
    from regrapht.app.resources import GpuResources
    from regrapht.search.pipeline import OptimizeResult
    from regrapht.search.run import Progress

RunKey = tuple[str, str]  # (uri, kernel)


def model_config(settings: Settings) -> ModelConfig:
    return ModelConfig(settings.model_path or None, settings.model_threads, settings.model_gpu_layers,
                       settings.model_context)


def profile_of_text(facts: KernelFacts | None, text: str) -> Profile | None:
    """The kernel's last profile (background validation's, kept in its facts) if it measured
    exactly `text`; None otherwise (no profile, or one of an earlier text)."""
    kept = facts.profile if facts is not None else None
    return kept.profile if kept is not None and kept.digest == source_digest(text) else None


def optimize_request(document: DocumentSnapshot, kernel: str, spec: Path | None = None, *,
                     accept_guesses: bool = False, profile: Profile | None = None) -> OptimizeRequest:
    """The editor's search of `kernel`: the snapshot's text, its settings' strategy, budget and
    model; `spec` (a capture's, docs/capture.md), else a spec beside the file or inferred (as the
    CLI does); nothing is judged without a device; a spec with guesses only once the user
    accepted them (`accept_guesses`); `profile`: Nsight Compute's profile of this very text
    (`profile_of_text`), whose techniques the search tries first."""
    settings = document.settings
    options = OptimizeOptions(model=model_config(settings), arch=settings.arch or None, infer_spec=True,
                              require_device=True, accept_guesses=accept_guesses,
                              compile=compile_setup(settings.compile_commands, settings.extra_compiler_args),
                              search=SearchOptions(allow_approximations=settings.allow_fast_math),
                              sanitize=settings.sanitize)
    return OptimizeRequest(kernel, document.text, document.path, spec, settings.search_strategy,
                           settings.search_budget, 0, options, profile)


# ---------------------------------------------------------------------------------------------
# The search (blocking: call it in a worker thread)


def guesses_of(document: DocumentSnapshot, kernel: str) -> tuple[tuple[str, ...], str]:
    """Blocking (a worker): the keys the spec the editor's Optimize would use marks as guesses,
    and where the spec comes from; ((), "") when the spec cannot be read (the run reports that)."""
    from regrapht.app.optimize import choose_spec, spec_guesses
    from regrapht.errors import InputError

    try:
        choice = choose_spec(optimize_request(document, kernel))
        return spec_guesses(choice, kernel), choice.note
    except InputError:
        return (), ""


def run_search(
    request: OptimizeRequest,
    resources: GpuResources,
    report: Callable[[str, int | None], None],
    cancel: Callable[[], bool],
    models: ModelCache,
    wire: Wire = open_run,
) -> OptimizeOutcome:
    """`run_optimize` for the editor's request (blocking; InputError for bad input); `report`
    gets every step as a progress line and percentage."""

    def on_progress(progress: Progress) -> None:
        report(progress_message(progress), progress_percentage(progress))

    return run_optimize(request, resources, models=models, note=lambda m: report(m, None),
                        progress=on_progress, cancel=cancel, wire=wire)


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
    """What `should_cancel` reads of the open document (`regrapht.lsp.state.DocumentState`)."""

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
    document: DocumentSnapshot  # the document the search started from
    request: OptimizeRequest  # its kernel, in the document's text
    kernel_text: str  # the kernel's definition in the snapshot: an edit of it cancels the run
    progress: RunProgress
    kernel_edited: bool = False
    checked_version: int = -1
    task: asyncio.Future[Any] | None = None

    @property
    def key(self) -> RunKey:
        return self.document.uri, self.request.kernel


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
    if document is None or document.closed or document.open_id != run.document.open_id:
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
            self.runs[run.key] = run

    def remove(self, key: RunKey) -> None:
        with self.lock:
            self.runs.pop(key, None)

    def keep(self, key: RunKey, kept: Kept) -> None:
        with self.lock:
            self.kept[key] = kept

    def forget_kept(self, key: RunKey) -> None:
        with self.lock:
            self.kept.pop(key, None)
