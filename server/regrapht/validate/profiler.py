"""Nsight Compute in the kernel card: one launch of a kernel profiled through the spec harness.

`profile_kernel` runs a GPU worker under `ncu` (found on PATH or beside nvcc), sends it the
kernel's probe at the spec's size (`CudaEvaluator.probe_request`: a warm-up and one run; `-c 1`
profiles the first, only the kernel's own entry is matched), and reads the report back with
`ncu --import`: achieved DRAM and SM throughput as % of peak, achieved occupancy, the warp stall
reasons (cycles per issued instruction) and Nsight Compute's own rule findings, each mapped to
the reasoning-graph technique that addresses it. Every run is bounded by a timeout; a missing
`ncu`, a driver that refuses the counters (ERR_NVGPUCTRPERM) or a failed run is a
`ProfileFailure` with the reason, never a hang.
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from regrapht.validate.compiler import find_cuda_tool
from regrapht.validate.evaluator import CudaEvaluator
from regrapht.validate.gpu_lock import GpuLockTimeout
from regrapht.validate.profile_report import Profile, ProfileFailure, ProfileRule, collapse_whitespace
from regrapht.validate.types import Candidate, Evaluation
from regrapht.validate.worker import GpuWorker, default_command

SECTIONS = ("SpeedOfLight", "Occupancy", "WarpStateStats", "LaunchStats", "MemoryWorkloadAnalysis")
STALL_REASONS = ("long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "barrier", "membar",
                 "math_pipe_throttle", "wait", "not_selected", "no_instruction", "branch_resolving", "drain",
                 "imc_miss", "tex_throttle", "dispatch_stall", "sleeping", "misc")
_STALL_METRIC = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
METRICS = {
    "dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
}
# Nsight Compute's rule texts -> the technique of the reasoning graph that answers them (first match)
RULE_TECHNIQUES: tuple[tuple[str, str], ...] = (
    ("uncoalesced", "memory_coalescing"),
    ("sectors", "memory_coalescing"),
    ("bytes per sector", "memory_coalescing"),  # "only 4.0 of the transmitted 32 bytes per sector are utilized"
    ("access pattern", "memory_coalescing"),  # "the memory access pattern for global loads ... might not be optimal"
    ("bank conflict", "bank_conflict_padding"),
    ("divergen", "divergence_reduction"),
    ("occupancy", "launch_configuration"),
    ("block size", "launch_configuration"),
    ("threads per block", "launch_configuration"),  # "configured to execute 100 threads per block"
    ("tail effect", "launch_configuration"),
    ("grid is too small", "launch_configuration"),
    ("shared memory", "shared_memory_tiling"),
    ("l1tex", "vectorized_access"),
    ("scoreboard", "vectorized_access"),
    ("memory", "vectorized_access"),
    ("fp64", "fast_math"),
    ("double", "fast_math"),
)
_RULE_LINE = re.compile(r"^\s*(OPT|WRN|INF|ERR)\s{2,}(.*)$")

__all__ = ["METRICS", "RULE_TECHNIQUES", "SECTIONS", "STALL_REASONS", "Profile", "ProfileFailure", "ProfileRule",
           "find_ncu", "parse_raw", "parse_rules", "profile_kernel", "profile_of", "technique_for_rule"]


def find_ncu(env: Mapping[str, str]) -> Path | None:
    """ncu on PATH, else beside nvcc, else in $CUDA_HOME/bin."""
    return find_cuda_tool("ncu", env)


def technique_for_rule(text: str) -> str:
    lowered = text.lower()
    return next((technique for needle, technique in RULE_TECHNIQUES if needle in lowered), "")


def parse_rules(details: str) -> tuple[ProfileRule, ...]:
    """The rule findings of `ncu --page details` text: a line `OPT   text...` and its wrapped
    continuation lines (indented, up to the next blank line or section rule), joined with one
    space between words (ncu pads its lines to the report's width)."""
    rules: list[ProfileRule] = []
    kind, lines = "", list[str]()  # the rule being read
    for line in [*details.splitlines(), ""]:
        match = _RULE_LINE.match(line)
        if match or not line.strip() or line.strip().startswith(("---", "Section:")):
            if kind:
                text = collapse_whitespace(" ".join(lines))
                rules.append(ProfileRule(kind, text, technique_for_rule(text)))
            kind, lines = (match.group(1), [match.group(2)]) if match else ("", [])
        elif kind:
            lines.append(line.strip())
    return tuple(r for r in rules if r.text)


def parse_raw(csv_text: str, entry: str) -> dict[str, float]:
    """Metric name -> value of the profiled launch, from `ncu --page raw --csv --print-units base`
    (the header row, then a units row, then one row per profiled launch)."""
    rows = [r for r in csv.reader(io.StringIO(csv_text)) if r]
    header = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if header is None:
        return {}
    names = rows[header]
    launches = [r for r in rows[header + 1:] if len(r) == len(names) and r[names.index("ID")].strip().isdigit()]
    if not launches:
        return {}
    values: dict[str, float] = {}
    for name, raw in zip(names, launches[0], strict=True):
        try:
            values[name] = float(raw.replace(",", ""))
        except ValueError:
            continue
    return values


def profile_of(kernel: str, metrics: Mapping[str, float], details: str) -> Profile:
    stalls = sorted(((reason, metrics[_STALL_METRIC.format(reason)]) for reason in STALL_REASONS
                     if _STALL_METRIC.format(reason) in metrics), key=lambda s: -s[1])
    return Profile(kernel, metrics.get(METRICS["dram_pct"]), metrics.get(METRICS["sm_pct"]),
                   metrics.get(METRICS["occupancy_pct"]), tuple((r, round(v, 2)) for r, v in stalls[:4] if v > 0),
                   parse_rules(details))


def profile_kernel(evaluator: CudaEvaluator, candidate: Candidate, ncu: Path, *, env: Mapping[str, str],
                   timeout_s: float = 180.0) -> Profile | ProfileFailure:
    """One launch of `candidate` (the original, for the card) profiled at the spec's size."""
    request = evaluator.probe_request(candidate, at_spec_size=True)
    if isinstance(request, Evaluation):
        return ProfileFailure(f"the kernel could not be run: {request.outcome}: {request.reason}")
    entry = request.module.entry
    with tempfile.TemporaryDirectory(prefix="regrapht-ncu-") as scratch:
        report, log = Path(scratch) / "profile", Path(scratch) / "ncu.log"
        metrics = ",".join([*METRICS.values(), *(_STALL_METRIC.format(r) for r in STALL_REASONS)])
        command = [str(ncu), "--target-processes", "all", "--kernel-name-base", "mangled", "--kernel-name", entry,
                   "--launch-count", "1", *(a for s in SECTIONS for a in ("--section", s)), "--metrics", metrics,
                   "--export", str(report), "--force-overwrite", "--log-file", str(log), *default_command()]
        worker = GpuWorker(command, env=env, start_timeout_s=timeout_s)
        try:
            if worker.info().get("device") is None:
                return ProfileFailure(f"no device under ncu ({worker.info().get('reason')})")
            try:
                with evaluator.gpu_lock.hold(timeout_s):
                    worker.request(request, timeout_s=timeout_s)
            except GpuLockTimeout as error:
                return ProfileFailure(str(error))
        finally:
            worker.close()  # ncu writes the report when the process ends
        logged = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        if "ERR_NVGPUCTRPERM" in logged:
            return ProfileFailure("profiling is not permitted on this GPU (ERR_NVGPUCTRPERM): the driver restricts "
                                  "GPU performance counters to admin users")
        rep = report.with_suffix(".ncu-rep")
        if not rep.exists():
            return ProfileFailure(f"ncu wrote no report ({' '.join(logged.split()[-25:]) or 'no log'})")
        try:
            raw = subprocess.run([str(ncu), "--import", str(rep), "--page", "raw", "--csv", "--print-units", "base"],
                                 capture_output=True, text=True, timeout=timeout_s, check=False)
            details = subprocess.run([str(ncu), "--import", str(rep), "--page", "details", "--print-details", "all"],
                                     capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            return ProfileFailure(f"ncu --import took more than {timeout_s:g} s")
    metrics_found = parse_raw(raw.stdout, entry)
    if not metrics_found:
        return ProfileFailure(f"ncu's report has no metrics ({(raw.stderr or raw.stdout).strip()[-300:]})")
    return profile_of(evaluator.kernel.name, metrics_found, details.stdout)
