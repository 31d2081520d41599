"""Search for faster kernels: MCGS over the reasoning graph, baselines, deterministic appliers,
model rewriting and the optimize pipeline (`optimize`)."""

from regrapht.search.options import STRATEGIES, SearchOptions
from regrapht.search.pipeline import BestVersion, KernelTarget, OptimizeResult, optimize
from regrapht.search.session import Progress

__all__ = ["STRATEGIES", "BestVersion", "KernelTarget", "OptimizeResult", "Progress", "SearchOptions", "optimize"]
