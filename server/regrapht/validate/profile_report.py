"""One kernel launch's Nsight Compute findings as plain data: what `validate/profiler.py` reads
from a report, what the kernel card shows, what the editor keeps per kernel and passes to
Optimize, and what `regrapht optimize --profile PATH` reads back from a saved JSON.

Stdlib only (the language server holds these without loading the profiler, and
`search/request.py` carries one). `profile_from_json` reads the three shapes a saved profile
comes in: `Profile.to_json()` itself, `regrapht bench --profile --json`'s output (under
`profile`), and the `regrapht.validateKernel` answer (under `profiles`, by kernel).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from regrapht.errors import InputError


@dataclass(frozen=True)
class ProfileRule:
    kind: str  # Nsight Compute's: OPT (an optimization), WRN, INF, ERR
    text: str
    technique: str  # "" when none of the graph's techniques answers it


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
                "rules": [{"kind": r.kind, "text": r.text, "technique": r.technique} for r in self.rules]}


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
