"""The typed protocol between the evaluator (parent) and the GPU worker process (child).

Requests and replies are frozen dataclasses; on the pipe each is a msgpack map (`to_wire`,
`request_from_wire`, `*.from_wire`), framed by worker.py. Both sides import this module: it
must stay light (stdlib only), because the worker runs on the GPU host under its own Python.

A kernel at one size (`KernelWire`) stays the plain map `ResolvedKernel.to_wire()` makes (names,
dtypes, counts, roles, inits, scalars, launch, tolerances): it is data the worker reads field by
field, owned by `regrapht.spec.resolve`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

KernelWire = dict[str, Any]  # ResolvedKernel.to_wire()


# ---------------------------------------------------------------------------------------------
# Requests


@dataclass(frozen=True)
class ModuleRef:
    """A compiled module and the kernel entry to run from it."""

    cubin: bytes
    entry: str

    def to_wire(self) -> dict[str, Any]:
        return {"cubin": self.cubin, "entry": self.entry}

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> ModuleRef:
        return cls(bytes(wire["cubin"]), str(wire["entry"]))


@dataclass(frozen=True)
class InputPlan:
    """One input set of a workspace: its key, the original at that size, the seed of its inputs."""

    key: str
    kernel: KernelWire
    seed: int

    def to_wire(self) -> dict[str, Any]:
        return {"key": self.key, "kernel": self.kernel, "seed": self.seed}

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> InputPlan:
        return cls(str(wire["key"]), dict(wire["kernel"]), int(wire["seed"]))


@dataclass(frozen=True)
class WorkspacePlan:
    """What the worker keeps on the device for one evaluator: the original kernel, the comparison
    kernels and the input sets (identified by `id`, a hash of all of it)."""

    id: str
    original: ModuleRef
    checker_cubin: bytes
    inputs: tuple[InputPlan, ...]

    def to_wire(self) -> dict[str, Any]:
        return {"id": self.id, "original": self.original.to_wire(), "checker_cubin": self.checker_cubin,
                "inputs": [i.to_wire() for i in self.inputs]}

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> WorkspacePlan:
        return cls(str(wire["id"]), ModuleRef.from_wire(wire["original"]), bytes(wire["checker_cubin"]),
                   tuple(InputPlan.from_wire(i) for i in wire["inputs"]))


@dataclass(frozen=True)
class Trial:
    """One step of a check: the candidate at the size of input set `input`, run `candidate_runs` times."""

    input: str
    candidate: KernelWire
    label: str
    candidate_runs: int = 1

    def to_wire(self) -> dict[str, Any]:
        return {"input": self.input, "candidate": self.candidate, "label": self.label,
                "candidate_runs": self.candidate_runs}

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> Trial:
        return cls(str(wire["input"]), dict(wire["candidate"]), str(wire["label"]), int(wire.get("candidate_runs", 1)))


@dataclass(frozen=True)
class Hello:
    op: Literal["hello"] = "hello"


@dataclass(frozen=True)
class Exit:
    op: Literal["exit"] = "exit"


@dataclass(frozen=True)
class Prepare:
    """Draw a workspace's missing inputs on the host (no device work: sent before the GPU lock)."""

    workspace: WorkspacePlan
    op: Literal["prepare"] = "prepare"


@dataclass(frozen=True)
class Check:
    """Run the candidate on every trial and compare with the original, on the device."""

    workspace: WorkspacePlan
    candidate: ModuleRef
    trials: tuple[Trial, ...]
    op: Literal["check"] = "check"


@dataclass(frozen=True)
class Time:
    """Time `module` on input set `input`: warm-up, then min_runs..max_runs runs of about
    target_ms in all; one batch when its median is already above `slow_ms`."""

    workspace: WorkspacePlan
    input: str
    module: ModuleRef
    kernel: KernelWire
    warmup: int
    min_runs: int
    max_runs: int
    target_ms: float
    slow_ms: float | None = None
    op: Literal["time"] = "time"


@dataclass(frozen=True)
class Peaks:
    """Measure the device's copy bandwidth and FMA rate with the `fma` kernel."""

    fma: ModuleRef
    op: Literal["peaks"] = "peaks"


Request = Hello | Exit | Prepare | Check | Time | Peaks


def to_wire(request: Request) -> dict[str, Any]:
    if isinstance(request, (Hello, Exit)):
        return {"op": request.op}
    if isinstance(request, Prepare):
        return {"op": request.op, "workspace": request.workspace.to_wire()}
    if isinstance(request, Check):
        return {"op": request.op, "workspace": request.workspace.to_wire(), "candidate": request.candidate.to_wire(),
                "trials": [t.to_wire() for t in request.trials]}
    if isinstance(request, Time):
        return {"op": request.op, "workspace": request.workspace.to_wire(), "input": request.input,
                "module": request.module.to_wire(), "kernel": request.kernel, "warmup": request.warmup,
                "min_runs": request.min_runs, "max_runs": request.max_runs, "target_ms": request.target_ms,
                "slow_ms": request.slow_ms}
    return {"op": request.op, "fma": request.fma.to_wire()}


class UnknownRequest(ValueError):
    """A request map with an unknown `op`."""


