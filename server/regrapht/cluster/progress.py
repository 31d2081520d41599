"""`Progress`: what a cluster run has done, what runs, what waits, and when it should end.

Pure bookkeeping (the driver reports events, `line()` renders them): the ETA is the mean time
of the jobs finished in this run times the work left, spread over the run's GPU slots."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Progress:
    total: int
    slots: int
    skipped: int = 0  # done in an earlier run
    done: int = 0
    failed: int = 0
    running: int = 0
    seconds: list[float] = field(default_factory=list)

    def started(self) -> None:
        self.running += 1

    def finished(self, seconds: float, *, ok: bool) -> None:
        self.running -= 1
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.seconds.append(seconds)

    @property
    def queued(self) -> int:
        return self.total - self.skipped - self.done - self.failed - self.running

    def eta_s(self) -> float | None:
        if not self.seconds:
            return None
        mean = sum(self.seconds) / len(self.seconds)
        left = self.queued + self.running / 2  # a running job is, on average, half done
        return mean * left / max(1, self.slots)

    def line(self) -> str:
        eta = self.eta_s()
        shown = "" if eta is None else f"; ETA {int(eta) // 60}m{int(eta) % 60:02d}s"
        earlier = f" ({self.skipped} from an earlier run)" if self.skipped else ""
        return (f"ray: {self.done + self.skipped}/{self.total} done{earlier}, {self.failed} failed, "
                f"{self.running} running, {self.queued} queued{shown}")
