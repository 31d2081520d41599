"""What the user reads about an optimize run in the editor: progress lines, messages, the title
of the edit and of the code actions, and the kernel card's "Optimize" section. Pure formatting.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from regrapht.cards import CardSection

if TYPE_CHECKING:  # annotations only: the server starts without the search engine
    from regrapht.search.pipeline import BestVersion, OptimizeResult
    from regrapht.search.run import Progress

CARD_SECTION = "Optimize"
KEPT = "kept (offered as a code action)"


def action_title(kernel: str, running: bool) -> str:
    """The code action that starts (or, while running, cancels) optimizing `kernel`."""
    return f"Cancel optimizing {kernel}" if running else f"Optimize {kernel} with ReGraphT"


# What a verified path does to floating-point results, as the edit says it (techniques.py `Numerics`).
NUMERICS_NOTES = {
    "exact": "",
    "reorders": "sums floating-point values in another order (results round differently, within the spec's tolerance)",
    "approximates": "changes numerics: fast-math approximations (within the spec's tolerance)",
}


def sanitizer_word(sanitizer: str) -> str:
    """The title's word for compute-sanitizer's verdict: ", sanitizer: clean", ", unsanitized"."""
    if sanitizer.startswith("clean"):
        return ", sanitizer: clean"
    return ", unsanitized" if sanitizer else ""


def edit_title(kernel: str, speedup: float, gpu: str | None, numerics: str = "exact", sanitizer: str = "",
               checked: str = "", path: Sequence[str] = ()) -> str:
    """The refactor preview's title, everything the user decides on in one line: "Apply 2.4x
    faster saxpy on NVIDIA H200, verified (4 seeds, odd size), vectorize -> unroll, sanitizer:
    clean; changes numerics (fast math)"."""
    verified = f"verified ({checked})" if checked else "verified"
    steps = f", {' -> '.join(path)}" if path else ""
    title = (f"Apply {speedup:.1f}x faster {kernel} on {gpu or 'this GPU'}, {verified}{steps}"
             f"{sanitizer_word(sanitizer)}")
    short = {"approximates": "; changes numerics (fast math)", "reorders": "; float sums reordered"}
    return title + short.get(numerics, "")


def best_title(kernel: str, best: BestVersion, gpu: str | None) -> str:
    """`edit_title` of a found version."""
    return edit_title(kernel, best.speedup, gpu, best.numerics, best.sanitizer, best.checked, best.techniques)


def applied_message(kernel: str, best: BestVersion, gpu: str | None) -> str:
    """The confirmation once the user applied a found version."""
    return (f"ReGraphT applied the {best.speedup:.1f}x faster {kernel} (verified on {gpu or 'this GPU'}: "
            f"{' -> '.join(best.techniques) or 'launch change'}). Undo restores the original.")


def progress_message(progress: Progress) -> str:
    best = f", best {progress.best_speedup:.2f}x" if progress.best_speedup else ""
    return f"{progress.stage}: {progress.message} ({progress.evaluated}/{progress.budget}{best})"


def progress_percentage(progress: Progress) -> int:
    return min(100, progress.evaluated * 100 // max(progress.budget, 1))


def no_gpu_message(kernel: str, reason: str) -> str:
    return (
        f"ReGraphT cannot verify optimizations of {kernel} on this machine ({reason or 'no CUDA device'}); "
        "nothing unverified is offered. Run Optimize where a CUDA GPU is available."
    )


def ended_messages(kind: str, message: str, kernel: str, kernel_edited: bool) -> tuple[str, str | None]:
    """(the progress's end text, a line for the client's log or None) of a finished search of
    kind "cancelled", "nothing" or "found"."""
    if kind == "cancelled":
        edited = " (the kernel was edited)" if kernel_edited else ""
        return "cancelled" + edited, f"regrapht: optimizing {kernel} cancelled; {message}"
    if kind == "nothing":
        return message, f"regrapht: {kernel}: no faster verified version: {message}"
    return message, None


def outcome_message(kind: str, message: str, kernel: str, kernel_edited: bool) -> str:
    """What the user is told when a run ends without a version to apply ("nothing", "cancelled")."""
    if kind == "cancelled":
        edited = " (the kernel was edited)" if kernel_edited else ""
        return f"ReGraphT: optimizing {kernel} was cancelled{edited}; {message}"
    return f"ReGraphT found no faster verified version of {kernel}: {message}"


def kept_message(kernel: str, speedup: float, title: str, can_apply: bool) -> str:
    """Why a found version was not sent as an edit: the file changed, or the editor cannot apply edits."""
    why = "the file changed during the search" if can_apply else "this editor cannot apply edits"
    return (f"ReGraphT found a {speedup:.1f}x faster {kernel} but "
            f"{why}; the result is kept: use the code action '{title}' on the kernel.")


def not_applicable_message(kernel: str, speedup: float, problems: Sequence[str]) -> str:
    return (f"ReGraphT found a {speedup:.1f}x faster {kernel} "
            f"but cannot apply it automatically: {'; '.join(problems)}")


def declined_message(title: str, reason: str | None) -> str:
    return f"regrapht: {title} not applied ({reason or 'declined'}); it stays available as a code action"


def path_text(best: BestVersion) -> tuple[str, ...]:
    """The technique path with the gain after each step: ("vectorize (1.80x)", ...)."""
    return tuple(
        f"{step.technique} ({step.speedup:.2f}x)" if step.speedup is not None else step.technique
        for step in best.steps
    )


def path_description(best: BestVersion) -> str:
    """The path as one line, for the edit's change annotation, with what it does to numerics."""
    note = NUMERICS_NOTES.get(best.numerics, "")
    return " -> ".join(path_text(best)) + (f"; {note}" if note else "")


def profile_note(result: OptimizeResult) -> str:
    """What the kernel's Nsight Compute profile raised in the run's order ("" if nothing)."""
    from regrapht.search.profile_evidence import PRIOR_STRATEGIES  # loaded with the result's search

    if result.profile is None or not result.profile.boosts or result.strategy not in PRIOR_STRATEGIES:
        return ""
    raised = ", ".join(f"`{b.technique}`" for b in result.profile.boosts)
    return f"\n\nTried first, from the Nsight Compute profile ({result.profile.bottleneck}-bound): {raised}."


def card_section(result: OptimizeResult, applied: str) -> CardSection:
    c = result.counters
    counts = f"{c.generated} candidates, {c.correct} correct, {c.faster} faster ({result.strategy})"
    if result.best is None:
        return CardSection(CARD_SECTION, f"No faster verified version: {result.reason}. {counts}.{profile_note(result)}")
    best = result.best
    baseline = f" ({result.baseline_ms:.4f} -> {best.time_ms:.4f} ms)" if result.baseline_ms else ""
    steps = "\n".join(
        f"{i}. `{s.technique}`" + (f": {s.speedup:.2f}x" if s.speedup is not None else "")
        for i, s in enumerate(best.steps, 1)
    )
    note = NUMERICS_NOTES.get(best.numerics, "")
    numerics = f"\n\nThis version {note}." if note else ""
    if best.sanitizer:
        numerics += f"\n\ncompute-sanitizer: {best.sanitizer}."
    return CardSection(
        CARD_SECTION,
        f"{best.speedup:.2f}x faster on {result.gpu}{baseline}, {applied}. {counts}.\n{steps}{numerics}"
        f"{profile_note(result)}",
    )


def with_section(sections: Sequence[CardSection], section: CardSection) -> tuple[CardSection, ...]:
    """`sections` with `section` in place of any earlier one of the same title (at the end)."""
    return (*(s for s in sections if s.title != section.title), section)
