"""Kernel cards: the markdown shown on hover and by `regrapht.showKernelReport`. Pure formatting.

A card is built from the source model (signature, launch sites), the rules' findings, and an
optional `KernelFacts` record that other engines fill in later through the server state
(`ServerState.update_kernel_facts(uri, kernel, ...)`):

- `resources`: ptxas resource usage and occupancy (validation engine),
- `timing` / `speedup`: measured on the GPU (validation engine),
- `technique_path`: the techniques an optimize run applied (search),
- `compile_flags`: the project's flags the last compile of the file used (compile database),
- `traffic`: bytes moved, FLOPs and the device's peaks, for the roofline (validation engine),
- `last_run`: the last Optimize run with every judged candidate (the Optimize workflow),
- `profile`: the last Nsight Compute profile background validation measured, with the digest of
  the text it measured (Optimize passes it to the search for that text only),
- `sections`: any further titled markdown sections, in order.

Nothing here imports pygls or does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from regrapht.rules.types import Finding
from regrapht.text import Position, Span
from regrapht.validate.profile_report import ProfiledSource
from regrapht.validate.types import Timing

if TYPE_CHECKING:
    from regrapht.cuda.model import Function, LaunchSite, SourceModel
    from regrapht.search.pipeline import OptimizeResult


@dataclass(frozen=True)
class Resources:
    registers: int | None = None  # per thread
    shared_bytes: int | None = None  # static shared memory per block
    spill_bytes: int | None = None  # local memory spills (stores + loads)
    occupancy: float | None = None  # 0..1, at the launch configuration
    arch: str = ""
    limiter: str = ""  # what limits occupancy: "registers", "shared memory", "block size", ...


@dataclass(frozen=True)
class CardSection:
    title: str
    body: str  # markdown


@dataclass(frozen=True)
class Traffic:
    """What one launch at the spec's size moves and computes, and this GPU's measured peaks
    (the bench report's): the roofline of the kernel."""

    bytes_moved: int
    flops: float | None
    peak_gbps: float | None
    peak_gflops: float | None


@dataclass(frozen=True)
class LastRun:
    """The last Optimize run of a kernel: how it ended ("found", "nothing", "cancelled") with the
    message the user was told, and its result (every judged candidate in `result.history`)."""

    kind: str
    message: str
    result: OptimizeResult
    applied: str = ""  # what became of a found version (the card's word)
    original: str = ""  # the text the run searched (what a candidate's diff is against)


@dataclass(frozen=True)
class KernelFacts:
    """Facts about one kernel beyond the source: keyed by (uri, kernel) in `ServerState`."""

    resources: Resources | None = None
    timing: Timing | None = None
    speedup: float | None = None  # baseline median / best candidate median
    technique_path: tuple[str, ...] = ()
    sections: tuple[CardSection, ...] = ()
    compile_flags: str = ""  # CompileFlags.describe() of the last compile ("" = none known yet)
    traffic: Traffic | None = None  # bytes, FLOPs and the GPU's peaks (validation engine)
    last_run: LastRun | None = None  # the last Optimize run (the editor's Optimize workflow)
    profile: ProfiledSource | None = None  # the last profile measured (background validation)


_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def plain_text(text: str) -> str:
    """Text for places a client shows as plain text (Problems, squiggle hovers, quick-fix and lens
    titles): Markdown code spans become quoted, "Write `1.0f`" -> "Write '1.0f'" (as clangd
    quotes code); everything else is left as written."""
    return _CODE_SPAN.sub(lambda m: f"'{m.group(2).strip()}'", text) if "`" in text else text


def _code(text: str) -> str:
    text = " ".join(text.split())
    return f"`{text}`" if "`" not in text else f"``{text}``"


def _launch_line(site: LaunchSite) -> str:
    where = f"line {site.span.start.line + 1}"
    if site.host_function:
        where += f" in `{site.host_function}`"
    config = f"grid {_code(site.grid.text)}, block {_code(site.block.text)}"
    threads = site.threads_per_block
    if threads is not None:
        config += f" ({threads} threads/block)"
    if site.shared is not None:
        config += f", shared {_code(site.shared.text)} B"
    if site.stream is not None:
        config += f", stream {_code(site.stream.text)}"
    if site.in_loop:
        config += ", in a loop"
    return f"- {where}: {config}"


MARKDOWN_SPECIALS = "\\`*_{}[]<>()#+-.!|~"


def escape_markdown(text: str) -> str:
    """Plain text (a fix title such as "Add __restrict__") as Markdown that shows it verbatim."""
    return "".join(f"\\{c}" if c in MARKDOWN_SPECIALS else c for c in text)


def _finding_line(finding: Finding, long: bool, doc_link: Callable[[str], str] | None) -> str:
    code = f"**{finding.rule}**"
    if doc_link is not None and finding.doc:
        # the link around the bold text, not inside it; a renderer that refuses file: links
        # (markdown-it, VS Code's Markdown preview) then still shows the rule name bold
        code = f"[{code}]({doc_link(finding.doc)})"
    line = f"- {code} ({finding.severity}, line {finding.span.start.line + 1}): {finding.message}"
    if long:
        line += f" Technique: `{finding.technique}`."
        if finding.fixes:
            line += " Quick fix: " + "; ".join(escape_markdown(f.title) for f in finding.fixes) + "."
    return line


def techniques_of(findings: Sequence[Finding]) -> list[str]:
    """Distinct techniques in order of first appearance."""
    return list(dict.fromkeys(f.technique for f in findings if f.technique))


def _resources_section(resources: Resources) -> str:
    parts = []
    if resources.registers is not None:
        parts.append(f"{resources.registers} registers/thread")
    if resources.shared_bytes is not None:
        parts.append(f"{resources.shared_bytes} B shared/block")
    if resources.spill_bytes is not None:
        parts.append(f"{resources.spill_bytes} B spilled" if resources.spill_bytes else "no spills")
    if resources.occupancy is not None:
        occupancy = f"occupancy {resources.occupancy:.0%}"
        if resources.limiter:
            occupancy += f" (limited by {resources.limiter})"
        parts.append(occupancy)
    arch = f" on {resources.arch}" if resources.arch else ""
    return f"**Resources**{arch}: " + (", ".join(parts) if parts else "unknown")


def _timing_section(timing: Timing, speedup: float | None) -> str:
    text = (
        f"**Measured**: median {timing.median_ms:.3f} ms "
        f"(p10 {timing.p10_ms:.3f}, p90 {timing.p90_ms:.3f}; {timing.runs} runs)"
    )
    if speedup is not None:
        text += f", {speedup:.2f}x the original"
    return text


def signature_text(kernel: Function) -> str:
    """The kernel's signature with each parameter spaced as the source spaces it: `float *x`
    stays `float *x` and `float* x` stays `float* x` (the type text keeps its own spacing)."""
    template = f"template <{', '.join(kernel.template_parameters)}> " if kernel.template_parameters else ""
    params = ", ".join(
        (f"{p.type_text}{p.name}" if p.type_text.endswith((" *", " &")) else f"{p.type_text} {p.name}").strip()
        for p in kernel.parameters
    )
    return f"{template}__global__ {kernel.return_type} {kernel.name}({params})"


HOVER_FINDINGS = 3  # findings listed on the hover card; the rest are counted with a link to the report
SEVERITY_RANK = {"error": 0, "warning": 1, "information": 2, "hint": 3}


def kernel_card(
    kernel: Function,
    launches: Sequence[LaunchSite],
    findings: Sequence[Finding],
    facts: KernelFacts | None = None,
    *,
    long: bool = False,
    doc_link: Callable[[str], str] | None = None,
    captures: Sequence[tuple[str, int, str]] = (),
    report_link: str = "",
) -> str:
    """Markdown for one kernel. `long` adds parameters, techniques per finding and fixes.
    `captures`: (program, recorded launches, spec file) of each capture of the kernel.
    The short card (hover) lists the `HOVER_FINDINGS` most severe findings and then, with
    `report_link` (a command URI), "Show the kernel report" for the rest."""
    blocks = [f"```cuda-cpp\n{signature_text(kernel)}\n```"]
    if kernel.launch_bounds:
        blocks.append(f"`__launch_bounds__({', '.join(kernel.launch_bounds)})`")
    if long and kernel.parameters:
        rows = ["| parameter | type | restrict | const |", "|---|---|---|---|"]
        for p in kernel.parameters:
            rows.append(
                f"| `{p.name}` | {_code(p.type_text)} | {'yes' if p.is_restrict else 'no'} "
                f"| {'yes' if p.is_const else 'no'} |"
            )
        blocks.append("\n".join(rows))

    if launches:
        blocks.append(
            f"**Launch sites** ({len(launches)})\n" + "\n".join(_launch_line(s) for s in launches)
        )
    else:
        blocks.append("**Launch sites**: none in this file")

    if findings:
        ordered = sorted(findings, key=lambda f: (f.span.start, f.rule))
        # the hover's few lines go to the most severe first (in the text's order within a severity):
        # the warning at a launch, not three of the profile's infos on the kernel's name
        shown = ordered if long else sorted(ordered, key=lambda f: SEVERITY_RANK.get(f.severity, 4))[:HOVER_FINDINGS]
        lines = [_finding_line(f, long, doc_link) for f in shown]
        if len(shown) < len(ordered):
            lines.append(f"- and {len(ordered) - len(shown)} more in the kernel report")
        blocks.append(f"**Findings** ({severity_counts(findings)})\n" + "\n".join(lines))
        techniques = techniques_of(ordered)
        blocks.append("**Suggested techniques**: " + ", ".join(technique_label(t) for t in techniques))
    else:
        blocks.append("**Findings**: none")

    if facts is not None:
        if facts.resources is not None:
            blocks.append(_resources_section(facts.resources))
        if facts.timing is not None:
            blocks.append(_timing_section(facts.timing, facts.speedup))
        if facts.compile_flags:
            blocks.append(f"**Compiled with**: {_code(facts.compile_flags)}")
        if facts.technique_path:
            blocks.append("**Optimization path**: " + " → ".join(f"`{t}`" for t in facts.technique_path))
        for section in facts.sections:
            blocks.append(f"**{section.title}**\n{section.body}")
    if captures:
        blocks.append("**Captured launches**\n" + "\n".join(
            f"- {capture_summary(program, launches)}: {_code(spec)}" for program, launches, spec in captures))
    if report_link and not long:
        blocks.append(f"[Show the kernel report]({report_link})")
    return "\n\n".join(blocks) + "\n"


def capture_summary(program: str, launches: int) -> str:
    """"captured from `./app` (3 launches)": a capture of the kernel, on its card and CodeLens."""
    return f"captured from {_code(program)} ({launches} launch{'es' if launches != 1 else ''})"


_SEVERITY_NOUNS = {"error": ("error", "errors"), "warning": ("warning", "warnings"),
                   "information": ("info", "infos"), "hint": ("hint", "hints")}


def technique_label(technique: str) -> str:
    """A technique id as people read it: "memory_coalescing" -> "memory coalescing"."""
    return technique.replace("_", " ")


def severity_counts(findings: Sequence[Finding]) -> str:
    """"2 warnings, 1 hint", by the published severity, most severe first: the same counts as the
    Problems panel (which lists errors, warnings and infos) with the hints named apart."""
    counts = {severity: 0 for severity in _SEVERITY_NOUNS}
    for finding in findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    return ", ".join(f"{n} {_SEVERITY_NOUNS[s][n != 1]}" for s, n in counts.items() if n)


def hint_fix_note(findings: Sequence[Finding]) -> str:
    """"; the hint has a quick fix", "; 1 of 3 hints has a quick fix", or "" when no hint has one.
    Hints are the findings a client shows least (no Problems entry, a faint underline), so the
    lens says when one can be fixed from the lightbulb."""
    hints = [f for f in findings if f.severity == "hint"]
    fixable = sum(1 for f in hints if f.fixes)
    if not fixable:
        return ""
    verb = "has a quick fix" if fixable == 1 else "have quick fixes"
    if fixable == len(hints):
        return f"; the hint {verb}" if fixable == 1 else f"; the {fixable} hints {verb}"
    return f"; {fixable} of {len(hints)} hints {verb}"


def lens_title(findings: Sequence[Finding]) -> str:
    """CodeLens text above a kernel: "2 warnings, 1 hint: memory coalescing, restrict const; the
    hint has a quick fix". Counted by severity, so the lens agrees with the Problems panel and
    the status bar; `hint_fix_note` last."""
    if not findings:
        return "No findings"
    techniques = ", ".join(technique_label(t) for t in techniques_of(findings))
    return f"{severity_counts(findings)}: {techniques}{hint_fix_note(findings)}"


def launched_at(model: SourceModel, position: Position) -> tuple[Function, LaunchSite] | None:
    """The kernel defined in this file that the launch site `k<<<...>>>(...)` at `position` launches."""
    site = model.launch_at(position)
    launched = model.kernel(site.kernel) if site is not None else None
    return (launched, site) if launched is not None and site is not None else None


def card_target(model: SourceModel, position: Position) -> tuple[Function, Span] | None:
    """The kernel whose card a hover at `position` shows, and the span hovered.

    On a kernel's name (its definition) or anywhere on a launch site `k<<<...>>>(...)` of a
    kernel defined in this file.
    """
    for function in model.functions_overlapping(Span(position, position)):
        if function.kind == "global" and function.name_span.contains(position):
            return function, function.name_span
    launched = launched_at(model, position)
    return (launched[0], launched[1].span) if launched is not None else None


def kernel_at(model: SourceModel | None, position: Position) -> str | None:
    """The kernel an action at `position` is about: anywhere in its definition (name, signature
    or body) or on one of its launch sites."""
    if model is None:
        return None
    # Not `model.kernel_at` (the innermost function): after a syntax error an ERROR item can
    # overlap a kernel, and the first kernel holding the position is the one to act on.
    kernel = next((f for f in model.functions_overlapping(Span(position, position)) if f.kind == "global"), None)
    if kernel is None:
        launched = launched_at(model, position)
        kernel = launched[0] if launched is not None else None
    return str(kernel.name) if kernel is not None else None
