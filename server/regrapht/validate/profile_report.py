"""One kernel launch's Nsight Compute findings as plain data: what `validate/profiler.py` reads
from a report, what the kernel card shows, what the editor keeps per kernel and passes to
Optimize, and what `regrapht optimize --profile PATH` reads back from a saved JSON.

Stdlib only (the language server holds these without loading the profiler, and
`search/request.py` carries one). `profile_from_json` reads the three shapes a saved profile
comes in: `Profile.to_json()` itself, `regrapht bench --profile --json`'s output (under
`profile`), and the `regrapht.validateKernel` answer (under `profiles`, by kernel).

A rule's `text` is what ncu printed (whitespace collapsed); `ProfileRule` reads it for the
people it is shown to: ncu's own estimate (`Est. Speedup: 21.88%`, `Est. Local Speedup:
79.95%`) taken out of the sentence (`estimate`) and said once at the end (`shown`), the
sentences that only point to other pages, tables or guides of ncu's report left out (`summary`),
and whether the rule is a note about the tool itself rather than the kernel (`about_tool`: a
metric it could not collect, a pointer to its own report) - those are no finding, no line of the
card and no prior of the search (`strongest_first` leaves them out).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from regrapht.errors import InputError

_LEADING_ESTIMATE = re.compile(r"^\s*Est\.\s+(Global\s+|Local\s+)?Speedup:\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*",
                               re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
# ncu's wording when a sentence is about the tool, not the kernel: a metric it lacks, or a
# pointer to another page, table, section or guide of its report
_ABOUT_TOOL = tuple(re.compile(pattern, re.IGNORECASE) for pattern in (
    r"\b(optional|additional) metrics?\b",
    r"\bmetrics?\b.*\b(could|can|was|were|is|are)\s+not\s+(be\s+)?(found|collected|available)\b",
    r"\b(collect(ing)?|enable|enabling)\b.*\b(metrics?|sections?)\b.*\b(guidance|details|information)\b",
    r"^(check|see|look at|refer to|consult)\b.*\b(tables?|sections?|pages?|guide|statistics|view|details)\b",
    r"\b(provides?|gives?|has|for)\s+(more|further|additional)\s+(details|information|guidance)\b",
))


def collapse_whitespace(text: str) -> str:
    """ncu pads and wraps its rule texts: one space between words."""
    return " ".join(text.split())


def about_tool(sentence: str) -> bool:
    """Whether `sentence` of a rule talks about ncu (a metric it lacks, a pointer to its report)."""
    return any(pattern.search(sentence) for pattern in _ABOUT_TOOL)


def percent_text(value: float) -> str:
    """79.95 -> "80%", 8.369 -> "8.4%": as precise as an estimate deserves."""
    return f"{value:.0f}%" if value >= 10 else f"{value:.1f}%"


@dataclass(frozen=True)
class RuleEstimate:
    """ncu's estimate of what fixing a rule gains: `Est. Speedup` (of the whole kernel, scope
    "global") or `Est. Local Speedup` (of the part the rule measures, scope "local")."""

    percent: float
    scope: Literal["global", "local"]

    def note(self) -> str:
        return f"ncu estimates up to {percent_text(self.percent)}{' local' if self.scope == 'local' else ''} speedup"


@dataclass(frozen=True)
class ProfileRule:
    """One of ncu's rule findings, read for people (module docstring)."""

    kind: str  # Nsight Compute's: OPT (an optimization), WRN, INF, ERR
    text: str  # as ncu printed it, its estimate included
    technique: str  # "" when none of the graph's techniques answers it

    def _split(self) -> tuple[RuleEstimate | None, str]:
        """The leading estimates (the global one first) and the text after them."""
        text, found = collapse_whitespace(self.text), dict[str, float]()
        while match := _LEADING_ESTIMATE.match(text):
            found.setdefault("local" if (match.group(1) or "").strip().lower() == "local" else "global",
                             float(match.group(2)))
            text = text[match.end():]
        scope: Literal["global", "local"] = "global" if "global" in found else "local"
        return (RuleEstimate(found[scope], scope) if found else None), text

    @property
    def estimate(self) -> RuleEstimate | None:
        return self._split()[0]

    @property
    def prose(self) -> str:
        """The rule's sentences without its estimate."""
        return self._split()[1]

    def sentences(self) -> tuple[str, ...]:
        return tuple(s for s in _SENTENCE_END.split(self.prose) if s)

    @property
    def about_tool(self) -> bool:
        """A note about ncu itself (every sentence is: module docstring), not about the kernel."""
        sentences = self.sentences()
        return bool(sentences) and all(about_tool(s) for s in sentences)

    @property
    def summary(self) -> str:
        """The prose without the sentences that point elsewhere in ncu's report (all of it for a
        rule that is about the tool)."""
        kept = [s for s in self.sentences() if not about_tool(s)]
        return " ".join(kept) if kept else self.prose

    def shown(self, *notes: str) -> str:
        """The summary, then in one parenthesis ncu's estimate (once) and `notes`."""
        estimate = self.estimate
        said = [estimate.note()] if estimate is not None else []
        said += [n for n in notes if n]
        return self.summary + (f" ({'; '.join(said)})" if said else "")

    def to_json(self) -> dict[str, object]:
        estimate = self.estimate
        return {"kind": self.kind, "text": self.text, "technique": self.technique, "summary": self.summary,
                "estimate_pct": estimate.percent if estimate else None,
                "estimate_scope": estimate.scope if estimate else None, "about_tool": self.about_tool}


