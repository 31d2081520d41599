"""Everything the language server knows, in one object created by `regrapht.lsp.server`.

No pygls here (tests drive it directly). Thread model:

- The event loop owns `DocumentState.lines/version` and the pending-edit queue: didOpen/didChange/
  didClose only splice lines and queue the change (cheap), under a short `edit_lock`.
- Analyses run in worker threads, one at a time per document under `analysis_lock`: they drain
  the queue into the incremental engine document, parse, run the rules and store an `Analysis`
  stamped with the version it was computed for. The debounced diagnostics analyse a frozen
  `AnalysisRequest` taken on the loop (`ServerState.analysis_request`: the `DocumentSnapshot`,
  how many queued edits it includes, the settings generation; `ServerState.analysis_of`): the
  worker reads the snapshot's text and settings and drains the queue only up to that edit, so the
  engine still gets every edit (tree-sitter's incremental parse needs them, not only the text)
  and a later edit waits for the next analysis.
- Requests (hover, lenses, ...) call `ensure_analysis` from a worker thread too, so they never
  answer from a stale parse and never block the loop.

Settings: `settings` is the window's; `folder_settings` holds the workspace folders and the
settings pulled for each (lsp/folders.py), and `settings_for(uri)` is what decides one document
(its folder's project keys over the window's). Snapshots and analyses take `settings_for`.

Extension points for other features (validation, optimize, timing):
- `kernel_facts[(uri, kernel)]`: a `cards.KernelFacts` record rendered into the kernel card
  (hover and `regrapht.showKernelReport`). Update with `update_kernel_facts` (thread-safe);
  dropped when the document closes.
- `set_external_findings(uri, source, findings)`: findings from another source (e.g. measured
  slow kernels) published alongside the rules' diagnostics; then call
  `state.publisher.refresh(uri)` to republish.
- `set_confirmation(uri, lines, facts)`: what nvcc generated per line for the text `lines`
  (features/confirmation.py, in the background); `all_findings` applies it (rules/confirm.py)
  to analyses of that same text, for the rules the user did not override.
- `publish_listeners`: functions `(uri, analysis)` called on the loop after diagnostics of an
  analysis were published (the compiler confirmation schedules itself from there).
- `code_action_providers`: functions `(document, analysis, span, document_changes) -> [CodeAction]`
  called (in a worker thread) by the codeAction handler after the quick fixes; the handler
  filters their actions by the request's `only` kinds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import threading
import time
from collections.abc import Callable, Coroutine, Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from regrapht.cards import KernelFacts
from regrapht.lsp.folders import FolderSettings
from regrapht.rules.confirm import verdicts
from regrapht.rules.suppress import without_suppressed
from regrapht.rules.types import Finding
from regrapht.settings import ProblemMemory, Settings, rule_settings
from regrapht.snapshot import DocumentSnapshot
from regrapht.text import Span, SpanIndex
from regrapht.validate.compile_db import NoticeMemory

if TYPE_CHECKING:
    from regrapht.cuda.model import SourceModel
    from regrapht.validate.ptx import PtxFacts

log = logging.getLogger(__name__)

# Beyond this many characters a document is not parsed (the server logs that it skipped it).
MAX_ANALYZED_CHARS = 2_000_000
_SURROGATE = re.compile("[\ud800-\udfff]")


def sanitize(text: str) -> str:
    """Lone surrogates (from `\\ud800` escapes in JSON) become U+FFFD: same length, encodable."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


# ---------------------------------------------------------------------------------------------
# The engines, behind a small protocol so that unit tests can pass a double.


class Engine(Protocol):
    def open(self, text: str) -> Any:
        """A fresh incremental document for `text`."""

    def change(self, document: Any, span: Span | None, new_text: str) -> Any:
        """Apply one edit (span None: replace everything); returns the (same or new) document."""

    def analyze(self, document: Any, settings: Settings) -> tuple[SourceModel, tuple[Finding, ...]]:
        """Parse (incrementally) and run the rules."""


