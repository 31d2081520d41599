"""Background validation in the editor: on save (setting `backgroundValidation`) and on the
`regrapht.validateKernel {uri, kernel}` command, for files with a spec beside them.

Thin: the work is `regrapht.app.validation.ValidationService` (on the GPU resources the server
shares with Optimize: one cache dir, GPU lock and worker), run in a worker thread; this module
publishes compile diagnostics and slow-kernel findings through `state.set_external_findings`,
fills the kernel cards' `resources`/`timing`, and reports cancellable work-done progress
(begin, one report per step - compile, check, time - and an end message that says what was
measured, or why nothing was timed) besides `regrapht/status`. A cancel stops the work between
steps. The GPU worker process starts on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.app.resources import GpuResources
from regrapht.app.validation import ValidationService
from regrapht.cards import Resources
from regrapht.errors import InputError
from regrapht.lsp.features.common import file_path, in_worker, kernel_argument, require_document, send_status
from regrapht.lsp.features.compile_flags import project_flags, record_flags
from regrapht.lsp.features.progress import CancellableProgress
from regrapht.lsp.state import ServerState
from regrapht.rules.types import Finding
from regrapht.snapshot import DocumentSnapshot
from regrapht.text import Span
from regrapht.validate.types import Timing

if TYPE_CHECKING:
    from regrapht.validate.background import FileValidation

VALIDATE_COMMAND = "regrapht.validateKernel"


def findings_of(path: Path, analysis_kernels: dict[str, Span], result: FileValidation) -> list[Finding]:
    findings = []
    for d in result.diagnostics:
        if d.line is None or Path(d.file).name != path.name:
            continue
        severity = "error" if d.severity == "error" else "warning" if d.severity == "warning" else "information"
        findings.append(Finding(rule=f"nvcc{'-' + d.code if d.code else ''}", severity=severity,  # type: ignore[arg-type]
                                span=Span.of(d.line - 1, 0, d.line - 1, 1000), kernel=None,
                                message=d.message, technique="", doc=""))
    for k in result.kernels:
        span = analysis_kernels.get(k.kernel.split("<", 1)[0])
        if span is None:
            continue
        if k.slow_message:
            findings.append(Finding(rule="V001", severity="information", span=span, kernel=k.kernel,
                                    message=k.slow_message, technique="memory_coalescing", doc=""))
        if k.error:
            findings.append(Finding(rule="V000", severity="warning", span=span, kernel=k.kernel,
                                    message=k.error, technique="", doc=""))
        if k.guessed:
            findings.append(Finding(
                rule="V002", severity="information", span=span, kernel=k.kernel,
                message=f"the spec's {', '.join(k.guessed)} are guesses, not proven from the kernel: check them and "
                        "remove them from `guessed` in the spec; until then the kernel is not timed in the background "
                        "and Optimize asks first", technique="", doc=""))
    return findings


def publish(state: ServerState, uri: str, path: Path, result: FileValidation) -> dict[str, Any]:
    """Worker thread (it may analyse the document): records facts and findings, republishes."""
    document = state.get(uri)
    spans: dict[str, Span] = {}
    if document is not None:
        analysis = state.ensure_analysis(document)
        if analysis.model is not None:
            spans = {k.name: k.name_span for k in analysis.model.kernels}
    for k in result.kernels:
        if k.report is None:
            continue
        report = k.report
        res = report["resources"]
        state.update_kernel_facts(uri, k.kernel.split("<", 1)[0], resources=Resources(
            registers=res["registers"], shared_bytes=res["shared_bytes"], spill_bytes=res["spill_bytes"],
            occupancy=report["occupancy"], arch=report["arch"], limiter=report.get("occupancy_limited_by") or ""),
            timing=Timing(report["time_ms"], report["time_p10_ms"], report["time_p90_ms"], report["runs"])
            if report["time_ms"] is not None else None)
    state.set_external_findings(uri, "validation", findings_of(path, spans, result))
    if state.publisher is not None:
        state.publisher.refresh(uri)
    return {"diagnostics": [str(d) for d in result.diagnostics], "kernels": [k.report for k in result.kernels],
            "messages": [k.slow_message or k.error for k in result.kernels if k.slow_message or k.error]}


def summary(result: FileValidation, cancelled: bool) -> str:
    """The progress end message: what was measured, and why not where nothing was timed."""
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if errors:
        return f"does not compile: {errors[0]}"
    parts = []
    for k in result.kernels:
        report = k.report
        if report is None:
            parts.append(f"{k.kernel}: {k.error}")
        elif report["time_ms"] is not None:
            parts.append(f"{k.kernel}: {report['time_ms']:.4g} ms on {report['gpu']}")
        else:
            parts.append(f"{k.kernel}: compiled, {report['resources']['registers']} registers; "
                         f"not timed: {report['reason']}")
    text = "; ".join(parts) or "no kernel of the spec was validated"
    return f"cancelled ({text})" if cancelled else text


def register(server: LanguageServer, state: ServerState, resources: GpuResources) -> None:
    service = ValidationService(resources)

    def run(document: DocumentSnapshot, kernels: tuple[str, ...] | None, progress: CancellableProgress) \
            -> tuple[Path, FileValidation] | None:
        """Worker thread: reads the snapshot (text, file, settings), never the live document; the
        project's flags are looked up (and their one-time notices sent) here."""
        flags = project_flags(server, state, document.uri)
        done = service.run(document.path, document.text, kernels, arch=document.settings.arch or None,
                           should_stop=lambda: progress.cancelled, on_step=lambda message: progress.report(message),
                           flags=flags)
        if done is not None:
            record_flags(state, document.uri, (k.kernel.split("<", 1)[0] for k in done[1].kernels), flags)
        return done

    async def validate(document: DocumentSnapshot, kernels: tuple[str, ...] | None) -> dict[str, Any]:
        """On the loop: progress and status; the validation and `publish` run in workers."""
        uri = document.uri
        name = Path(uri).name
        progress = CancellableProgress(server, state, f"Validating {name}")
        await progress.begin("starting")
        send_status(server, state, "validating", f"validating {name}")
        try:
            done = await in_worker(server, run, document, kernels, progress)
        except InputError as error:
            progress.end(f"failed: {error}")
            send_status(server, state, "error", str(error))
            return {"error": str(error), "token": progress.token}
        except Exception as error:  # a bug: end the progress and the status, then answer with the error
            progress.end("failed")
            send_status(server, state, "error", f"validating {name} failed: {error}")
            raise
        send_status(server, state, "ready", "")
        if done is None:
            progress.end("no spec beside the file")
            return {"error": "no spec beside the file (run `Create benchmark spec` first)", "token": progress.token}
        cancelled = progress.cancelled
        message = summary(done[1], cancelled)
        progress.end(message)
        published = await in_worker(server, publish, state, uri, done[0], done[1])
        return {**published, "summary": message, "cancelled": cancelled, "token": progress.token}

    @server.command(VALIDATE_COMMAND)
    async def validate_kernel(*arguments: Any) -> dict[str, Any]:
        """Async: compile + measure the kernel now, under cancellable progress (see `validate`)."""
        uri, kernel = kernel_argument(arguments)
        document = require_document(state, uri)
        if file_path(uri) is None:
            return {"error": f"{uri} is not a file: save it, then create its benchmark spec"}
        return await validate(state.snapshot_now(document, file_path(uri)), (kernel,))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(params: types.DidSaveTextDocumentParams) -> None:
        """Async: with `backgroundValidation`, validates every kernel of the spec (see `validate`)."""
        if not state.settings.background_validation:
            return
        document = state.get(params.text_document.uri)
        if document is not None:
            await validate(state.snapshot_now(document, file_path(document.uri)), None)
