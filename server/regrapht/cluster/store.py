"""`ResultStore`: the finished jobs of a run, one JSON file each under one folder.

A job's result is written once, atomically (a temporary file renamed over), by the driver when the
job finishes; a re-run of the same command finds it and skips the job. A failed job (a crash
past its retries, a time-out) is recorded beside as `<key>.failed.json` for the report but is
not "done": the next run tries it again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from regrapht.cluster.jobs import Job
from regrapht.errors import InputError


@dataclass(frozen=True)
class ResultStore:
    folder: Path

    def open(self) -> ResultStore:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(f"cannot create the jobs folder: {error.strerror}", file=str(self.folder)) from error
        return self

    def _path(self, job: Job, suffix: str = ".json") -> Path:
        return self.folder / f"{job.key}{suffix}"

    def done(self, job: Job) -> dict[str, object] | None:
        """The job's result from an earlier run, or None; an unreadable one is not done."""
        path = self._path(job)
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        result = data.get("result") if isinstance(data, dict) else None
        return result if isinstance(result, dict) else None

    def write(self, job: Job, result: dict[str, object]) -> None:
        self._write(self._path(job), {"job": job.label, "result": result})
        self._path(job, ".failed.json").unlink(missing_ok=True)

    def write_failure(self, job: Job, reason: str) -> None:
        self._write(self._path(job, ".failed.json"), {"job": job.label, "reason": reason})

    def _write(self, path: Path, data: dict[str, object]) -> None:
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
        os.replace(partial, path)
