"""The sanitizer gate without a GPU: compute-sanitizer's log read right, the tool found where
CUDA keeps it, and the search offering the next verified faster candidate when a tool reports
the first, or the answer marked unsanitized when the tool cannot run (tests/gpu/test_sanitizer_gpu.py
runs the real tool on a racy and an out-of-bounds candidate)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.unit.search.fakes import FakeEvaluator, search_request

from regrapht.app.messages import edit_title
from regrapht.search import KernelTarget, SearchTools, optimize
from regrapht.search.pipeline import MAX_SANITIZED
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.sanitizer import UnavailableSanitizer, errors_in, find_sanitizer, first_report
from regrapht.validate.types import Candidate, Sanitized

LOG = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at scale(const float *, float *, int)+0x90 in candidate.cu:5
=========     by thread (3,0,0) in block (16,0,0)
=========     Address 0x7f31c2a00a0c is out of bounds
=========     Saved host backtrace up to driver entry point at kernel launch time
=========
========= ERROR SUMMARY: 1 error
"""
SAXPY = (Path(__file__).resolve().parents[3] / "examples" / "saxpy.cu").read_text()
TARGET = KernelTarget(LaunchConfig(("(n + 99) / 100",), ("100",)))


def test_the_log_gives_the_count_and_the_first_finding() -> None:
    assert errors_in(LOG) == 1
    assert errors_in("========= ERROR SUMMARY: 0 errors\n") == 0
    # racecheck's own summary line (as compute-sanitizer 2025.x prints it on an H200)
    assert errors_in("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n") == 0
    assert errors_in("========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)\n") == 1
    assert errors_in("the tool died before its summary") is None
    assert first_report(LOG) == ("Invalid __global__ read of size 4 bytes; at scale(const float *, float *, int)+0x90 "
                                 "in candidate.cu:5; by thread (3,0,0) in block (16,0,0); Address 0x7f31c2a00a0c is "
                                 "out of bounds")


def test_the_tool_is_found_on_path_or_beside_nvcc(tmp_path: Path) -> None:
    bin_dir = tmp_path / "cuda" / "bin"
    bin_dir.mkdir(parents=True)
    for tool in ("nvcc", "compute-sanitizer"):
        (bin_dir / tool).write_text("#!/bin/sh\n")
        os.chmod(bin_dir / tool, 0o755)
    assert find_sanitizer({"PATH": str(bin_dir)}) == bin_dir / "compute-sanitizer"
    assert find_sanitizer({"PATH": str(tmp_path), "CUDA_HOME": str(tmp_path / "cuda")}) == bin_dir / "compute-sanitizer"
    assert find_sanitizer({"PATH": str(tmp_path)}) in (None, Path("/usr/local/cuda/bin/compute-sanitizer"))


class ScriptedSanitizer:
    """Reports the first `dirty` candidates it is given (a race in those variants), then none."""

    def __init__(self, dirty: int) -> None:
        self.dirty = dirty
        self.seen: list[Candidate] = []

    def sanitize(self, candidate: Candidate) -> Sanitized:
        self.seen.append(candidate)
        if len(self.seen) <= self.dirty:
            return Sanitized("dirty", ("memcheck",), "memcheck: Invalid __global__ read of size 4 bytes")
        return Sanitized("clean", ("memcheck", "racecheck", "synccheck"))


def speed(candidate: Candidate) -> float:
    """vectorized 3x, restrict 1.3x, anything else 0.9x."""
    return 3.0 if "vectorized_access" in candidate.techniques else 1.3 if "restrict_const" in candidate.techniques else 0.9


def test_a_reported_answer_gives_way_to_the_next_verified_faster_one() -> None:
    request = search_request(SAXPY, "saxpy", "rules", 24)
    plain = optimize(request, TARGET, SearchTools(FakeEvaluator(speed)))
    assert plain.best is not None and "vectorized_access" in plain.best.techniques and plain.best.sanitizer == ""
    sanitizer = ScriptedSanitizer(dirty=1)
    gated = optimize(request, TARGET, SearchTools(FakeEvaluator(speed), sanitizer=sanitizer))
    # another verified variant (its text or its launch differs)
    assert gated.best is not None and (gated.best.source, gated.best.launch) != (plain.best.source, plain.best.launch)
    assert (sanitizer.seen[0].source, sanitizer.seen[0].launch) == (plain.best.source, plain.best.launch)
    assert len(sanitizer.seen) == 2
    assert gated.best.sanitizer == "clean (memcheck, racecheck, synccheck)"
    assert gated.to_json()["best"]["sanitizer"] == gated.best.sanitizer
    assert edit_title("saxpy", 1.3, "H200", sanitizer=gated.best.sanitizer).endswith("on H200, verified, sanitizer: clean")


def test_when_every_answer_is_reported_nothing_is_offered() -> None:
    sanitizer = ScriptedSanitizer(dirty=1000)
    gated = optimize(search_request(SAXPY, "saxpy", "rules", 24), TARGET,
                     SearchTools(FakeEvaluator(speed), sanitizer=sanitizer))
    assert gated.best is None and "failed compute-sanitizer" in gated.reason and "Invalid __global__ read" in gated.reason
    assert len(sanitizer.seen) == MAX_SANITIZED  # a bounded number of tries, each seconds on the GPU


def test_an_unavailable_sanitizer_leaves_the_answer_marked_unsanitized() -> None:
    gated = optimize(search_request(SAXPY, "saxpy", "rules", 24), TARGET,
                     SearchTools(FakeEvaluator(speed), sanitizer=UnavailableSanitizer("compute-sanitizer not found")))
    assert gated.best is not None and gated.best.sanitizer == "not run: compute-sanitizer not found"
    assert edit_title("saxpy", 3.0, "H200", sanitizer=gated.best.sanitizer).endswith("on H200, verified, unsanitized")