class TreeSitterEngine:
    """`regrapht.cuda` + `regrapht.rules`, imported on first use (keeps server start fast)."""

    def open(self, text: str) -> Any:
        from regrapht.cuda.document import SourceDocument

        return SourceDocument(text)

    def change(self, document: Any, span: Span | None, new_text: str) -> Any:
        document.apply_change(span, new_text)
        return document

    def analyze(self, document: Any, settings: Settings) -> tuple[SourceModel, tuple[Finding, ...]]:
        from regrapht.rules.engine import analyze
        from regrapht.rules.registry import RuleConfig

        model = document.model
        config = RuleConfig(
            enabled=frozenset(settings.enabled_rules) or None,
            severity_overrides=dict(settings.severity_overrides),
        )
        return model, tuple(analyze(model, config))


# ---------------------------------------------------------------------------------------------
# Documents


@dataclass(frozen=True)
class Analysis:
    """The result for one version of a document, with the lines it was computed on."""

    version: int
    settings_generation: int
    lines: tuple[str, ...]
    model: SourceModel | None
    findings: tuple[Finding, ...]
    skipped: str | None = None  # why it was not analysed (too large, engine failure)
    duration_ms: float = 0.0

    def kernel(self, name: str) -> Any:
        return self.model.kernel(name) if self.model is not None else None

    @cached_property
    def finding_set(self) -> FindingSet:
        """The rules' findings with their look-up indexes."""
        return FindingSet(self.findings)

    def build_indexes(self) -> None:
        """Build what hover and code actions look things up in (worker thread, right after the
        analysis), so that the first request after an edit does not pay for it."""
        self.finding_set.build_indexes()
        if self.model is not None:
            self.model.build_indexes()


class FindingSet:
    """Findings (sorted by position) with indexes built once, so that a hover or a code action
    costs the same in a file of 5,000 kernels as in a file of one."""

    def __init__(self, findings: tuple[Finding, ...]) -> None:
        self.findings = findings

    @cached_property
    def by_kernel(self) -> dict[str | None, tuple[Finding, ...]]:
        grouped: dict[str | None, list[Finding]] = {}
        for finding in self.findings:
            grouped.setdefault(finding.kernel, []).append(finding)
        return {kernel: tuple(found) for kernel, found in grouped.items()}

    @cached_property
    def index(self) -> SpanIndex[Finding]:
        return SpanIndex(self.findings, lambda finding: finding.span)

    def build_indexes(self) -> None:
        _ = self.by_kernel, self.index


class DocumentState:
    """One open document. `lines` is `text.split("\\n")` (a trailing `\\r` stays in its line)."""

    def __init__(self, uri: str, text: str, version: int, language_id: str, open_id: int) -> None:
        self.uri = uri
        self.language_id = language_id
        self.open_id = open_id  # distinguishes a reopened document from the closed one
        self.version = version
        self.lines: list[str] = text.split("\n")
        self.length = len(text)
        self.closed = False
        self.edit_lock = threading.Lock()
        self.analysis_lock = threading.Lock()
        # queued edits, each numbered (`edits` counts them since the opening): an analysis may
        # drain them up to the one a snapshot was taken after (`take_pending_through`)
        self.edits = 1
        self._pending: list[tuple[int, Span | None, str]] = [(1, None, text)]
        self._engine_document: Any = None
        self.applied_edits = 0  # the edits the engine document holds (under `analysis_lock`)
        self.analysis: Analysis | None = None
        self.skip_logged = False
        self.changed_at = time.perf_counter()  # of the latest edit, for latency logs

    @property
    def text(self) -> str:
        with self.edit_lock:
            return "\n".join(self.lines)

    def replace_all(self, text: str, version: int) -> None:
        with self.edit_lock:
            self.lines = text.split("\n")
            self.length = len(text)
            self.version = version
            self.edits += 1
            self._pending = [(self.edits, None, text)]
            self.changed_at = time.perf_counter()

    def apply(self, span: Span, new_text: str, version: int) -> None:
        """Splice one edit (code-point span, already clamped to the document) into `lines`."""
        with self.edit_lock:
            start, end = span.start, span.end
            if (end.line, end.character) < (start.line, start.character):
                start, end = end, start
            last = len(self.lines) - 1
            start_line, end_line = min(start.line, last), min(end.line, last)
            prefix = self.lines[start_line][: start.character]
            suffix = self.lines[end_line][end.character :]
            removed = sum(len(x) + 1 for x in self.lines[start_line : end_line + 1]) - 1
            replacement = (prefix + new_text + suffix).split("\n")
            self.lines[start_line : end_line + 1] = replacement
            self.length += sum(len(x) + 1 for x in replacement) - 1 - removed
            self.version = version
            self.changed_at = time.perf_counter()
            self.edits += 1
            self._pending.append((self.edits, Span.of(start_line, start.character, end_line, end.character), new_text))

    def has_pending(self) -> bool:
        with self.edit_lock:
            return bool(self._pending)

    def take_pending(self) -> tuple[int, list[tuple[Span | None, str]], tuple[str, ...], int, int]:
        """Every queued edit, with the document as it is after them: (version, edits, lines,
        length, the number of the last edit)."""
        with self.edit_lock:
            pending, self._pending = self._pending, []
            return self.version, [(span, text) for _, span, text in pending], tuple(self.lines), self.length, self.edits

    def take_pending_through(self, edit: int) -> list[tuple[Span | None, str]]:
        """The queued edits up to edit number `edit` (those a snapshot taken after it includes);
        later ones stay queued."""
        with self.edit_lock:
            taken = [(span, text) for number, span, text in self._pending if number <= edit]
            self._pending = [entry for entry in self._pending if entry[0] > edit]
            return taken


