"""`CudaEvaluator`: the `Evaluator` of validate/types.py, for one kernel of one file and spec.

Owns the pipeline for a candidate: contract check (same kernel name and parameter list, else
"rejected") -> launch configuration evaluated with the spec's scalars -> nvcc (cached) ->
kernel lookup by mangled name -> differential check against the original in the GPU worker
(several seeds, the spec size and an odd size, repeated and reordered runs, poisoned outputs,
guarded buffers) -> timing (median of >= 20 runs, L2 flushed; one batch of 10 when a candidate
is already 3x slower than the original) -> an `Evaluation`. Without a device, compiled
candidates are "unverified" with reason "no CUDA device present" and never get a timing.
All GPU work holds the GPU lock; drawing the random inputs (host work) is done before it is taken.

One evaluator is one worker workspace (worker_protocol.WorkspacePlan): its seeds are drawn from a
random base seed (`session_seed`, recorded in each evaluation's details) when it is made, so the
inputs are fresh random inputs that the candidates of this evaluator share; the worker keeps them, and the original's outputs, on the
device and compares there (checker.py) - that is what makes a check cost milliseconds.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import msgpack

from regrapht.errors import InputError
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import KernelSpec, Spec
from regrapht.spec.proofs import check_against_source, odd_size_refuted
from regrapht.spec.resolve import ResolvedKernel, odd_size_variant, resolve, uses_files
from regrapht.validate.checker import CHECK_KERNELS
from regrapht.validate.compile_db import NO_FLAGS, CompileFlags
from regrapht.validate.compiler import DEFAULT_ARCH, Compiler, CompileResult, KernelResources
from regrapht.validate.gpu_lock import GpuLock, GpuLockTimeout
from regrapht.validate.mangle import find_entry
from regrapht.validate.measurements import MeasurementCache, measurement_identity
from regrapht.validate.occupancy import Occupancy, occupancy
from regrapht.validate.signature import contract_violation
from regrapht.validate.types import Candidate, Evaluation, Outcome, Timing
from regrapht.validate.worker import GpuWorker, WorkerFailure
from regrapht.validate.worker_protocol import (
    Check,
    CheckVerdict,
    DeviceInfo,
    Failed,
    HelloReply,
    InputPlan,
    ModuleRef,
    Prepare,
    Time,
    Timed,
    Trial,
    WorkspacePlan,
)

log = logging.getLogger(__name__)

NO_DEVICE = "no CUDA device present"


class OriginalCompileError(InputError):
    """The original file does not compile: `bench` exits 1 for it rather than 2 (bad input)."""


@dataclass(frozen=True)
class CheckSettings:
    seeds: tuple[int, ...] = (1, 2, 3, 4)  # offsets from the inputs' base seed, at the spec size
    odd_size: bool = True  # also check a size that is not a multiple of the block size
    odd_size_cap: int = 1 << 20
    repeat_first_seed: bool = True  # re-run seed 1 last: caching across calls / launch order
    session_seed: int | None = None  # base seed of the inputs; None draws a random one per evaluator
    check_timeout_s: float = 60.0
    time_timeout_s: float = 120.0
    warmup: int = 3
    min_runs: int = 20
    max_runs: int = 200
    target_timing_ms: float = 150.0  # wall time of the timed runs after min_runs (stop once spent)
    faster_margin: float = 0.02  # "faster" means a speedup above 1 + margin
    slow_cutoff: float = 3.0  # a candidate this many times slower than the original: one timing batch
    lock_timeout_s: float | None = 600.0


def resources_dict(resources: KernelResources) -> dict[str, int]:
    """The CLI contract's `resources` object."""
    return {"registers": resources.registers, "shared_bytes": resources.shared_static_bytes,
            "spill_bytes": resources.spill_bytes, "local_bytes": resources.local_bytes}


def occupancy_for(arch: str, resources: KernelResources, resolved: ResolvedKernel) -> Occupancy | None:
    return occupancy(arch, threads_per_block=resolved.threads_per_block, registers=resources.registers,
                     shared_static=resources.shared_static_bytes, shared_dynamic=resolved.shared_bytes)


@dataclass(frozen=True)
class Verdict:
    """Why a compiled candidate gets no timing: the outcome and its reason."""

    outcome: Outcome
    reason: str
    worker_failed: bool = False  # the worker died, hung or the lock timed out: not the kernel's doing


