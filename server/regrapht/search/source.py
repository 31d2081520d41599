"""The search's kernel-text interface, as adapters over `regrapht.cuda.view`.

Search needs a few structural facts about the file it rewrites: where the kernel's definition
starts and ends, its parameter list, its body, its `__launch_bounds__`, and where host code
launches it. They come from the code state's `KernelView` (`cuda/view.py`: one tree-sitter parse
per text, shared with the prompt, the idioms and spec inference; the lexical scanner of
`cuda/scan.py` reads text tree-sitter cannot parse cleanly, such as a model's answer). These
functions keep the appliers' signatures: text and a kernel name in, offsets out.
"""

from __future__ import annotations

from regrapht.cuda.scan import matching, split_top_level
from regrapht.cuda.view import KernelDeclaration, KernelLaunch, KernelView, Param, kernels_of

# The appliers' names for the view's types.
KernelText = KernelView
LaunchSite = KernelLaunch


def code_mask(source: str) -> str:
    """`source` with comments and string/char literal contents blanked (same length)."""
    return kernels_of(source).masked


def kernel_declarations(source: str) -> list[KernelDeclaration]:
    """Every `__global__` function declaration in `source`, with a body or without."""
    return list(kernels_of(source).declarations)


def find_kernels(source: str) -> list[KernelText]:
    """Every `__global__` function definition (declarations without a body are skipped)."""
    return list(kernels_of(source).kernels)


def find_kernel(source: str, name: str) -> KernelText | None:
    return kernels_of(source).kernel(name)


def kernel_launch_bounds(source: str, name: str) -> tuple[str, ...]:
    """The `__launch_bounds__` arguments of kernel `name` as any of its declarations (a forward
    declaration or the definition) writes them; () when none has them."""
    return kernels_of(source).launch_bounds(name)


def integer_define(source: str, name: str) -> int | None:
    """The value of `#define NAME <integer literal>` when the file defines `name` exactly once
    so (and never `#undef`s it); None otherwise."""
    return kernels_of(source).integer_define(name)


def replace_kernel(source: str, name: str, new_definition: str) -> str | None:
    """`source` with kernel `name`'s definition replaced by `new_definition` (None if absent)."""
    kernel = find_kernel(source, name)
    if kernel is None:
        return None
    return source[: kernel.start] + new_definition.strip("\n") + source[kernel.end :]


def signature_key(kernel: KernelText) -> tuple[str, tuple[str, ...]]:
    """What a candidate may not change: the name and the parameter types as the ABI sees them."""
    return kernel.signature_key()


def find_launch_sites(source: str, name: str) -> list[LaunchSite]:
    return list(kernels_of(source).launches_of(name))


__all__ = [
    "KernelDeclaration", "KernelText", "LaunchSite", "Param", "code_mask", "find_kernel", "find_kernels",
    "find_launch_sites", "integer_define", "kernel_declarations", "kernel_launch_bounds", "matching",
    "replace_kernel", "signature_key", "split_top_level",
]
