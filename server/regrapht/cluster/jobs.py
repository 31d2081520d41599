"""`Job`: one unit of `eval` or `graph distill` work, and `run_job`, which does it.

A job is plain frozen data (picklable, so it travels to a Ray worker): the task directory, one
kernel, the strategy, budget, seed and the `OptimizeOptions` of the command. `run_job` runs it in
the calling process with its own `GpuResources` (the device Ray assigned, through
`CUDA_VISIBLE_DEVICES`) through the same functions a local run uses
(`evaluation.runner.eval_row`, `evaluation.distilling.distill_search`), and returns a JSON
object; bad input in a task is part of that object, never an exception.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from regrapht.app.optimize import OptimizeOptions
from regrapht.validate.cache_dir import default_cache_dir

JOB_KINDS = ("eval", "distill", "command")


@dataclass(frozen=True)
class Job:
    kind: str  # "eval", "distill", or "command" (a bench script's job: `argv` run in `task`)
    task: Path  # the task directory (.cu + .regrapht.toml), or a command's working directory
    kernel: str  # a command job's name
    strategy: str = ""
    budget: int = 0
    seed: int = 0
    options: OptimizeOptions = field(default_factory=OptimizeOptions)
    argv: tuple[str, ...] = ()  # a command job's program and arguments
    log: Path | None = None  # where a command job's stdout and stderr go (appended)

    @property
    def key(self) -> str:
        """A file name that names the job: readable, with a hash of everything that makes it
        (options included), so a re-run with other options does not reuse its result."""
        described = json.dumps(asdict(self), sort_keys=True, default=str)
        digest = hashlib.sha256(described.encode()).hexdigest()[:12]
        readable = f"{self.kind}-{self.task.name}-{self.kernel}-{self.strategy}-b{self.budget}-s{self.seed}"
        return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', readable)}-{digest}"

    @property
    def label(self) -> str:
        if self.kind == "command":
            return self.kernel
        return f"{self.task.name}/{self.kernel} {self.strategy} b{self.budget} seed {self.seed}"


def run_job(job: Job) -> dict[str, object]:
    """Do `job` here (a Ray worker, or any process): its eval row, its distilled trajectories, or
    a command's exit status."""
    if job.kind == "command":
        return run_command(job)
    # Imported here: a worker unpickling a `Job` needs only the data types above.
    from regrapht.app.optimize import ModelCache
    from regrapht.app.resources import GpuResources
    from regrapht.evaluation.distilling import distill_search
    from regrapht.evaluation.runner import eval_row, load_task, measured_peaks

    task = load_task(job.task)
    kernel = task.spec.kernel(job.kernel)
    models = ModelCache()
    with GpuResources(job_env(os.environ), Path.home()) as resources:
        if job.kind == "eval":
            row, _failed = eval_row(task, kernel, strategy=job.strategy, budget=job.budget, seed=job.seed,
                                    options=job.options, models=models, resources=resources,
                                    peaks=measured_peaks)
            return row
        records, line = distill_search(task, kernel, strategy=job.strategy, budget=job.budget, seed=job.seed,
                                       options=job.options, models=models, resources=resources)
        return {"task": task.name, "kernel": kernel.name, "seed": job.seed, "records": records, "line": line}


def job_env(env: Mapping[str, str]) -> dict[str, str]:
    """The job's environment: on the GPU Ray assigned it (`CUDA_VISIBLE_DEVICES`), a cache dir of
    that GPU's own, as the GPU lock is one per cache dir: jobs on two GPUs of one host never wait
    for each other, jobs on one GPU never time kernels at once."""
    devices = env.get("CUDA_VISIBLE_DEVICES", "").strip()
    if not devices:
        return dict(env)
    base = default_cache_dir(env)
    return {**env, "REGRAPHT_CACHE_DIR": str(base / f"gpu-{re.sub(r'[^0-9A-Za-z-]', '_', devices)}")}


def run_command(job: Job) -> dict[str, object]:
    """A bench script's job (bench/ray_jobs.py): `argv` in `task` with the job's environment, its
    output appended to `log`; the exit status is the result (a failing command is a finished
    job: its log says why; only a dead worker or a time-out makes the job fail)."""
    start = time.monotonic()
    with open(job.log if job.log is not None else os.devnull, "ab") as log:
        done = subprocess.run(list(job.argv), cwd=job.task, env=job_env(os.environ), stdout=log,
                              stderr=subprocess.STDOUT, check=False)
    return {"name": job.kernel, "rc": done.returncode, "seconds": round(time.monotonic() - start, 3)}
