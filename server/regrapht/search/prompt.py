"""Asking the model for one rewrite, and turning its answer into a candidate file.

The prompt holds a short system message, the technique and its description, one example from
the reasoning-graph edge (code before/after and the rationale), the current kernel and its
launch configuration. The answer must hold the whole kernel in one ```cuda block and may add a
line `LAUNCH grid=(...) block=(...)`. The kernel is spliced back into the whole file; an answer
that changes the kernel's name or parameter list is rejected here, before any compilation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from regrapht.cuda.scan import split_top_level
from regrapht.cuda.view import kernel_view, kernels_of
from regrapht.graph.types import Example
from regrapht.model.backend import ChatMessage
from regrapht.spec.launch import LaunchConfig

SYSTEM = (
    "You are an expert CUDA performance engineer. You rewrite one CUDA kernel to make it faster "
    "while computing exactly the same results. Keep the kernel's name and its parameter list "
    "unchanged. Answer with the complete rewritten kernel in a single ```cuda code block. If the "
    "launch configuration must change, add one line after the block: "
    "LAUNCH grid=(x, y) block=(x, y)"
)

COT_INSTRUCTION = (
    "Think step by step: what makes this kernel slow on a modern NVIDIA GPU (memory access "
    "pattern, parallelism, instruction mix)? Then optimize it."
)

_MAX_EXAMPLE_CHARS = 2400  # keeps the prompt well inside a 4096-token context


def choose_example(examples: Iterable[Example]) -> Example | None:
    """The shortest example that was measured faster, else the shortest one.

    A 135M-parameter model copies the form of what it is shown far more than it reasons about
    it, and its context is small: a short before/after pair leaves room for the kernel and is
    easier to imitate; preferring a measured-faster one keeps it a good pattern to imitate.
    """
    pool = list(examples)
    if not pool:
        return None
    faster = [e for e in pool if e.speedup is not None and e.speedup > 1.0]
    candidates = faster or pool
    return min(candidates, key=lambda e: (len(e.code_before) + len(e.code_after), e.kernel))


def rewrite_messages(technique: str, description: str, example: Example | None, kernel_text: str,
                     launch: LaunchConfig) -> list[ChatMessage]:
    parts = [f"Technique: {technique.replace('_', ' ')}."]
    if description:
        parts.append(description.strip())
    if example is not None and len(example.code_before) + len(example.code_after) <= _MAX_EXAMPLE_CHARS:
        parts.append(
            "Example of this technique:\nBefore:\n```cuda\n" + example.code_before.strip() + "\n```\n"
            "After:\n```cuda\n" + example.code_after.strip() + "\n```\n"
            + (f"Why: {example.rationale.strip()}" if example.rationale else "")
        )
    parts.append(_kernel_block(kernel_text, launch))
    parts.append(f"Apply {technique.replace('_', ' ')} to this kernel. Answer with the full kernel in one ```cuda block.")
    return [ChatMessage("system", SYSTEM), ChatMessage("user", "\n\n".join(parts))]


def answer_prefill(kernel_header: str) -> str:
    """The start of the model's answer: a cuda fence and the kernel's header up to its "{".

    A 135M model asked for "the full kernel in one block" mostly answers with prose, a fragment
    or another kernel; continuing from the exact header it writes a body for this kernel, and
    the name and parameter list cannot change. The indentation matters: after a bare newline
    SmolLM2 often closes the fence at once (10 of 18 answers spliced on three tasks, 15 of 18
    with it). The cot baseline gets no prefill: it is asked to
    think first, as published.
    """
    return "```cuda\n" + kernel_header.strip() + "\n    "  # indented: a statement comes next, not a fence


CHOICE_SYSTEM = (
    "You are an expert CUDA performance engineer. Given a CUDA kernel and a list of optimization "
    "techniques, reply with the name of the one technique that would make this kernel faster. "
    "Reply with the name only."
)
_MAX_CHOICE_KERNEL_CHARS = 3000


def choice_messages(kernel_text: str, descriptions: Mapping[str, str]) -> list[ChatMessage]:
    """Ask which of `descriptions` (technique name -> what it does) suits this kernel best."""
    listing = "\n".join(f"- {name}: {text}" if text else f"- {name}" for name, text in sorted(descriptions.items()))
    return [
        ChatMessage("system", CHOICE_SYSTEM),
        ChatMessage("user", f"Kernel:\n```cuda\n{kernel_text[:_MAX_CHOICE_KERNEL_CHARS]}\n```\n\n"
                            f"Techniques:\n{listing}\n\nWhich technique?"),
    ]


def choice_grammar(names: Iterable[str]) -> str:
    """A GBNF grammar (llama.cpp) whose only sentences are the given names."""
    alternatives = " | ".join(sorted({'"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"' for name in names}))
    return f"root ::= {alternatives}\n"


def cot_messages(kernel_text: str, launch: LaunchConfig) -> list[ChatMessage]:
    user = (
        _kernel_block(kernel_text, launch) + "\n\n" + COT_INSTRUCTION
        + " Answer with the full optimized kernel in one ```cuda block."
    )
    return [ChatMessage("system", SYSTEM), ChatMessage("user", user)]


def _kernel_block(kernel_text: str, launch: LaunchConfig) -> str:
    return (
        "Kernel:\n```cuda\n" + kernel_text.strip() + "\n```\n"
        f"Launched with grid=({', '.join(launch.grid)}) block=({', '.join(launch.block)})"
    )


_FENCE = re.compile(r"```[ \t]*(?:cuda|cu|c\+\+|cpp|c)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_LAUNCH = re.compile(r"LAUNCH\s+grid\s*=\s*\((?P<grid>[^)]*(?:\([^)]*\)[^)]*)*)\)\s*block\s*=\s*\((?P<block>[^)]*)\)")


def extract_code(answer: str) -> str | None:
    """The first fenced block that holds a `__global__` function, or the first fenced block."""
    blocks = [m.group(1) for m in _FENCE.finditer(answer)]
    for block in blocks:
        if "__global__" in block:
            return block
    return blocks[0] if blocks else None


def extract_launch(answer: str, current: LaunchConfig) -> LaunchConfig:
    match = _LAUNCH.search(answer)
    if match is None:
        return current
    grid = tuple(split_top_level(match.group("grid")))
    block = tuple(split_top_level(match.group("block")))
    if not 1 <= len(grid) <= 3 or not 1 <= len(block) <= 3 or not all(grid) or not all(block):
        return current
    if any(not re.fullmatch(r"[\w\s+\-*/%()<>,]+", e) for e in grid + block):
        return current  # not an expression of the spec's language
    return LaunchConfig(grid, block, current.shared_bytes)


@dataclass(frozen=True)
class Spliced:
    source: str | None  # the new whole file, None when rejected
    reason: str  # why it was rejected


def splice_answer(original_source: str, kernel: str, code: str) -> Spliced:
    """Put the answer's version of `kernel` into the file, refusing a changed signature."""
    original = kernel_view(original_source, kernel)
    if original is None:
        return Spliced(None, f"kernel {kernel} not found in the current source")
    new = kernel_view(code, kernel)
    if new is None:
        names = [k.name for k in kernels_of(code).kernels]
        reason = f"answer defines {', '.join(names)} instead of {kernel}" if names else "answer holds no kernel"
        return Spliced(None, reason)
    if new.signature_key() != original.signature_key():
        return Spliced(None, f"answer changed the parameter list of {kernel}")
    # Helpers the answer defines before the kernel (device functions) go in with it.
    prefix = code[: new.start]
    helpers = prefix if "__device__" in prefix else ""
    replaced = original_source[: original.start] + (helpers + new.text(code)).strip("\n") + original_source[original.end :]
    return Spliced(replaced, "")
