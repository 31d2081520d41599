"""The cluster flags of `eval` and `graph distill`: `--ray [ADDRESS]`, `--job-timeout`, `--retries`.

One home for their arguments and their reading; without `--ray` nothing of the cluster (and no
Ray) is imported."""

from __future__ import annotations

import argparse
from typing import Any

from regrapht.cluster.config import AUTO_ADDRESS, DEFAULT_JOB_TIMEOUT_S, DEFAULT_RETRIES, ClusterSettings
from regrapht.errors import InputError


def add_cluster_arguments(parser: Any) -> None:
    group = parser.add_argument_group("cluster (Ray, pip install 'regrapht[cluster]')")
    group.add_argument("--ray", nargs="?", const=AUTO_ADDRESS, metavar="ADDRESS",
                       help="run each (task, kernel, seed) as a Ray task on one GPU: at ADDRESS "
                            "(ray://host:10001 or host:6379), else $RAY_ADDRESS, else a local Ray")
    group.add_argument("--job-timeout", type=float, default=DEFAULT_JOB_TIMEOUT_S, metavar="SECONDS",
                       help=f"with --ray: kill a job running longer (default {DEFAULT_JOB_TIMEOUT_S:g})")
    group.add_argument("--retries", type=int, default=DEFAULT_RETRIES,
                       help=f"with --ray: re-runs of a job whose worker died (default {DEFAULT_RETRIES})")
    group.add_argument("--gpus-per-job", type=float, default=1.0, metavar="SHARE",
                       help="with --ray: the share of a GPU each job asks for (default 1: a GPU each; "
                            "0.25: four jobs per GPU, their timing serialised by the GPU lock)")


def cluster_settings_of(args: argparse.Namespace) -> ClusterSettings:
    if args.job_timeout <= 0:
        raise InputError(f"--job-timeout must be positive, got {args.job_timeout:g}")
    if args.retries < 0:
        raise InputError(f"--retries must not be negative, got {args.retries}")
    if not 0 < args.gpus_per_job <= 1:
        raise InputError(f"--gpus-per-job must be in (0, 1], got {args.gpus_per_job:g}")
    return ClusterSettings(address=args.ray, job_timeout_s=args.job_timeout, retries=args.retries,
                           gpus_per_job=args.gpus_per_job)
