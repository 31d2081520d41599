"""`run_on_ray` on a real local Ray cluster that declares two logical GPUs (no GPU needed):
one job per GPU at a time, a worker killed mid-job retried, a hung job timed out with its worker
killed, a re-run that skips what finished, and the merged outcomes in job order. The job runners
are the doubles in tests/support/cluster_doubles.py; tests/e2e/test_ray_eval.py runs the real
`regrapht eval --ray`."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from tests.support import cluster_doubles

from regrapht.app.optimize import OptimizeOptions
from regrapht.cli import main
from regrapht.cluster import ray_pool
from regrapht.cluster.config import ClusterSettings
from regrapht.cluster.jobs import Job
from regrapht.cluster.ray_pool import run_on_ray
from regrapht.cluster.store import ResultStore
from regrapht.errors import InputError

ray = pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.xdist_group("ray")  # one local Ray per worker process at a time


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    # the workers import the doubles by module path: the repository root on their PYTHONPATH
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), saved) if p)
    # address="local": a cluster of its own, even where another runs on this machine
    ray.init(address="local", num_cpus=2, num_gpus=2, include_dashboard=False, configure_logging=False,
             object_store_memory=80 * 1024 * 1024)
    try:
        yield
    finally:
        ray.shutdown()
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def jobs(folder: Path, names: list[str]) -> list[Job]:
    folder.mkdir(exist_ok=True)
    return [Job("eval", folder, name, "rules", 2, seed, OptimizeOptions()) for seed, name in enumerate(names)]


def runs(folder: Path, job: Job) -> list[str]:
    path = folder / f"{job.kernel}-{job.seed}.runs"
    return path.read_text(encoding="utf-8").split("\n")[:-1] if path.exists() else []


def test_jobs_run_one_per_gpu_and_come_back_in_order(local_ray: None, tmp_path: Path) -> None:
    todo = jobs(tmp_path / "t", [f"k{i}" for i in range(6)])
    lines: list[str] = []
    outcomes = run_on_ray(todo, ResultStore(tmp_path / "jobs").open(), ClusterSettings(),
                          runner=cluster_doubles.echo, report=lines.append)
    assert [o.job for o in outcomes] == todo
    assert all(o.result is not None and not o.reused for o in outcomes)
    assert {str(o.result["gpus"]) for o in outcomes if o.result} <= {"0", "1"}  # one GPU each
    assert lines[-1].endswith("ray: 6/6 done, 0 failed, 0 running, 0 queued; ETA 0m00s")
    assert all(" running" in line for line in lines) and len(lines) == 6


def test_a_killed_worker_is_retried(local_ray: None, tmp_path: Path) -> None:
    todo = jobs(tmp_path / "t", ["a", "b"])
    outcomes = run_on_ray(todo, ResultStore(tmp_path / "jobs").open(), ClusterSettings(retries=2),
                          runner=cluster_doubles.crash_once, report=lambda _: None)
    assert all(o.result is not None for o in outcomes)
    for job in todo:
        assert [r.split()[0] for r in runs(tmp_path / "t", job)] == ["crash", "ran"]


def test_a_job_that_always_kills_its_worker_fails_after_its_retries(local_ray: None, tmp_path: Path) -> None:
    todo = jobs(tmp_path / "t", ["bad"])
    store = ResultStore(tmp_path / "jobs").open()
    [outcome] = run_on_ray(todo, store, ClusterSettings(retries=1), runner=cluster_doubles.always_crash,
                           report=lambda _: None)
    assert outcome.result is None and "Worker" in outcome.reason
    assert len(runs(tmp_path / "t", todo[0])) == 2  # the first try and one retry
    assert store.done(todo[0]) is None and (tmp_path / "jobs" / f"{todo[0].key}.failed.json").is_file()


def test_a_hung_job_is_timed_out_the_others_finish_and_a_rerun_skips_them(local_ray: None, tmp_path: Path) -> None:
    todo = jobs(tmp_path / "t", ["hang", "x", "y"])
    store_dir = tmp_path / "jobs"
    lines: list[str] = []
    # the limit counts from the job's submission, worker start-up included: generous on a busy VM
    first = run_on_ray(todo, ResultStore(store_dir).open(), ClusterSettings(job_timeout_s=15),
                       runner=cluster_doubles.hang_if_named_hang, report=lines.append)
    assert first[0].result is None and first[0].reason.startswith("timed out after 15 s")
    assert first[1].result is not None and first[2].result is not None
    assert any("hang" in line and "FAILED: timed out" in line for line in lines)
    lines.clear()
    # the same command again, the hung job now fixed (the echo runner): only it runs
    second = run_on_ray(todo, ResultStore(store_dir).open(), ClusterSettings(),
                        runner=cluster_doubles.echo, report=lines.append)
    assert [o.reused for o in second] == [False, True, True]
    assert second[1].result == first[1].result and second[0].result is not None
    assert len(runs(tmp_path / "t", todo[1])) == 1
    assert lines[0].startswith("ray: 2/3 done (2 from an earlier run), 0 failed, 0 running, 1 queued")
    assert len(lines) == 2 and "3/3 done (2 from an earlier run)" in lines[1]


def test_a_cluster_without_gpus_is_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = SimpleNamespace(is_initialized=lambda: True, cluster_resources=lambda: {"CPU": 8.0})
    monkeypatch.setattr(ray_pool, "import_ray", lambda: fake)
    with pytest.raises(InputError, match="declares no GPU"):
        run_on_ray(jobs(tmp_path / "t", ["a"]), ResultStore(tmp_path / "jobs").open(), ClusterSettings())


TASKS = [ROOT / "bench" / "corpus" / "train" / name for name in ("axpby_int", "col_max_int")]


def comparable(report: dict[str, object]) -> list[dict[str, object]]:
    rows = report["tasks"]
    assert isinstance(rows, list)
    seconds = ("compile_s", "check_s", "time_s")  # each run's own clock, as wall_s

    def same_facts(row: dict[str, object]) -> dict[str, object]:
        judged = row.get("judged")
        facts = {k: v for k, v in row.items() if k not in ("wall_s", "first_faster_s", "judged")}
        if isinstance(judged, list):
            facts["judged"] = [{k: v for k, v in c.items() if k not in seconds} for c in judged]
        return facts

    return [same_facts(row) for row in rows]


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_eval_on_ray_gives_the_local_report(local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The real thing: `regrapht eval --ray` on the local cluster (real jobs: compile with nvcc,
    search, re-check) merges the same report as the local path; a re-run skips every job."""
    monkeypatch.setenv("REGRAPHT_CACHE_DIR", str(tmp_path / "cache"))
    common = [*map(str, TASKS), "--strategy", "rules", "--budget", "2", "--no-model"]
    # the local path in its own process, which must never import Ray
    local_run = ("import sys; from regrapht.cli import main; rc = main(sys.argv[1:]); "
                 "assert 'ray' not in sys.modules and 'regrapht.cluster.ray_pool' not in sys.modules; sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", local_run, "eval", *common, "--out", str(tmp_path / "local")],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert main(["eval", *common, "--out", str(tmp_path / "ray"), "--ray"]) == 0
    local = json.loads((tmp_path / "local" / "report.json").read_text())
    on_ray = json.loads((tmp_path / "ray" / "report.json").read_text())
    assert comparable(on_ray) == comparable(local) and len(comparable(local)) == 2
    assert on_ray["totals"] == local["totals"]
    assert len(list((tmp_path / "ray" / "jobs").glob("eval-*.json"))) == 2
    capsys.readouterr()
    assert main(["eval", *common, "--out", str(tmp_path / "ray"), "--ray"]) == 0
    assert "ray: 2/2 done (2 from an earlier run), 0 failed, 0 running, 0 queued" in capsys.readouterr().err
    assert comparable(json.loads((tmp_path / "ray" / "report.json").read_text())) == comparable(local)


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_graph_distill_on_ray_runs_a_job_per_seed_and_a_rerun_skips_them(
        local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The real `regrapht graph distill --ray`: one job per (task, kernel, seed) on the local
    cluster, each a real search (nvcc compiles its candidates); without a GPU none is verified, so
    no trajectory is written and the exit status is the local path's (1); a re-run finds both
    jobs in OUT.jsonl.jobs/ and runs neither."""
    monkeypatch.setenv("REGRAPHT_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "distilled.jsonl"
    command = ["graph", "distill", str(TASKS[0]), "-o", str(out), "--strategy", "rules", "--budget", "2",
               "--no-model", "--seeds", "0", "1", "--ray"]
    assert main(command) == 1
    err = capsys.readouterr().err
    assert "ray: 2/2 done, 0 failed, 0 running, 0 queued" in err, err
    assert out.read_text(encoding="utf-8") == ""
    results = sorted((tmp_path / "distilled.jsonl.jobs").glob("distill-*.json"))
    assert len(results) == 2 and not list((tmp_path / "distilled.jsonl.jobs").glob("*.failed.json"))
    assert all(json.loads(r.read_text(encoding="utf-8"))["result"]["records"] == [] for r in results)
    assert main(command) == 1
    assert "ray: 2/2 done (2 from an earlier run), 0 failed, 0 running, 0 queued" in capsys.readouterr().err


def test_bench_command_jobs_run_on_ray_with_their_status_and_logs(local_ray: None, tmp_path: Path) -> None:
    """bench/ray_jobs.py, the bench scripts' scheduler: shell-word job lines, each a command run on a
    GPU share with its output in its log; a failing command is a finished job with its exit status."""
    spec = importlib.util.spec_from_file_location("ray_jobs", ROOT / "bench" / "ray_jobs.py")
    assert spec is not None and spec.loader is not None
    ray_jobs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ray_jobs)
    py = shlex.quote(sys.executable)
    lines = [f"ok {tmp_path}/ok.log {py} -c 'import os; print(\"gpu\", os.environ[\"CUDA_VISIBLE_DEVICES\"])'",
             f"bad {tmp_path}/bad.log {py} -c 'import sys; print(\"no\"); sys.exit(3)'"]
    (tmp_path / "jobs.txt").write_text("# a comment\n" + "\n".join(lines) + "\n", encoding="utf-8")
    common = [str(tmp_path / "jobs.txt"), "--store", str(tmp_path / "store"), "--status", str(tmp_path / "status"),
              "--gpus-per-job", "0.5"]
    assert ray_jobs.main(common) == 0
    assert (tmp_path / "status").read_text(encoding="utf-8") == "ok exit=0\nbad exit=3\n"
    assert (tmp_path / "ok.log").read_text(encoding="utf-8").strip() in ("gpu 0", "gpu 1")
    assert (tmp_path / "bad.log").read_text(encoding="utf-8") == "no\n"
    assert ray_jobs.main(common) == 0  # again: both found in the store, neither runs
    assert (tmp_path / "bad.log").read_text(encoding="utf-8") == "no\n"
    (tmp_path / "jobs.txt").write_text("lonely\n", encoding="utf-8")
    assert ray_jobs.main(common) == 2  # bad input names the line
