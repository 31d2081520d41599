"""The cluster's bookkeeping without Ray: progress lines and their ETA, and the result store that
makes a re-run skip finished jobs (and retry failed ones)."""

from __future__ import annotations

from pathlib import Path

from regrapht.app.optimize import OptimizeOptions
from regrapht.cluster.jobs import Job, job_env
from regrapht.cluster.progress import Progress
from regrapht.cluster.store import ResultStore


def job(tmp_path: Path, seed: int = 0, *, budget: int = 12) -> Job:
    return Job("eval", tmp_path / "axpy", "axpy", "mcgs", budget, seed, OptimizeOptions())


def test_progress_counts_and_estimates_the_rest() -> None:
    progress = Progress(total=10, slots=2, skipped=2)
    assert progress.queued == 8 and "ETA" not in progress.line()
    for _ in range(3):
        progress.started()
    progress.finished(60.0, ok=True)
    progress.finished(20.0, ok=False)
    assert (progress.done, progress.failed, progress.running, progress.queued) == (1, 1, 1, 5)
    # mean 40 s x (5 queued + 1 running / 2) / 2 slots = 110 s
    assert progress.eta_s() == 110.0
    assert progress.line() == ("ray: 3/10 done (2 from an earlier run), 1 failed, 1 running, 5 queued; "
                               "ETA 1m50s")


def test_a_finished_job_is_done_on_the_next_run_and_a_failed_one_is_not(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "jobs").open()
    first, second = job(tmp_path, 0), job(tmp_path, 1)
    assert store.done(first) is None
    store.write(first, {"kernel": "axpy", "best": None})
    store.write_failure(second, "timed out after 5 s")
    again = ResultStore(tmp_path / "jobs").open()
    assert again.done(first) == {"kernel": "axpy", "best": None}
    assert again.done(second) is None
    assert (tmp_path / "jobs" / f"{second.key}.failed.json").is_file()
    again.write(second, {"kernel": "axpy"})  # the retry succeeded: its failure record goes
    assert not (tmp_path / "jobs" / f"{second.key}.failed.json").exists()
    assert not list((tmp_path / "jobs").glob(".*.tmp"))  # written atomically, no leftovers


def test_an_unreadable_result_is_not_done(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "jobs").open()
    (tmp_path / "jobs" / f"{job(tmp_path).key}.json").write_text("{not json", encoding="utf-8")
    assert store.done(job(tmp_path)) is None


def test_the_key_changes_with_anything_that_makes_the_job(tmp_path: Path) -> None:
    assert job(tmp_path).key == job(tmp_path).key
    assert job(tmp_path).key != job(tmp_path, budget=6).key
    assert job(tmp_path).key != Job("eval", tmp_path / "axpy", "axpy", "mcgs", 12, 0,
                                    OptimizeOptions(use_model=False)).key
    assert job(tmp_path).key.startswith("eval-axpy-axpy-mcgs-b12-s0-")


def test_a_job_on_a_gpu_gets_that_gpus_own_cache_dir(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "CUDA_VISIBLE_DEVICES": "3"}
    assert job_env(env)["REGRAPHT_CACHE_DIR"] == str(tmp_path / ".cache" / "regrapht" / "gpu-3")
    assert "REGRAPHT_CACHE_DIR" not in job_env({"HOME": str(tmp_path)})
    assert job_env({"REGRAPHT_CACHE_DIR": "/c", "CUDA_VISIBLE_DEVICES": "0,1"})["REGRAPHT_CACHE_DIR"] == "/c/gpu-0_1"
