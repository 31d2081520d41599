"""Job runners for the cluster tests: importable by module path on Ray's workers (the tests put
the repository root on their PYTHONPATH). Each does what a real job's process might do: finish,
die with its worker, hang. A job's `task` folder is the test's scratch folder."""

from __future__ import annotations

import os
import time

from regrapht.cluster.jobs import Job


def _record(job: Job, what: str) -> None:
    with open(job.task / f"{job.kernel}-{job.seed}.runs", "a", encoding="utf-8") as runs:
        runs.write(f"{what} {os.getpid()}\n")


def echo(job: Job) -> dict[str, object]:
    """A job that finishes at once, saying which GPU Ray gave it."""
    _record(job, "ran")
    return {"task": job.task.name, "kernel": job.kernel, "seed": job.seed,
            "gpus": os.environ.get("CUDA_VISIBLE_DEVICES", ""), "pid": os.getpid()}


def crash_once(job: Job) -> dict[str, object]:
    """Kills its own worker process the first time (as a segfault in native code would)."""
    marker = job.task / f"{job.kernel}-{job.seed}.crashed"
    if not marker.exists():
        marker.write_text("crashed\n", encoding="utf-8")
        _record(job, "crash")
        os._exit(1)
    return echo(job)


def always_crash(job: Job) -> dict[str, object]:
    _record(job, "crash")
    os._exit(1)


def hang_if_named_hang(job: Job) -> dict[str, object]:
    """A job named `hang` never returns (a hung kernel or compiler); the others finish."""
    if job.kernel == "hang":
        _record(job, "hang")
        time.sleep(3600)
    return echo(job)