def strongest_first(rules: tuple[ProfileRule, ...]) -> tuple[ProfileRule, ...]:
    """The rules about the kernel, the largest estimate first (those without one after, in ncu's
    order); the notes about the tool left out."""
    about_kernel = [r for r in rules if not r.about_tool]
    return tuple(sorted(about_kernel, key=lambda r: -(r.estimate.percent if r.estimate else -1.0)))


@dataclass(frozen=True)
class Profile:
    kernel: str
    dram_pct: float | None
    sm_pct: float | None
    occupancy_pct: float | None
    stalls: tuple[tuple[str, float], ...]  # (reason, cycles per issued instruction), largest first
    rules: tuple[ProfileRule, ...]
    outcome: Literal["profiled"] = "profiled"  # tells a Profile from a ProfileFailure without importing either

    def to_json(self) -> dict[str, object]:
        return {"kernel": self.kernel, "dram_pct": self.dram_pct, "sm_pct": self.sm_pct,
                "occupancy_pct": self.occupancy_pct, "stalls": [list(s) for s in self.stalls],
                "rules": [r.to_json() for r in self.rules]}


@dataclass(frozen=True)
class ProfileFailure:
    reason: str
    outcome: Literal["failed"] = "failed"

    def to_json(self) -> dict[str, object]:
        return {"error": self.reason}


@dataclass(frozen=True)
class ProfiledSource:
    """A profile with the text it measured (its digest: `source_digest`), as the editor keeps
    the background validation's last one per kernel: Optimize passes it on only for that text."""

    digest: str
    profile: Profile


def source_digest(text: str) -> str:
    """The SHA-256 of a source text (hashlib loads on first use: not at the server's start)."""
    import hashlib

    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def _percent(data: Mapping[str, object], key: str, file: str | None) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise InputError(f"{key} must be a non-negative number or null, got {value!r}", key=key, file=file)
    return float(value)


def _stalls(raw: object, file: str | None) -> tuple[tuple[str, float], ...]:
    if not isinstance(raw, list):
        raise InputError(f"stalls must be a list of [reason, cycles], got {raw!r}", key="stalls", file=file)
    stalls: list[tuple[str, float]] = []
    for index, item in enumerate(raw):
        if (not isinstance(item, list | tuple) or len(item) != 2 or not isinstance(item[0], str)
                or isinstance(item[1], bool) or not isinstance(item[1], int | float) or not math.isfinite(item[1])):
            raise InputError(f"stalls[{index}] must be [reason, cycles], got {item!r}", key=f"stalls[{index}]",
                             file=file)
        stalls.append((item[0], float(item[1])))
    return tuple(sorted(stalls, key=lambda s: -s[1]))


def _rules(raw: object, file: str | None) -> tuple[ProfileRule, ...]:
    if not isinstance(raw, list):
        raise InputError(f"rules must be a list, got {raw!r}", key="rules", file=file)
    rules: list[ProfileRule] = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not all(isinstance(item.get(k, ""), str) for k in ("kind", "text", "technique")):
            raise InputError(f"rules[{index}] must hold the strings kind, text and technique", key=f"rules[{index}]",
                             file=file)
        rules.append(ProfileRule(item.get("kind", ""), item.get("text", ""), item.get("technique", "")))
    return tuple(rules)


def parse_profile(data: Mapping[str, object], file: str | None = None) -> Profile | ProfileFailure:
    """`Profile.to_json()` (or `ProfileFailure.to_json()`) read back; InputError naming the key
    (and `file`, where the JSON came from) for anything else."""
    if "error" in data:
        return ProfileFailure(str(data["error"]))
    kernel = data.get("kernel")
    if not isinstance(kernel, str) or not kernel:
        raise InputError(f"a profile names its kernel (a string), got {kernel!r}", key="kernel", file=file)
    return Profile(kernel, _percent(data, "dram_pct", file), _percent(data, "sm_pct", file),
                   _percent(data, "occupancy_pct", file), _stalls(data.get("stalls", []), file),
                   _rules(data.get("rules", []), file))


def base_name(kernel: str) -> str:
    return kernel.split("<", 1)[0].strip()


def profile_from_json(data: object, kernel: str, file: str | None = None) -> Profile | ProfileFailure:
    """The profile of `kernel` in a saved JSON (module docstring: a profile, `bench --profile
    --json`'s output, or the `validateKernel` answer; `file`: where it was read, for the errors);
    InputError when it holds none of `kernel` (a template kernel matches by its name without
    arguments)."""
    if not isinstance(data, dict):
        raise InputError("a saved profile is a JSON object", file=file)
    if isinstance(data.get("profiles"), dict):
        found = {name: value for name, value in data["profiles"].items() if base_name(name) == base_name(kernel)}
        if not found:
            raise InputError(f"the saved profiles hold no kernel {kernel!r} (only {', '.join(data['profiles']) or 'none'})",
                             key="profiles", file=file)
        data = next(iter(found.values()))
    elif isinstance(data.get("profile"), dict):
        data = data["profile"]
    if not isinstance(data, dict):
        raise InputError("a saved profile is a JSON object", file=file)
    profile = parse_profile(data, file)
    if profile.outcome == "profiled" and base_name(profile.kernel) != base_name(kernel):
        raise InputError(f"the saved profile is of kernel {profile.kernel!r}, not {kernel!r}", key="kernel", file=file)
    return profile
