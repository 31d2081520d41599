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
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from regrapht.app.messages import with_section
from regrapht.app.resources import GpuResources
from regrapht.app.validation import ValidationService
from regrapht.cards import CardSection, Resources, Traffic
from regrapht.errors import InputError
from regrapht.lsp.features.common import file_path, in_worker, kernel_argument, require_document, send_status
from regrapht.lsp.features.compile_flags import project_flags, record_flags
from regrapht.lsp.features.progress import CancellableProgress
from regrapht.lsp.state import Analysis, DocumentState, ServerState
from regrapht.rules.types import Finding
from regrapht.snapshot import DocumentSnapshot
from regrapht.text import Span
from regrapht.validate.profile_report import ProfiledSource, ProfileRule, source_digest, strongest_first
from regrapht.validate.types import Timing

if TYPE_CHECKING:
    from regrapht.validate.background import FileValidation
    from regrapht.validate.profiler import Profile, ProfileFailure
    from regrapht.validate.timing_history import Measured, Regression

VALIDATE_COMMAND = "regrapht.validateKernel"
SHOW_FASTER_COMMAND = "regrapht.showFasterVersion"
REGRESSION_RULE = "V003"
PROFILE_RULE = "P001"
PROFILE_SECTION = "Profile (Nsight Compute)"
PROFILE_RULES_SHOWN = 4


def findings_of(path: Path, analysis_kernels: dict[str, Span], result: FileValidation,
                regressions: tuple[Regression, ...] = ()) -> list[Finding]:
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
    for regression in regressions:
        span = analysis_kernels.get(regression.kernel.split("<", 1)[0])
        if span is not None:
            findings.append(Finding(rule=REGRESSION_RULE, severity="warning", span=span, kernel=regression.kernel,
                                    message=regression.message(), technique="", doc=""))
    return findings


def profile_section(profile: Profile | ProfileFailure) -> CardSection:
    """The card's Nsight Compute section: throughputs, occupancy, top stalls, and the tool's rules
    about the kernel, ncu's largest estimate first (`profile_report.strongest_first`: its notes
    about itself left out), each with its estimate once and the technique that answers it."""
    if profile.outcome == "failed":
        return CardSection(PROFILE_SECTION, f"Not profiled: {profile.reason}")

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.0f}%"

    body = [f"DRAM {pct(profile.dram_pct)} of peak, SM {pct(profile.sm_pct)}, achieved occupancy "
            f"{pct(profile.occupancy_pct)} (one launch)"]
    if profile.stalls:
        body.append("Top warp stalls: " + ", ".join(f"{r.replace('_', ' ')} {v:g}" for r, v in profile.stalls)
                    + " cycles per issued instruction")
    rules = strongest_first(profile.rules)
    body += [f"- {r.kind}: {r.shown(f'`{r.technique}`' if r.technique else '')}" for r in rules[:PROFILE_RULES_SHOWN]]
    if len(rules) > PROFILE_RULES_SHOWN:
        hidden = len(rules) - PROFILE_RULES_SHOWN
        body.append(f"and {hidden} more of ncu's rules")
    return CardSection(PROFILE_SECTION, "\n\n".join(body))


def profile_findings(span: Span, kernel: str, profile: Profile) -> list[Finding]:
    """One finding per technique on the kernel's name: the strongest of Nsight Compute's
    optimization and warning rules about the kernel that name it (the other rules are in the
    card's section only)."""
    strongest: dict[str, ProfileRule] = {}
    for rule in strongest_first(profile.rules):
        if rule.kind in ("OPT", "WRN") and rule.technique:
            strongest.setdefault(rule.technique, rule)
    return [Finding(rule=PROFILE_RULE, severity="information", span=span, kernel=kernel,
                    message="Nsight Compute: " + r.shown(f"technique: {r.technique}", "Optimize can apply it"),
                    technique=r.technique, doc="")
            for r in strongest.values()]


def publish(state: ServerState, uri: str, path: Path, result: FileValidation,
            regressions: tuple[Regression, ...] = (),
            profiles: dict[str, Profile | ProfileFailure] | None = None, profiled_digest: str = "") -> dict[str, Any]:
    """Worker thread (it may analyse the document): records facts and findings, republishes.
    Each kernel's profile is kept in its facts with `profiled_digest` (the digest of the text
    measured: `profile_report.source_digest`), for Optimize to pass on for that text only."""
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
            if report["time_ms"] is not None else None,
            traffic=Traffic(report["bytes_moved"], report.get("flops"), report["peak_gbps"], report["peak_gflops"]))
    findings = findings_of(path, spans, result, regressions)
    for kernel, profile in (profiles or {}).items():
        base = kernel.split("<", 1)[0]
        facts = state.facts_for(uri, base)
        kept = ProfiledSource(profiled_digest, profile) if profile.outcome == "profiled" and profiled_digest else None
        state.update_kernel_facts(uri, base, sections=with_section(facts.sections if facts else (),
                                                                   profile_section(profile)), profile=kept)
        if base in spans and profile.outcome == "profiled":
            findings += profile_findings(spans[base], kernel, profile)
    state.set_external_findings(uri, "validation", findings)
    if state.publisher is not None:
        state.publisher.refresh(uri)
    return {"diagnostics": [str(d) for d in result.diagnostics], "kernels": [k.report for k in result.kernels],
            "messages": [k.slow_message or k.error for k in result.kernels if k.slow_message or k.error],
            "regressions": [r.message() for r in regressions],
            "profiles": {k: p.to_json() for k, p in (profiles or {}).items()}}


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


