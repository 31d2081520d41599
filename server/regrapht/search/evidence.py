"""What the analyzer proved about the kernel being optimized: the search's evidence (docs/search.md
change 19).

`kernel_evidence(source, kernel, facts, resources, arch)` (pure) reads the rules' findings on the
kernel (rules/engine.py), the compiler's verdict on them from the PTX of its lines
(rules/confirm.py over validate/ptx.py's `PtxFacts`), the kernel's f64 share and global access
widths from that PTX, and ptxas's resources (registers, spills). A finding nvcc *confirmed* is a
`Proof` that names its technique with a gain bound computed from the facts:

- R007/R008 (double-precision arithmetic in a float kernel) -> `fast_math`: f64 instructions
  confirmed on the finding's lines. The bound is Amdahl's over the kernel's own code: with a share
  `p` of its instructions on f64 values and an f32 unit `w` times faster per instruction
  (`gpu_arch.ArchLimits.f32_per_f64`, 2 on an H200), the f64 part takes `q = p w / (p w + 1 - p)`
  of the arithmetic time, and removing all of it gains at most `1 / (1 - q)`.
- R001/R002 (uncoalesced global access) -> `memory_coalescing`: narrow global accesses confirmed.
  A warp's narrow strided accesses fetch a 32-byte sector per lane for `width` useful bytes: the
  bound is `32 / width`.

Only nvcc-confirmed findings prove anything (a source finding alone is the rules' claim, and
"hint" says it is suspected). The search (search/mcgs.py) judges a proven technique where a
structural one would be (early), ranks it by its bound, and never calls it dominated below its
bound; a proof holds on a later code state only while the source analysis still reports its
rule there (`EvidenceView.proof_on`: after `fast_math` wrote float literals there is nothing left
to prove). `features` name what was found (rules, confirmations, the f64 share, spills, the
recognised idioms) for `graph distill` to record with each step (graph/types.py `Example.features`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from regrapht.cuda.view import kernel_view
from regrapht.gpu_arch import limits_for
from regrapht.rules.confirm import verdict_for
from regrapht.rules.engine import analyze_text
from regrapht.rules.types import Finding
from regrapht.techniques import technique_named, technique_of_rule
from regrapht.validate.compile_db import NO_FLAGS, CompileFlags
from regrapht.validate.compiler import Compiler, KernelResources
from regrapht.validate.ptx import PtxFacts, ptx_facts, short_name

SECTOR_BYTES = 32
# The most a proof's bound may claim (a kernel whose code is all f64 would give an infinite one).
MAX_BOUND = 64.0
PROVABLE = frozenset({"R001", "R002", "R007", "R008"})


@dataclass(frozen=True)
class Proof:
    technique: str
    rule: str
    evidence: str  # what nvcc showed, e.g. "78 f64 instructions"
    bound: float  # the most the technique can gain on this kernel, from the facts


@dataclass(frozen=True)
class KernelEvidence:
    kernel: str
    proofs: Mapping[str, Proof] = field(default_factory=dict)  # technique -> its proof
    rules: tuple[str, ...] = ()  # rule codes reported on the kernel (source analysis)
    f64_instructions: int = 0  # on the kernel's lines, from the PTX (0 without it)
    instructions: int = 0
    narrowest_global_access: int | None = None  # bytes per thread, from the PTX
    registers: int | None = None  # ptxas
    spill_bytes: int | None = None  # ptxas: spill stores + loads
    idioms: tuple[str, ...] = ()

    @property
    def f64_share(self) -> float:
        return self.f64_instructions / self.instructions if self.instructions else 0.0

    def features(self) -> tuple[str, ...]:
        """Names of what was found, sorted: `rule:R007`, `proof:fast_math`, `f64`, `spills`,
        `idiom:histogram` (what `graph distill` records with a step)."""
        found = {f"rule:{code}" for code in self.rules} | {f"proof:{name}" for name in self.proofs}
        found |= {f"idiom:{name}" for name in self.idioms}
        if self.f64_instructions:
            found.add("f64")
        if self.spill_bytes:
            found.add("spills")
        if self.narrowest_global_access is not None and self.narrowest_global_access < 16:
            found.add("narrow_global_access")
        return tuple(sorted(found))


NO_EVIDENCE = KernelEvidence("")


def kernel_findings(source: str, kernel: str) -> list[Finding]:
    """The rules' findings inside `kernel` (its template arguments, if any, left off)."""
    name = kernel.split("<")[0]
    return [f for f in analyze_text(source) if f.kernel == name]


