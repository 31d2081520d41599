"""`ClusterSettings`: where the Ray cluster is and how its jobs are bounded (the CLI's `--ray`,
`--job-timeout`, `--retries`, `--gpus-per-job`). Plain data: importing it imports neither Ray nor the search."""

from __future__ import annotations

from dataclasses import dataclass

AUTO_ADDRESS = "auto"  # `--ray` without an address: $RAY_ADDRESS if set, else a local Ray
DEFAULT_JOB_TIMEOUT_S = 1800.0
DEFAULT_RETRIES = 2


@dataclass(frozen=True)
class ClusterSettings:
    address: str = AUTO_ADDRESS
    job_timeout_s: float = DEFAULT_JOB_TIMEOUT_S  # from the job's start; a job past it is killed
    retries: int = DEFAULT_RETRIES  # re-runs of a job whose worker died
    # a GPU's share per job: 1 gives each job its own GPU; 0.25 runs four jobs on one GPU, whose
    # compiles and model calls use the CPUs while one of them times (the per-GPU lock serialises timing)
    gpus_per_job: float = 1.0
    poll_s: float = 0.5  # how often the driver looks for time-outs between finished jobs