@dataclass(frozen=True)
class AnalysisRequest:
    """What a background analysis of one document state is given (taken on the loop, where
    edits are applied, so the three agree): the document as it was, the number of the last edit
    it includes, and the settings generation its settings belong to."""

    snapshot: DocumentSnapshot
    edits: int
    settings_generation: int


class Republisher(Protocol):
    def refresh(self, uri: str) -> None:
        """Recompute (debounced) and republish diagnostics for `uri`; callable from any thread."""

    def clear(self, uri: str) -> None:
        """Publish an empty diagnostic list for `uri`; callable from any thread."""


class Debouncer:
    """Per-key debounce on an asyncio loop: a new `schedule` for a key cancels the waiting one."""

    def __init__(self, on_error: Callable[[Hashable, BaseException], None] | None = None) -> None:
        self._tasks: dict[Hashable, asyncio.Task[Any]] = {}
        self.on_error = on_error

    def schedule(
        self, key: Hashable, delay_s: float, work: Callable[[], Coroutine[Any, Any, Any]]
    ) -> asyncio.Task[Any]:
        self.cancel(key)

        async def run() -> Any:
            if delay_s > 0:
                await asyncio.sleep(delay_s)
            return await work()

        task = asyncio.get_running_loop().create_task(run())
        self._tasks[key] = task
        task.add_done_callback(lambda t: self._forget(key, t))
        return task

    def cancel(self, key: Hashable) -> None:
        task = self._tasks.pop(key, None)
        if task is not None and not task.done():
            task.cancel()

    def pending(self, key: Hashable) -> bool:
        task = self._tasks.get(key)
        return task is not None and not task.done()

    def _forget(self, key: Hashable, task: asyncio.Task[Any]) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log.error("work for %s failed", key, exc_info=error)
            if self.on_error is not None:
                self.on_error(key, error)