def timing_from(times_ms: Sequence[float]) -> Timing:
    ordered = sorted(times_ms)

    def pct(p: float) -> float:
        if len(ordered) == 1:
            return ordered[0]
        pos = p * (len(ordered) - 1)
        low, high = math.floor(pos), math.ceil(pos)
        return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)

    return Timing(median_ms=pct(0.5), p10_ms=pct(0.1), p90_ms=pct(0.9), runs=len(ordered))


class CudaEvaluator:
    """Validates candidates of `kernel_name` against `original_source` under `spec`.

    Construction compiles the original (an `InputError` if it does not compile or the kernel
    is not found with the spec's parameter types). `worker=None` means no device.
    """

    def __init__(
        self,
        original_source: str,
        kernel_name: str,
        spec: Spec | KernelSpec,
        *,
        arch: str | None,
        worker: GpuWorker | None,
        cache_dir: Path,
        compiler: Compiler | None = None,
        file: str = "original.cu",
        include_dirs: Sequence[str] = (),
        flags: CompileFlags = NO_FLAGS,
        gpu_lock: GpuLock | None = None,
        settings: CheckSettings | None = None,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        measurements: MeasurementCache | None = None,
    ) -> None:
        self.kernel = spec.kernel(kernel_name) if isinstance(spec, Spec) else spec
        self.file = file
        self.include_dirs = tuple(include_dirs)
        self.flags = flags  # the project's (compile_db.py): the original and every candidate compile with them
        self.cache_dir = cache_dir
        self.settings = settings or CheckSettings()
        self.compiler = compiler or Compiler.from_environment(env if env is not None else os.environ, cache_dir)
        self.clock = clock
        self.gpu_lock = gpu_lock or GpuLock.in_dir(cache_dir)
        self.worker = worker
        hello = HelloReply.from_wire(worker.info()) if worker is not None else HelloReply(None, NO_DEVICE)
        self.device_info: DeviceInfo | None = hello.device
        # the same as a map: what search.appliers.DeviceLimits.of reads
        self.device: dict[str, Any] | None = hello.device.to_wire() if hello.device else None
        self.no_device_reason = NO_DEVICE if hello.device is None else ""
        if hello.device is None and worker is not None and hello.reason:
            self.no_device_reason = f"{NO_DEVICE} ({hello.reason})"
        self.gpu_name: str | None = hello.device.name if hello.device else None
        self.arch: str = arch or (hello.device.arch if hello.device else DEFAULT_ARCH)
        self.params = tuple(a.ctype for a in self.kernel.args)
        self.resolved = resolve(self.kernel)
        # never time a spec the kernel's own accesses prove wrong (spec/proofs.py)
        check_against_source(self.kernel, original_source,
                             device_memory=hello.device.total_bytes if hello.device else None)
        overrides = odd_size_variant(self.kernel, self.resolved, cap=self.settings.odd_size_cap) \
            if self.settings.odd_size else None
        refuted = None if overrides is None else odd_size_refuted(self.kernel, original_source, overrides)
        if refuted is not None:  # the original itself overruns there: it only supports the spec's sizes
            log.info("%s: no odd size check: %s", self.kernel.name, refuted)
            overrides = None
        self.odd_overrides = overrides
        self.original = self.compiler.compile(original_source, arch=self.arch, file=file,
                                              include_dirs=self.include_dirs, flags=flags)
        if not self.original.ok:
            error = self.original.errors[0] if self.original.errors else None
            message = error.message if error else self.original.first_error()
            if flags.empty and "No such file or directory" in message:
                message += (" (compiled without project flags: give the project's compile_commands.json"
                            " with --compile-commands or regrapht.compileCommands, or -I/-D or"
                            " regrapht.extraCompilerArgs)")
            raise OriginalCompileError(f"the original does not compile: {message}",
                                       file=error.file if error else file, line=error.line if error else None)
        entry = find_entry(self.original.entries(), self.kernel.name, self.params, self.compiler.demangle)
        if entry is None:
            raise InputError(
                f"kernel {self.kernel.signature()} not found in the compiled original "
                f"(entries: {', '.join(k.name for k in self.original.kernels.values()) or 'none'})",
                file=file, key=self.kernel.key(".name"))
        self.original_entry = entry
        self._baseline: Timing | None = None
        self._baseline_done = False
        seed = self.settings.session_seed
        self.session_seed: int = secrets.randbits(31) if seed is None else int(seed)
        self._workspace: WorkspacePlan | None = None
        self._inputs_prepared = False
        # shared with other evaluators of the same kernel (measurements.py); the inputs' seed
        # is not part of the identity: a verdict is reused for the identical source only
        self.measurements = measurements
        # the original's compile key: its source, flags and every header it included
        self.identity = measurement_identity(
            f"{original_source}\0{self.original.key}", repr((self.kernel, replace(self.settings, session_seed=None))), self.arch, self.gpu_name)

    # -- what needs no device -----------------------------------------------------------------
    def resources(self) -> KernelResources:
        return self.original.kernels[self.original_entry]

    def occupancy(self) -> Occupancy | None:
        return occupancy_for(self.arch, self.resources(), self.resolved)

    @property
    def has_device(self) -> bool:
        return self.worker is not None and self.device is not None

    def hold_gpu(self) -> AbstractContextManager[None]:
        """The GPU lock for work beside this evaluator's (on-GPU generation), same timeout."""
        return self.gpu_lock.hold(self.settings.lock_timeout_s)

    # -- the protocol -------------------------------------------------------------------------
    def baseline(self) -> Timing | None:
        """The original's timing at the spec size (None without a device); measured once."""
        if not self._baseline_done:
            self._baseline_done = True
            shared = self.measurements.baseline(self.identity) if self.measurements is not None else None
            if shared is not None:
                self._baseline = shared
            elif self.has_device:
                result = self._time(self.original, self.original_entry, self.resolved)
                self._baseline = result if isinstance(result, Timing) else None
                if isinstance(result, Verdict) and not result.worker_failed:
                    raise InputError(f"the original kernel failed on the GPU: {result.reason}", file=self.file)
                if self._baseline is not None and self.measurements is not None:
                    self.measurements.put_baseline(self.identity, self._baseline)
        return self._baseline

    def evaluate(self, candidate: Candidate) -> Evaluation:
        return self.evaluate_many([candidate])[0]

    def evaluate_many(self, candidates: Sequence[Candidate]) -> list[Evaluation]:
        """Evaluate several candidates: compiled in parallel across cores, checked one by one;
        a candidate the shared `measurements` already hold is not compiled, checked or timed again."""
        prepared: list[Evaluation | ResolvedKernel] = []
        to_compile: list[int] = []
        for i, candidate in enumerate(candidates):
            reused = self.measurements.get(self.identity, candidate) if self.measurements is not None else None
            early = reused if reused is not None else self._precheck(candidate)
            prepared.append(early)
            if not isinstance(early, Evaluation):
                to_compile.append(i)
        compiled = self.compiler.compile_many(
            [(candidates[i].source, "candidate.cu") for i in to_compile], arch=self.arch,
            include_dirs=self.include_dirs, flags=self.flags)
        results: list[Evaluation] = []
        by_index = dict(zip(to_compile, compiled, strict=True))
        for i, candidate in enumerate(candidates):
            early = prepared[i]
            if isinstance(early, Evaluation):
                results.append(early)
                continue
            evaluation = self._finish(candidate, by_index[i], early)
            if self.measurements is not None:
                self.measurements.put(self.identity, candidate, evaluation)
            results.append(evaluation)
        return results

    # -- steps --------------------------------------------------------------------------------
    def _precheck(self, candidate: Candidate) -> Evaluation | ResolvedKernel:
        violation = contract_violation(candidate.source, self.kernel.name, self.params)
        if violation is not None:
            return Evaluation("rejected", violation)
        try:
            resolved = resolve(self.kernel, launch=candidate.launch)
        except InputError as error:
            return Evaluation("rejected", f"launch configuration: {error}")
        return resolved

    def _finish(self, candidate: Candidate, compiled: CompileResult, resolved: ResolvedKernel) -> Evaluation:
        details: dict[str, object] = {"compile_s": round(compiled.seconds, 3), "compile_cached": compiled.cached,
                                      "session_seed": self.session_seed}
        if not compiled.ok:
            return Evaluation("compile_error", compiled.first_error(), details=details)
        entry = find_entry(compiled.entries(), self.kernel.name, self.params, self.compiler.demangle)
        if entry is None:
            entry = find_entry(compiled.entries(), self.kernel.name, self.params, self.compiler.demangle,
                               ignore_template_args=True)
        if entry is None:
            return Evaluation("rejected", f"the compiled candidate has no kernel {self.kernel.signature()}",
                              details=details)
        resources = compiled.kernels[entry]
        occ = occupancy_for(self.arch, resources, resolved)
        details.update(entry=entry, resources=resources_dict(resources),
                       occupancy=None if occ is None else round(occ.occupancy, 4),
                       launch={"grid": list(resolved.grid), "block": list(resolved.block),
                               "shared_bytes": resolved.shared_bytes})
        if occ is not None and occ.blocks_per_sm == 0:
            return Evaluation("crashed", f"cannot launch: {occ.limited_by}", details=details)
        if not self.has_device:
            return Evaluation("unverified", self.no_device_reason, details=details)
        started = self.clock()
        verdict = self._check(compiled, entry, candidate.launch)
        details["check_s"] = round(self.clock() - started, 3)
        if verdict is not None:
            return Evaluation(verdict.outcome, verdict.reason, details=details)
        details["checked"] = self.checked_with()
        baseline = self.baseline()
        started = self.clock()
        timed = self._time(compiled, entry, resolved)
        details["time_s"] = round(self.clock() - started, 3)
        if isinstance(timed, Verdict):
            return Evaluation(timed.outcome, timed.reason, details=details)
        speedup = baseline.median_ms / timed.median_ms if baseline and timed.median_ms > 0 else None
        outcome: Outcome = "faster" if speedup is not None and speedup > 1 + self.settings.faster_margin else "slower"
        details["baseline_ms"] = baseline.median_ms if baseline else None
        return Evaluation(outcome, "", timing=timed, speedup=speedup, details=details)

    def probe_request(self, candidate: Candidate, *, at_spec_size: bool = False) -> Time | Evaluation:
        """The worker request that runs `candidate` twice (a warm-up and one timed run) on the
        smallest input set of the check (the odd size when there is one; the spec's own with
        `at_spec_size`), and nothing else: for a tool that watches the runs from outside the
        worker (compute-sanitizer, Nsight Compute). An `Evaluation` when the candidate cannot get
        that far (contract, launch, compile)."""
        early = self._precheck(candidate)
        if isinstance(early, Evaluation):
            return early
        compiled = self.compiler.compile(candidate.source, arch=self.arch, file="candidate.cu",
                                         include_dirs=self.include_dirs, flags=self.flags)
        if not compiled.ok or compiled.cubin is None:
            return Evaluation("compile_error", compiled.first_error())
        entry = find_entry(compiled.entries(), self.kernel.name, self.params, self.compiler.demangle) or \
            find_entry(compiled.entries(), self.kernel.name, self.params, self.compiler.demangle,
                       ignore_template_args=True)
        if entry is None:
            return Evaluation("rejected", f"the compiled candidate has no kernel {self.kernel.signature()}")
        plan, overrides = self._input_sets()[0 if at_spec_size else -1]
        try:
            resolved = resolve(self.kernel, overrides=overrides, launch=candidate.launch)
        except InputError as error:
            return Evaluation("rejected", f"launch configuration at the check sizes: {error}")
        return Time(self.workspace(), plan.key, ModuleRef(compiled.cubin, entry), resolved.to_wire(),
                    1, 1, 1, 0.0, None)

    def checked_with(self) -> str:
        """What a passed check compared, for the editor's title: "4 seeds, odd size"."""
        sets = self._input_sets()
        seeds = sum(1 for _plan, overrides in sets if overrides is None)
        words = [f"{seeds} seed{'s' if seeds != 1 else ''}"]
        if any(overrides is not None for _plan, overrides in sets):
            words.append("odd size")
        return ", ".join(words)

    def _input_sets(self) -> list[tuple[InputPlan, dict[str, int] | None]]:
        """(input set, size overrides) of the workspace, spec size first."""
        sets: list[tuple[InputPlan, dict[str, int] | None]] = []
        base = self.session_seed
        spec_size = self.resolved.to_wire()
        seeds = self.settings.seeds
        if uses_files(self.kernel) and not any(b.init is not None and b.init.random for b in self.resolved.buffers):
            seeds = seeds[:1]  # captured data (files) only: more seeds would be the same data again
        for offset in seeds:
            sets.append((InputPlan(f"seed {base + offset}", spec_size, base + offset), None))
        if self.odd_overrides is not None:
            seed = base + max(self.settings.seeds, default=0) + 100
            odd = resolve(self.kernel, overrides=self.odd_overrides).to_wire()
            sets.append((InputPlan(f"seed {seed}, {self.odd_overrides}", odd, seed), self.odd_overrides))
        return sets

    def input_plan(self) -> list[InputPlan]:
        """The workspace's input sets: key, the original at that size, seed."""
        return [plan for plan, _overrides in self._input_sets()]

    def trial_plan(self, launch: LaunchConfig | None) -> list[Trial]:
        """The trials of one check, in order: input set, candidate wire kernel, label, runs.

        Consecutive launches see different inputs (seeds, then the odd size), and the first
        seed comes back last with two runs: a candidate that caches results across calls or
        depends on launch order fails there.
        """
        plans: list[Trial] = []
        for plan, overrides in self._input_sets():
            candidate = resolve(self.kernel, overrides=overrides, launch=launch)
            plans.append(Trial(plan.key, candidate.to_wire(), plan.key))
        if self.settings.repeat_first_seed and len(plans) > 1:
            first = plans[0]
            plans.append(Trial(first.input, first.candidate, f"{first.label} again, after the other trials", 2))
        return plans

    def workspace(self) -> WorkspacePlan:
        """The worker workspace (made once): the original, the comparison kernels, the input sets."""
        if self._workspace is None:
            checker = self.compiler.compile(CHECK_KERNELS, arch=self.arch, file="regrapht_check.cu")
            if not checker.ok or checker.cubin is None:
                raise InputError(f"the comparison kernels do not compile for {self.arch}: {checker.first_error()}")
            assert self.original.cubin is not None
            inputs = self.input_plan()
            identity = msgpack.packb([hashlib.sha256(self.original.cubin).hexdigest(), self.original_entry,
                                      hashlib.sha256(checker.cubin).hexdigest(), [i.to_wire() for i in inputs]])
            self._workspace = WorkspacePlan(hashlib.sha256(identity).hexdigest(),
                                            ModuleRef(self.original.cubin, self.original_entry), checker.cubin,
                                            tuple(inputs))
        return self._workspace

    def _prepare_inputs(self) -> None:
        """Have the worker draw the workspace's inputs on the host before the GPU lock is taken:
        other processes keep the GPU meanwhile. Once per evaluator; a failure here is left for
        the locked request that follows to report (it generates whatever is missing itself)."""
        assert self.worker is not None
        if not self._inputs_prepared:
            self._inputs_prepared = True
            self.worker.request(Prepare(self.workspace()), timeout_s=self.settings.check_timeout_s)

    def _check(self, compiled: CompileResult, entry: str, launch: LaunchConfig) -> Verdict | None:
        """None when the candidate matched the original on every trial, else the verdict."""
        assert self.worker is not None and compiled.cubin is not None
        self._prepare_inputs()
        try:
            trials = self.trial_plan(launch)
        except InputError as error:
            return Verdict("rejected", f"launch configuration at the check sizes: {error}")
        request = Check(self.workspace(), ModuleRef(compiled.cubin, entry), tuple(trials))
        try:
            with self.gpu_lock.hold(self.settings.lock_timeout_s):
                reply = self.worker.request(request, timeout_s=self.settings.check_timeout_s)
        except GpuLockTimeout as error:
            return Verdict("timeout", str(error))
        if isinstance(reply, WorkerFailure):
            return Verdict(reply.kind, reply.reason)
        if isinstance(reply, CheckVerdict):
            if reply.status == "ok":
                return None
            if reply.status == "wrong":
                return Verdict("wrong", reply.reason)
            raise InputError(f"the original kernel failed on the GPU: {reply.reason}", file=self.file)
        return Verdict("crashed", reply.reason if isinstance(reply, Failed) else f"unexpected worker reply {reply!r}")

    def _time(self, compiled: CompileResult, entry: str, resolved: ResolvedKernel) -> Timing | Verdict:
        """The timing, or the verdict: "timeout"/"crashed" when the worker failed, "wrong" when
        the timed runs wrote into the workspace's cached buffers, else "crashed"."""
        assert self.worker is not None and compiled.cubin is not None
        self._prepare_inputs()
        workspace = self.workspace()
        slow_ms = None if self._baseline is None else self._baseline.median_ms * self.settings.slow_cutoff
        request = Time(workspace, workspace.inputs[0].key, ModuleRef(compiled.cubin, entry), resolved.to_wire(),
                       self.settings.warmup, self.settings.min_runs, self.settings.max_runs,
                       self.settings.target_timing_ms, slow_ms)
        try:
            with self.gpu_lock.hold(self.settings.lock_timeout_s):
                reply = self.worker.request(request, timeout_s=self.settings.time_timeout_s)
        except GpuLockTimeout as error:
            return Verdict("timeout", str(error), worker_failed=True)
        if isinstance(reply, WorkerFailure):
            return Verdict(reply.kind, reply.reason, worker_failed=True)
        if isinstance(reply, Timed):
            if reply.status == "ok":
                return timing_from(reply.times_ms)
            return Verdict("wrong", reply.reason or "timing failed")
        return Verdict("crashed", reply.reason if isinstance(reply, Failed) else "timing failed")
