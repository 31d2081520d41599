"""Run a bench script's jobs on Ray, one GPU share each: the scheduler of bench/gpu/run_*.sh.

    python bench/ray_jobs.py JOBS.txt --store DIR [--status FILE] [--ray ADDRESS]
                             [--gpus-per-job SHARE] [--job-timeout S] [--retries N]

JOBS.txt: one job per line, `NAME LOG PROGRAM ARGS...` in shell words (`shlex`), run in the
current directory with the job's GPU (Ray's `CUDA_VISIBLE_DEVICES`) and that GPU's own cache dir,
its output appended to LOG. The jobs go through `regrapht.cluster.ray_pool.run_on_ray` (the same
pool as `regrapht eval --ray`: retries when a worker dies, a time-out that kills the worker, a
re-run that skips what finished, progress on stderr). `--status` gets one line per job:
`NAME exit=RC` (or `NAME failed: REASON`). Exit 0 when every job finished (whatever its command's
exit status), 1 when one failed, 2 on bad input.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from regrapht.cluster.config import ClusterSettings
from regrapht.cluster.jobs import Job
from regrapht.cluster.ray_pool import run_on_ray
from regrapht.cluster.store import ResultStore
from regrapht.errors import InputError


def read_jobs(path: Path, cwd: Path) -> list[Job]:
    jobs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            words = shlex.split(line)
        except ValueError as error:
            raise InputError(f"not shell words: {error}", file=str(path), line=number) from error
        if len(words) < 3:
            raise InputError("a job needs NAME LOG PROGRAM [ARGS...]", file=str(path), line=number)
        name, log, *argv = words
        jobs.append(Job("command", cwd, name, argv=tuple(argv), log=Path(log).absolute()))
    names = [job.kernel for job in jobs]
    if len(set(names)) != len(names):
        raise InputError("two jobs have one name", file=str(path))
    return jobs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("jobs", type=Path)
    parser.add_argument("--store", type=Path, required=True, help="where finished jobs are kept")
    parser.add_argument("--status", type=Path, help="one line per job: NAME exit=RC")
    parser.add_argument("--ray", default="auto", metavar="ADDRESS")
    parser.add_argument("--gpus-per-job", type=float, default=1.0)
    parser.add_argument("--job-timeout", type=float, default=1800.0)
    parser.add_argument("--retries", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        jobs = read_jobs(args.jobs, Path.cwd())
        outcomes = run_on_ray(jobs, ResultStore(args.store).open(),
                              ClusterSettings(args.ray, args.job_timeout, args.retries, args.gpus_per_job),
                              report=lambda line: print(line, file=sys.stderr, flush=True))
    except (InputError, OSError) as error:
        print(f"ray_jobs: error: {error}", file=sys.stderr)
        return 2
    lines = [f"{o.job.kernel} exit={o.result.get('rc')}" if o.result is not None else f"{o.job.kernel} failed: {o.reason}"
             for o in outcomes]
    if args.status is not None:
        with args.status.open("a", encoding="utf-8") as status:
            status.write("".join(f"{line}\n" for line in lines))
    return 0 if all(o.result is not None for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
