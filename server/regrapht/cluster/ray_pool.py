"""`run_on_ray`: jobs as Ray tasks, one GPU each, with retries, time-outs and progress.

The driver keeps at most one job per GPU the cluster declares in flight (or per share of one, with
`gpus_per_job` below 1), so a job's clock starts
when it starts, not when it waits in a queue; a job past `job_timeout_s` is cancelled with its
worker killed (a hung kernel or compiler cannot hold a GPU forever). A worker that dies (killed,
out of memory, a crash in native code) makes Ray run the job again, up to `retries` times.
Results are written by the driver to the `ResultStore` as they arrive, so an interrupted run
keeps what finished and a re-run skips it. Ray is imported here only, when called.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from regrapht.cluster.config import AUTO_ADDRESS, ClusterSettings
from regrapht.cluster.jobs import Job, run_job
from regrapht.cluster.progress import Progress
from regrapht.cluster.store import ResultStore
from regrapht.errors import InputError

JobRunner = Callable[[Job], dict[str, object]]


@dataclass(frozen=True)
class JobOutcome:
    job: Job
    result: dict[str, object] | None  # None: the job failed (`reason` says why)
    reason: str = ""
    reused: bool = False  # found in the store from an earlier run
    seconds: float = 0.0


def import_ray() -> Any:
    try:
        import ray
    except ImportError as error:
        raise InputError("--ray needs Ray, an optional extra: pip install 'regrapht[cluster]'") from error
    return ray


def run_on_ray(jobs: Sequence[Job], store: ResultStore, settings: ClusterSettings, *,
               runner: JobRunner = run_job, report: Callable[[str], None] = print) -> list[JobOutcome]:
    """Every job's outcome, in the order of `jobs`; `runner` must be importable by module path
    on the workers (`run_job` unless a test gives another)."""
    ray = import_ray()
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=None if settings.address == AUTO_ADDRESS else settings.address,
                 include_dashboard=False, configure_logging=False)
    try:
        gpus = float(ray.cluster_resources().get("GPU", 0))
        if gpus < settings.gpus_per_job:
            raise InputError(f"the Ray cluster ({settings.address}) declares no GPU; every job needs "
                             f"{settings.gpus_per_job:g} (start its nodes with --num-gpus)")
        return _drive(ray, jobs, store, settings, runner, report, int(gpus / settings.gpus_per_job + 1e-9))
    finally:
        if started_here:
            ray.shutdown()


def _drive(ray: Any, jobs: Sequence[Job], store: ResultStore, settings: ClusterSettings, runner: JobRunner,
           report: Callable[[str], None], slots: int) -> list[JobOutcome]:
    outcomes: dict[int, JobOutcome] = {}
    waiting: list[int] = []
    for index, job in enumerate(jobs):
        earlier = store.done(job)
        if earlier is not None:
            outcomes[index] = JobOutcome(job, earlier, reused=True)
        else:
            waiting.append(index)
    progress = Progress(total=len(jobs), slots=slots, skipped=len(outcomes))
    if progress.skipped:
        report(progress.line())
    remote = ray.remote(num_gpus=settings.gpus_per_job, max_retries=settings.retries)(runner)
    running: dict[Any, tuple[int, float]] = {}  # object ref -> (job index, start time)
    waiting.reverse()  # pop() from the end takes the jobs in their given order
    try:
        while waiting or running:
            while waiting and len(running) < slots:
                index = waiting.pop()
                running[remote.remote(jobs[index])] = (index, time.monotonic())
                progress.started()
            ready, _ = ray.wait(list(running), num_returns=1, timeout=settings.poll_s)
            for ref in ready:
                index, start = running.pop(ref)
                outcomes[index] = _collect(ray, ref, jobs[index], time.monotonic() - start, store)
                progress.finished(outcomes[index].seconds, ok=outcomes[index].result is not None)
                report(_line(outcomes[index], progress))
            for ref, (index, start) in list(running.items()):
                if time.monotonic() - start > settings.job_timeout_s:
                    ray.cancel(ref, force=True)
                    del running[ref]
                    reason = f"timed out after {settings.job_timeout_s:g} s (its worker was killed)"
                    store.write_failure(jobs[index], reason)
                    outcomes[index] = JobOutcome(jobs[index], None, reason, seconds=time.monotonic() - start)
                    progress.finished(outcomes[index].seconds, ok=False)
                    report(_line(outcomes[index], progress))
    finally:
        for ref in running:  # interrupted: stop what still runs
            ray.cancel(ref, force=True)
    return [outcomes[i] for i in range(len(jobs))]


def _collect(ray: Any, ref: Any, job: Job, seconds: float, store: ResultStore) -> JobOutcome:
    try:
        result = ray.get(ref)
    except ray.exceptions.RayError as error:  # the job raised, or its worker died past the retries
        reason = f"{type(error).__name__}: {str(error).strip().splitlines()[-1] if str(error).strip() else ''}"
        store.write_failure(job, reason)
        return JobOutcome(job, None, reason, seconds=seconds)
    store.write(job, result)
    return JobOutcome(job, result, seconds=seconds)


def _line(outcome: JobOutcome, progress: Progress) -> str:
    verdict = "done" if outcome.result is not None else f"FAILED: {outcome.reason}"
    return f"{outcome.job.label}: {verdict} ({outcome.seconds:.0f} s) | {progress.line()}"