def write_fastest(service: ValidationService, path: Path, kernel: str) -> dict[str, Any] | None:
    """Worker thread: the fastest kept version of `kernel` (on any GPU measured), as a file in
    the cache dir named after the file, kernel and time: {uri, path, time_ms, at, gpu}."""
    best: tuple[Measured, str] | None = None
    for gpu in service.measured_gpus(path, kernel):
        found = service.fastest_version(path, kernel, gpu)
        if found is not None and (best is None or found.median_ms < best[0].median_ms):
            best = (found, gpu)
    if best is None:
        return None
    measured, gpu = best
    folder = service.resources.ensure_cache_dir() / "faster"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{path.stem}.{kernel}.{measured.clock.replace(':', '')}{path.suffix}"
    target.write_text(measured.text, encoding="utf-8")
    return {"uri": target.as_uri(), "path": str(target), "time_ms": measured.median_ms, "at": measured.clock,
            "gpu": gpu}


def show_document_supported(server: LanguageServer) -> bool:
    window = server.client_capabilities.window
    return bool(window is not None and window.show_document is not None and window.show_document.support)


def register(server: LanguageServer, state: ServerState, resources: GpuResources) -> None:
    service = ValidationService(resources)

    def run(document: DocumentSnapshot, kernels: tuple[str, ...] | None, progress: CancellableProgress) \
            -> tuple[Path, FileValidation, tuple[Regression, ...], dict[str, Profile | ProfileFailure], str] | None:
        """Worker thread: reads the snapshot (text, file, settings), never the live document; the
        project's flags are looked up (and their one-time notices sent) here."""
        flags = project_flags(server, state, document.uri, document.settings)
        done = service.run(document.path, document.text, kernels, arch=document.settings.arch or None,
                           should_stop=lambda: progress.cancelled, on_step=lambda message: progress.report(message),
                           flags=flags)
        if done is None:
            return None
        record_flags(state, document.uri, (k.kernel.split("<", 1)[0] for k in done[1].kernels), flags)
        profiles: dict[str, Profile | ProfileFailure] = {}
        if document.settings.profile_enabled and not progress.cancelled:
            for kernel in done[1].kernels:
                if kernel.report is not None and kernel.report.get("time_ms") is not None:
                    progress.report(f"profiling {kernel.kernel} (Nsight Compute)")
                    profiles[kernel.kernel] = service.profile(done[0], document.text, kernel.kernel,
                                                              arch=document.settings.arch or None, flags=flags)
        digest = source_digest(document.text) if profiles else ""
        return (*done, service.record_timings(done[0], document.text, done[1]), profiles, digest)

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
        published = await in_worker(server, publish, state, uri, *done)
        return {**published, "summary": message, "cancelled": cancelled, "token": progress.token}

    def provider(document: DocumentState, analysis: Analysis, span: Span, document_changes: bool) -> list[Any]:
        """"Show the faster version" on a kernel whose measurement regressed (V003)."""
        return [types.CodeAction(
            title=f"Show the faster version of {finding.kernel}", kind=types.CodeActionKind.QuickFix,
            command=types.Command(title=f"Show the faster version of {finding.kernel}", command=SHOW_FASTER_COMMAND,
                                  arguments=[{"uri": document.uri, "kernel": finding.kernel}]))
            for finding in state.findings_overlapping(document.uri, analysis, span)
            if finding.rule == REGRESSION_RULE and finding.kernel]

    state.code_action_providers.append(provider)

    @server.command(SHOW_FASTER_COMMAND)
    async def show_faster_version(*arguments: Any) -> dict[str, Any]:
        """The fastest measured version of the kernel's file, written to the cache dir and shown
        (window/showDocument where the client has it, unless `show: false`: VS Code's client opens
        a compare view itself): the user compares it with the current text."""
        uri, kernel = kernel_argument(arguments)
        path = file_path(uri)
        if path is None:
            raise JsonRpcInvalidParams(f"not a file URI: {uri}")
        written = await in_worker(server, write_fastest, service, path, kernel)
        if written is None:
            raise JsonRpcInvalidParams(f"no measured version of {kernel} in {path.name} is kept")
        shown = False
        wanted = not (isinstance(arguments[0], dict) and arguments[0].get("show") is False) if arguments else True
        if wanted and show_document_supported(server):
            answer = await server.window_show_document_async(types.ShowDocumentParams(uri=written["uri"]))
            shown = bool(answer is not None and answer.success)
        return {**written, "shown": shown}

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
