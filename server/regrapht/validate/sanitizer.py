"""`CudaSanitizer`: a verified candidate run under compute-sanitizer before it is offered.

A differential test can pass by luck where a shared-memory race or an out-of-bounds read happens
to leave the right values. Before the search offers its answer (search/pipeline.py), the winner
runs in a GPU worker started under `compute-sanitizer --tool T` for memcheck, racecheck and
synccheck in turn: the worker process is the same `regrapht.validate.gpu_worker`, sent only the
candidate's probe (`CudaEvaluator.probe_request`: a warm-up and one run at the check's small odd
size, the original never launched), so every report is the candidate's or the worker's own
comparison kernels'. A tool's report rejects the candidate with its first finding; a sanitizer
that is missing or cannot run on the device makes the answer "unsanitized", said as such.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from regrapht.validate.compiler import find_cuda_tool
from regrapht.validate.evaluator import CudaEvaluator
from regrapht.validate.gpu_lock import GpuLock, GpuLockTimeout
from regrapht.validate.types import Candidate, Evaluation, Sanitized
from regrapht.validate.worker import GpuWorker, WorkerFailure, default_command
from regrapht.validate.worker_protocol import Failed, Timed

TOOLS = ("memcheck", "racecheck", "synccheck")
# memcheck and synccheck end with "ERROR SUMMARY: N errors"; racecheck with "RACECHECK SUMMARY:
# H hazards displayed (N errors, W warnings)" (its warnings are hazards it judges possibly benign)
_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?|RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?")
_PREFIX = re.compile(r"^=+\s?")
NO_DETAILS = "a report without details"


def find_sanitizer(env: Mapping[str, str]) -> Path | None:
    """compute-sanitizer on PATH, else beside nvcc, else in $CUDA_HOME/bin."""
    return find_cuda_tool("compute-sanitizer", env)


def first_report(log: str) -> str:
    """The first finding of a sanitizer log, as one line: "Invalid __global__ read of size 4
    bytes; at saxpy(...)+0x70; by thread (255,0,0) in block (3,0,0)"."""
    lines = [_PREFIX.sub("", line).strip() for line in log.splitlines() if line.startswith("=")]
    report: list[str] = []
    for line in lines:
        if line.startswith(("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY")):
            continue
        if not line:
            if report:
                break
            continue
        report.append(line)
        if len(report) == 4:
            break
    return "; ".join(report) or NO_DETAILS


def errors_in(log: str) -> int | None:
    """The error count of the log's summary; None when it has none (the tool did not finish)."""
    found = _SUMMARY.findall(log)
    return int(found[-1][0] or found[-1][1]) if found else None


class CudaSanitizer:
    """The `Sanitizer` of validate/types.py for one evaluator's kernel (its spec, inputs, flags)."""

    def __init__(self, evaluator: CudaEvaluator, executable: Path, *, env: Mapping[str, str],
                 gpu_lock: GpuLock, tools: Sequence[str] = TOOLS, timeout_s: float = 300.0) -> None:
        self.evaluator = evaluator
        self.executable = executable
        self.env = dict(env)
        self.gpu_lock = gpu_lock
        self.tools = tuple(tools)
        self.timeout_s = timeout_s

    def sanitize(self, candidate: Candidate) -> Sanitized:
        request = self.evaluator.probe_request(candidate)
        if isinstance(request, Evaluation):
            return Sanitized("unavailable", (), f"the candidate could not be probed: {request.outcome}: {request.reason}")
        ran: list[str] = []
        for tool in self.tools:
            with tempfile.TemporaryDirectory(prefix="regrapht-sanitizer-") as scratch:
                log_path = Path(scratch) / f"{tool}.log"
                command = [str(self.executable), "--tool", tool, "--log-file", str(log_path), "--print-limit", "8",
                           *default_command()]
                worker = GpuWorker(command, env=self.env, start_timeout_s=self.timeout_s)
                try:
                    device = worker.info().get("device")
                    if device is None:
                        return Sanitized("unavailable", tuple(ran),
                                         f"{tool}: no device under compute-sanitizer ({worker.info().get('reason')})")
                    try:
                        with self.gpu_lock.hold(self.timeout_s):
                            reply = worker.request(request, timeout_s=self.timeout_s)
                    except GpuLockTimeout as error:
                        return Sanitized("unavailable", tuple(ran), f"{tool}: {error}")
                finally:
                    # the sanitizer writes its summary as the process ends: after a faulting kernel that
                    # can take a while on a busy host, and a killed sanitizer writes none
                    worker.close(wait_s=min(60.0, self.timeout_s))
                log = log_path.read_text(encoding="utf-8", errors="replace") if log_path.exists() else ""
            count = errors_in(log)
            if count:
                return Sanitized("dirty", (*ran, tool), f"{tool}: {first_report(log)}")
            if not (isinstance(reply, Timed) and reply.status == "ok"):
                # the tool's own finding where its log has one (the summary may be missing), else the worker's
                why = first_report(log) if first_report(log) != NO_DETAILS else \
                    reply.reason if isinstance(reply, WorkerFailure | Timed | Failed) else repr(reply)
                return Sanitized("dirty", (*ran, tool), f"{tool}: the candidate failed under the tool: {why}")
            if count is None:
                tail = " ".join(log.split()[-20:]) or "no log"
                return Sanitized("unavailable", tuple(ran), f"{tool} wrote no summary ({tail})")
            ran.append(tool)
        return Sanitized("clean", tuple(ran))


class UnavailableSanitizer:
    """The `Sanitizer` where compute-sanitizer cannot run (not found beside nvcc or on PATH):
    every answer is offered marked unsanitized, with the reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def sanitize(self, candidate: Candidate) -> Sanitized:
        return Sanitized("unavailable", (), self.reason)


def open_sanitizer(evaluator: CudaEvaluator, env: Mapping[str, str]) -> CudaSanitizer | UnavailableSanitizer:
    """The sanitizer gate for `evaluator`'s kernel on this machine."""
    executable = find_sanitizer(env)
    if executable is None:
        return UnavailableSanitizer("compute-sanitizer not found (on PATH or beside nvcc)")
    return CudaSanitizer(evaluator, executable, env=env, gpu_lock=evaluator.gpu_lock)
