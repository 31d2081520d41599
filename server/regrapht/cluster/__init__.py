"""Running `regrapht eval` and `graph distill` jobs beyond one process: one job per (task,
kernel, strategy, seed), each the same code as a local run, on a Ray cluster with one GPU per job
(`ray_pool.py`), results kept idempotently on disk (`store.py`), progress with an ETA
(`progress.py`). Ray is an optional extra (`pip install regrapht[cluster]`), imported only by
`ray_pool.run_on_ray`."""