def request_from_wire(wire: dict[str, Any]) -> Request:
    """The request a map encodes; UnknownRequest for an unknown op, KeyError for a missing field."""
    op = wire.get("op")
    if op == "hello":
        return Hello()
    if op == "exit":
        return Exit()
    if op == "prepare":
        return Prepare(WorkspacePlan.from_wire(wire["workspace"]))
    if op == "check":
        return Check(WorkspacePlan.from_wire(wire["workspace"]), ModuleRef.from_wire(wire["candidate"]),
                     tuple(Trial.from_wire(t) for t in wire["trials"]))
    if op == "time":
        slow = wire.get("slow_ms")
        return Time(WorkspacePlan.from_wire(wire["workspace"]), str(wire["input"]), ModuleRef.from_wire(wire["module"]),
                    dict(wire["kernel"]), int(wire["warmup"]), int(wire["min_runs"]), int(wire["max_runs"]),
                    float(wire["target_ms"]), None if slow is None else float(slow))
    if op == "peaks":
        return Peaks(ModuleRef.from_wire(wire["fma"]))
    raise UnknownRequest(f"unknown op {op!r}")


# ---------------------------------------------------------------------------------------------
# Replies


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    cc: tuple[int, int]
    l2_bytes: int
    sms: int
    total_bytes: int
    driver: int
    # launch limits the deterministic appliers size grids and shared arrays by (None: not reported)
    max_threads_per_sm: int | None = None
    max_threads_per_block: int | None = None
    max_shared_per_block: int | None = None

    @property
    def arch(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"

    def to_wire(self) -> dict[str, Any]:
        """The device map (also what `search.appliers.DeviceLimits.of` reads)."""
        wire: dict[str, Any] = {"name": self.name, "cc": list(self.cc), "l2_bytes": self.l2_bytes, "sms": self.sms,
                                "total_bytes": self.total_bytes, "driver": self.driver}
        for key in ("max_threads_per_sm", "max_threads_per_block", "max_shared_per_block"):
            if getattr(self, key) is not None:
                wire[key] = getattr(self, key)
        return wire

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> DeviceInfo:
        cc = wire["cc"]

        def limit(key: str) -> int | None:
            value = wire.get(key)
            return int(value) if value is not None else None

        return cls(str(wire["name"]), (int(cc[0]), int(cc[1])), int(wire.get("l2_bytes", 0)), int(wire.get("sms", 0)),
                   int(wire.get("total_bytes", 0)), int(wire.get("driver", 0)), limit("max_threads_per_sm"),
                   limit("max_threads_per_block"), limit("max_shared_per_block"))


@dataclass(frozen=True)
class HelloReply:
    device: DeviceInfo | None
    reason: str = ""  # why there is no device
    pid: int | None = None

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> HelloReply:
        device = wire.get("device")
        return cls(DeviceInfo.from_wire(device) if isinstance(device, dict) else None, str(wire.get("reason") or ""),
                   wire.get("pid"))


@dataclass(frozen=True)
class Failed:
    """The worker could not do the request: no device, an error it reported, or a device error
    after which it exits ("fatal"; the parent starts a fresh one)."""

    status: Literal["no_device", "error", "fatal"]
    reason: str


@dataclass(frozen=True)
class Prepared:
    generated: int  # input sets drawn now


@dataclass(frozen=True)
class CheckVerdict:
    """"ok": every trial matched the original; "wrong": the first problem's reason;
    "original_failed": the original itself failed on the device (the worker then exits)."""

    status: Literal["ok", "wrong", "original_failed"]
    reason: str = ""
    trials: int = 0
    workspace_created: bool = False
    references_run: int = 0
    workspaces: int = 0


@dataclass(frozen=True)
class Timed:
    """"ok" with the run times, or "wrong" when the timed runs damaged the cached buffers."""

    status: Literal["ok", "wrong"]
    times_ms: tuple[float, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class PeaksReply:
    gbps: float
    gflops: float
    device: DeviceInfo


Reply = HelloReply | Failed | Prepared | CheckVerdict | Timed | PeaksReply


def reply_to_wire(reply: Reply) -> dict[str, Any]:
    if isinstance(reply, HelloReply):
        return {"status": "ok", "device": reply.device.to_wire() if reply.device else None, "reason": reply.reason,
                "pid": reply.pid}
    if isinstance(reply, Failed):
        return {"status": reply.status, "reason": reply.reason}
    if isinstance(reply, Prepared):
        return {"status": "ok", "generated": reply.generated}
    if isinstance(reply, CheckVerdict):
        return {"status": reply.status, "reason": reply.reason, "trials": reply.trials,
                "workspace_created": reply.workspace_created, "references_run": reply.references_run,
                "workspaces": reply.workspaces, "fatal": reply.status == "original_failed"}
    if isinstance(reply, Timed):
        return {"status": reply.status, "times_ms": list(reply.times_ms), "reason": reply.reason}
    return {"status": "ok", "gbps": reply.gbps, "gflops": reply.gflops, "device": reply.device.to_wire()}


def reply_from_wire(request: Request, wire: dict[str, Any]) -> Reply:
    """The reply to `request` a map encodes (a `Failed` for any status the request cannot have)."""
    status = wire.get("status")
    reason = str(wire.get("reason") or "")
    if status in ("no_device", "error", "fatal"):
        return Failed(status, reason or str(status))
    if isinstance(request, Hello) and status == "ok":
        return HelloReply.from_wire(wire)
    if isinstance(request, Prepare) and status == "ok":
        return Prepared(int(wire.get("generated", 0)))
    if isinstance(request, Check) and status in ("ok", "wrong", "original_failed"):
        return CheckVerdict(status, reason, int(wire.get("trials", 0)), bool(wire.get("workspace_created")),
                            int(wire.get("references_run", 0)), int(wire.get("workspaces", 0)))
    if isinstance(request, Time) and status in ("ok", "wrong"):
        return Timed(status, tuple(float(t) for t in wire.get("times_ms", ())), reason)
    if isinstance(request, Peaks) and status == "ok":
        return PeaksReply(float(wire["gbps"]), float(wire["gflops"]), DeviceInfo.from_wire(wire["device"]))
    return Failed("error", f"unexpected worker reply {status!r} to {request.op}: {reason}".rstrip(": "))