class ServerState:
    """Documents, analyses, settings and the extension records of the server."""

    def __init__(self, engine: Engine | None = None, docs_root: Path | None = None) -> None:
        self.engine: Engine = engine or TreeSitterEngine()
        self.settings = Settings()  # the window's: documents outside every workspace folder
        self.folder_settings = FolderSettings()  # the workspace folders and their own settings
        self.settings_generation = 0
        self.configuration_pulls = 0  # workspace/configuration pulls started (the latest one applies)
        self.problem_memory = ProblemMemory()
        self.flag_notices = NoticeMemory()  # compile-database notices and problems, each given once
        self.encoding = "utf-16"
        self.supports_configuration = False
        self.supports_related_information = False  # publishDiagnostics.relatedInformation (initialize)
        self.supports_code_lens_refresh = False  # workspace.codeLens.refreshSupport (initialize)
        # initializationOptions `commandLinks`: the client runs `command:` links in hovers (VS Code)
        self.command_links = False
        # the client shows Optimize's outcomes itself (`regrapht/optimizeOutcome`, with actions):
        # initializationOptions.outcomeNotifications
        self.outcome_notifications = False
        self.docs_root = docs_root
        self.documents: dict[str, DocumentState] = {}
        self.debouncer = Debouncer()
        self.publisher: Republisher | None = None
        self.kernel_facts: dict[tuple[str, str], KernelFacts] = {}
        self.external_findings: dict[str, dict[str, tuple[Finding, ...]]] = {}
        self.confirmations: dict[str, tuple[tuple[str, ...], PtxFacts]] = {}  # uri -> (compiled lines, facts)
        # uri -> (analysis, confirmation, severity overrides, its confirmed findings)
        self._confirmed_sets: dict[str, tuple[Analysis, Any, dict[str, Any], FindingSet]] = {}
        self.publish_listeners: list[Callable[[str, Analysis], None]] = []
        self._lock = threading.Lock()
        self._next_open_id = 0
        self.on_skip: Callable[[str, str], None] | None = None  # (uri, reason): tell the user
        self.loop: asyncio.AbstractEventLoop | None = None  # set at initialize
        self._doc_links: dict[str, str] = {}
        self.code_action_providers: list[Callable[[DocumentState, Analysis, Span, bool], list[Any]]] = []

    def doc_link(self, doc: str) -> str:
        """file:// URI of a docs page ("rules/R001.md"): local, since the product never goes online."""
        link = self._doc_links.get(doc)
        if link is None:
            root = self.docs_root if self.docs_root is not None else PACKAGED_DOCS
            link = (root / doc).as_uri()
            self._doc_links[doc] = link
        return link

    # -- documents (event loop) ----------------------------------------------------------------

    def open(self, uri: str, text: str, version: int, language_id: str = "cuda") -> DocumentState:
        self._next_open_id += 1
        previous = self.documents.get(uri)
        if previous is not None:
            previous.closed = True
        document = DocumentState(uri, text, version, language_id, self._next_open_id)
        self.documents[uri] = document
        return document

    def close(self, uri: str) -> DocumentState | None:
        document = self.documents.pop(uri, None)
        if document is not None:
            document.closed = True
        self.debouncer.cancel(uri)
        with self._lock:
            self.external_findings.pop(uri, None)
            self.confirmations.pop(uri, None)
            self._confirmed_sets.pop(uri, None)
            # measurements describe the text that was open; the file may change before it is
            # reopened, and facts of closed files would otherwise accumulate for the session
            for key in [k for k in self.kernel_facts if k[0] == uri]:
                del self.kernel_facts[key]
        return document

    def get(self, uri: str) -> DocumentState | None:
        return self.documents.get(uri)

    def snapshot_now(self, document: DocumentState, path: Path | None) -> DocumentSnapshot:
        """On the loop (where edits are applied, so text and version agree): the document as it
        is now, under the settings in force, for background work."""
        return DocumentSnapshot(document.uri, document.version, document.open_id, document.text, path,
                                self.settings_for(document.uri))

    def snapshot(self, document: DocumentState, analysis: Analysis, path: Path | None) -> DocumentSnapshot:
        """The document as `analysis` saw it, under the settings in force, for background work
        (`path`: the file on disk, None for an untitled document)."""
        return DocumentSnapshot(document.uri, analysis.version, document.open_id, "\n".join(analysis.lines), path,
                                self.settings_for(document.uri))

    def analysis_request(self, document: DocumentState, path: Path | None) -> AnalysisRequest:
        """On the loop: the frozen request for analysing the document as it is now."""
        with document.edit_lock:
            snapshot = DocumentSnapshot(document.uri, document.version, document.open_id, "\n".join(document.lines),
                                        path, self.settings_for(document.uri))
            return AnalysisRequest(snapshot, document.edits, self.settings_generation)

    def is_current(self, uri: str, open_id: int, version: int) -> bool:
        """Should a result computed for (open_id, version) still be published?"""
        document = self.documents.get(uri)
        return (
            document is not None
            and not document.closed
            and document.open_id == open_id
            and document.version == version
        )

    def settings_for(self, uri: str) -> Settings:
        """The settings of the document `uri` (any thread): its workspace folder's (`FOLDER_SCOPED`
        keys; the window's for the rest), the window's outside every folder."""
        return self.folder_settings.for_uri(uri, self.settings)

    def apply_folder_settings(self, folders: FolderSettings) -> bool:
        """Install new workspace folders or folder settings (on the loop); True if the rule
        settings of an open document changed, so analyses must be redone."""
        before, self.folder_settings = self.folder_settings, folders
        window = self.settings
        changed = any(rule_settings(before.for_uri(uri, window)) != rule_settings(folders.for_uri(uri, window))
                      for uri in list(self.documents))
        if changed:
            self.settings_generation += 1
        return changed

    def apply_settings(self, settings: Settings) -> bool:
        """Install new window settings; True if analyses must be redone."""
        changed = settings != self.settings
        if changed:
            rules_changed = rule_settings(settings) != rule_settings(self.settings)
            self.settings = settings
            if rules_changed:
                self.settings_generation += 1
            return rules_changed
        return False

    # -- analysis (worker threads) ---------------------------------------------------------------

    def ensure_analysis(self, document: DocumentState) -> Analysis:
        """The analysis of the document's current version, computing it if needed (blocking)."""
        with document.analysis_lock:
            current = document.analysis
            if (
                current is not None
                and current.version == document.version
                and current.settings_generation == self.settings_generation
                and not document.has_pending()
            ):
                return current
            generation = self.settings_generation
            settings = self.settings_for(document.uri)
            version, pending, lines, length, edits = document.take_pending()
            return self._store(document, edits, lambda: self._analyze(document, version, pending, lines, length,
                                                                      settings, generation))

    def analysis_of(self, document: DocumentState, request: AnalysisRequest) -> Analysis:
        """The analysis of the document as `request` froze it (blocking; worker thread): its
        snapshot's text and settings, the queued edits drained only up to the snapshot's. When
        an analysis of a later state was made meanwhile (a hover asked first), that one: the
        engine document cannot go back, and the caller publishes only a current version."""
        snapshot = request.snapshot
        with document.analysis_lock:
            current = document.analysis
            if current is not None and (document.applied_edits > request.edits or (
                    document.applied_edits == request.edits
                    and current.settings_generation == request.settings_generation)):
                return current
            pending = document.take_pending_through(request.edits)
            lines = tuple(snapshot.text.split("\n"))
            return self._store(document, request.edits, lambda: self._analyze(
                document, snapshot.version, pending, lines, len(snapshot.text), snapshot.settings,
                request.settings_generation))

    def _store(self, document: DocumentState, edits: int, analyze: Callable[[], Analysis]) -> Analysis:
        """Run `analyze` (under the document's analysis lock), timed; keep its result as the
        document's analysis, of the engine document holding `edits` edits."""
        started = time.perf_counter()
        try:
            analysis = analyze()
        except BaseException:
            document._engine_document = None  # its text is unknown now: reparse in full next time
            raise
        analysis = dataclasses.replace(analysis, duration_ms=(time.perf_counter() - started) * 1000)
        document.applied_edits = edits
        document.analysis = analysis
        return analysis

    def _analyze(
        self,
        document: DocumentState,
        version: int,
        pending: Sequence[tuple[Span | None, str]],
        lines: tuple[str, ...],
        length: int,
        settings: Settings,
        generation: int,
    ) -> Analysis:
        if length > MAX_ANALYZED_CHARS:
            document._engine_document = None
            reason = (
                f"not analysed: {length / 1e6:.1f} M characters "
                f"(the limit is {MAX_ANALYZED_CHARS / 1e6:.0f} M)"
            )
            self._skipped(document, reason)
            return Analysis(version, generation, lines, None, (), skipped=reason)
        if document._engine_document is None:
            # Start from the full text: at open, or after a skipped size or a failure.
            document._engine_document = self.engine.open(sanitize("\n".join(lines)))
        else:
            for span, new_text in pending:
                document._engine_document = self.engine.change(
                    document._engine_document, span, sanitize(new_text)
                )
        try:
            model, findings = self.engine.analyze(document._engine_document, settings)
        except (RecursionError, ValueError, UnicodeError, MemoryError) as error:
            document._engine_document = None
            reason = f"not analysed: the parser failed ({type(error).__name__}: {error})"
            log.warning("%s: %s", document.uri, reason, exc_info=True)
            self._skipped(document, reason)
            return Analysis(version, generation, lines, None, (), skipped=reason)
        document.skip_logged = False
        for warning in getattr(model, "warnings", ()):
            log.info("%s: %s", document.uri, warning)
        return Analysis(version, generation, lines, model, without_suppressed(lines, findings))

    def _skipped(self, document: DocumentState, reason: str) -> None:
        if not document.skip_logged:
            document.skip_logged = True
            log.warning("%s: %s", document.uri, reason)
            if self.on_skip is not None:
                self.on_skip(document.uri, reason)

    # -- extension records (any thread) --------------------------------------------------------

    def update_kernel_facts(self, uri: str, kernel: str, **changes: Any) -> KernelFacts:
        """Merge `changes` (KernelFacts fields) into the facts of (uri, kernel); returns them."""
        with self._lock:
            facts = self.kernel_facts.get((uri, kernel), KernelFacts())
            facts = dataclasses.replace(facts, **changes)
            self.kernel_facts[(uri, kernel)] = facts
            return facts

    def facts_for(self, uri: str, kernel: str) -> KernelFacts | None:
        with self._lock:
            return self.kernel_facts.get((uri, kernel))

    def set_external_findings(self, uri: str, source: str, findings: Sequence[Finding]) -> None:
        """Findings from `source` (e.g. "timing") shown with the rules' diagnostics of `uri`."""
        with self._lock:
            self.external_findings.setdefault(uri, {})[source] = tuple(findings)

    def set_confirmation(self, uri: str, lines: tuple[str, ...], facts: PtxFacts) -> None:
        with self._lock:
            if uri in self.documents:
                self.confirmations[uri] = (lines, facts)

    def confirmed_lines(self, uri: str) -> tuple[str, ...] | None:
        """The text (as lines) the current compiler confirmation of `uri` was made for."""
        with self._lock:
            confirmation = self.confirmations.get(uri)
        return confirmation[0] if confirmation is not None else None

    def all_findings(self, uri: str, analysis: Analysis) -> tuple[Finding, ...]:
        return self.finding_set(uri, analysis).findings + self._external(uri)

    def finding_set(self, uri: str, analysis: Analysis) -> FindingSet:
        """The rules' findings of `analysis`, confirmed by the compiler when a confirmation of
        the same text exists; the confirmed set is made once per (analysis, confirmation)."""
        with self._lock:
            confirmation = self.confirmations.get(uri)
            cached = self._confirmed_sets.get(uri)
        if confirmation is None or confirmation[0] != analysis.lines:
            return analysis.finding_set
        overridden = self.settings_for(uri).severity_overrides
        if cached is not None and cached[0] is analysis and cached[1] is confirmation and cached[2] == overridden:
            return cached[3]
        findings = analysis.findings
        # A rule whose severity the user overrides keeps its finding as the source analysis made it;
        # the others take the compiler's verdict, which may drop one (a loop nvcc unrolled).
        judged = {id(before): after for before, after in
                  verdicts((f for f in findings if f.rule not in overridden), confirmation[1])}
        kept = (f if f.rule in overridden else judged[id(f)] for f in findings)
        found = FindingSet(tuple(f for f in kept if f is not None))
        with self._lock:
            if uri in self.documents:
                self._confirmed_sets[uri] = (analysis, confirmation, dict(overridden), found)
        return found

    def kernel_findings(self, uri: str, analysis: Analysis, kernel: str) -> tuple[Finding, ...]:
        return self.finding_set(uri, analysis).by_kernel.get(kernel, ()) + tuple(
            f for f in self._external(uri) if f.kernel == kernel)

    def findings_overlapping(self, uri: str, analysis: Analysis, span: Span) -> tuple[Finding, ...]:
        """The findings (the rules' and external ones) whose span overlaps `span`."""
        return tuple(self.finding_set(uri, analysis).index.overlapping(span)) + tuple(
            f for f in self._external(uri) if f.span.start <= span.end and span.start <= f.span.end)

    def _external(self, uri: str) -> tuple[Finding, ...]:
        with self._lock:
            return tuple(f for group in self.external_findings.get(uri, {}).values() for f in group)


# The rule pages ship inside the package (regrapht/data/rules links to docs/rules in the repo).
PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # server/regrapht (this module is in lsp/)
PACKAGED_DOCS = PACKAGE_ROOT / "data"


def find_docs_root() -> Path | None:
    """The repository's docs/ folder when running from a checkout, else the packaged copy."""
    candidate = PACKAGE_ROOT.parents[1] / "docs"
    if (candidate / "architecture.md").is_file():
        return candidate
    return PACKAGED_DOCS if (PACKAGED_DOCS / "rules").is_dir() else None