def amdahl_bound(f64: int, instructions: int, f32_per_f64: int) -> float:
    """The most removing the f64 part of the arithmetic gains (module docstring), capped."""
    if instructions <= 0 or f64 <= 0:
        return 1.0
    p = f64 / instructions
    weighted = p * f32_per_f64
    rest = 1.0 - p
    if rest <= 0:
        return MAX_BOUND
    return min(MAX_BOUND, (weighted + rest) / rest)


def kernel_evidence(source: str, kernel: str, facts: PtxFacts | None = None,
                    resources: KernelResources | None = None, arch: str = "sm_90",
                    idioms: tuple[str, ...] = ()) -> KernelEvidence:
    """The evidence on `kernel` of `source` (module docstring); `facts`: the PTX of this very
    source (None: no compiler, so nothing is proven)."""
    view = kernel_view(source, kernel)
    findings = kernel_findings(source, kernel)
    rules = tuple(sorted({f.rule for f in findings}))
    spills = resources.spill_bytes if resources is not None else None
    registers = resources.registers if resources is not None else None
    if facts is None or view is None:
        return KernelEvidence(kernel, {}, rules, registers=registers, spill_bytes=spills, idioms=idioms)
    first, last = view.lines
    codes = [code for line in range(first + 1, last + 2) if (code := facts.at(line)) is not None]
    f64 = sum(c.f64 for c in codes)
    instructions = sum(c.instructions for c in codes)
    widths = [w for c in codes for w in c.global_widths]
    limits = limits_for(arch)
    ratio = limits.f32_per_f64 if limits is not None else 2
    proofs: dict[str, Proof] = {}
    for finding in findings:
        if finding.rule not in PROVABLE:
            continue
        code = facts.at(finding.span.start.line + 1)
        verdict = verdict_for(finding, code) if code is not None else None
        if verdict is None or verdict[0] != "confirmed":
            continue
        technique = technique_of_rule(finding.rule).name
        if finding.rule in ("R007", "R008"):
            bound = amdahl_bound(f64, instructions, ratio)
            evidence = f"{f64} f64 instructions of {instructions} in the kernel"
        else:
            narrow = min((w for w in (code.global_widths if code is not None else []) if w < 16), default=4)
            bound = SECTOR_BYTES / narrow
            evidence = f"{narrow}-byte global accesses"
        known = proofs.get(technique)
        if known is None or bound > known.bound:
            proofs[technique] = Proof(technique, finding.rule, evidence, bound)
    return KernelEvidence(kernel, proofs, rules, f64, instructions, min(widths) if widths else None,
                          registers, spills, idioms)


def compiled_evidence(compiler: Compiler, source: str, kernel: str, path: Path | None, arch: str,
                      flags: CompileFlags = NO_FLAGS, *, timeout_s: float | None = None) -> KernelEvidence:
    """`kernel_evidence` with nvcc's facts: the PTX of `source` (`-lineinfo`) and ptxas's report
    of the kernel's resources (a cached cubin compile). Without a PTX the source findings only."""
    facts = ptx_facts(compiler, source, path, arch, flags, timeout_s=timeout_s)
    name = path.name if path is not None else "kernel.cu"
    include_dirs = (str(path.parent),) if path is not None else ()
    compiled = compiler.compile(source, arch=arch, file=name, include_dirs=include_dirs, flags=flags)
    plain = kernel.split("<")[0]
    resources = next((k for k in compiled.kernels.values() if short_name(k.mangled) == plain or k.name == plain), None)
    return kernel_evidence(source, kernel, facts, resources, arch)


@dataclass
class EvidenceView:
    """The evidence of one search, read per code state: a proof holds on a state while the source
    analysis still reports its rule on the kernel there (memoised per source text)."""

    evidence: KernelEvidence = NO_EVIDENCE
    _rules: dict[str, frozenset[str]] = field(default_factory=dict)

    def proof_on(self, source: str, technique: str) -> Proof | None:
        proof = self.evidence.proofs.get(technique)
        if proof is None:
            return None
        rules = self._rules.get(source)
        if rules is None:
            rules = self._rules[source] = frozenset(f.rule for f in kernel_findings(source, self.evidence.kernel))
        # the technique's rules (R007 or R008 for fast_math): either one still reported keeps it
        return proof if rules & set(technique_named(technique).rules) else None
