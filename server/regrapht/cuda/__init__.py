"""The CUDA source model: tree-sitter parsing of .cu/.cuh text into plain frozen facts.

Public API:
- `parse_source(text) -> SourceModel`, `decode_source(bytes) -> (text, warnings)` (parse.py)
- `SourceDocument(text)`: `.text`, `.model`, `.apply_change(span | None, new_text)`,
  `.kernel_at(position)`, `.launch_sites(kernel)` (document.py, incremental reparse)
- the model dataclasses (model.py): `SourceModel`, `Function`, `Parameter`, `LaunchSite`,
  `Dim3`, `MallocCall`, `Call`, `SharedArray`, `Loop`, `MemoryAccess`, `Coefficient`, `Atomic`,
  `SyncCall`, `Branch`, `FloatLiteral`, `MathCall`, `Expr`

- `kernels_of(text) -> FileView`, `kernel_view(text, name) -> KernelView | None` (view.py): one
  kernel IR per code state (a tree-sitter parse memoised by text; the lexical scanner of scan.py
  for text that does not parse cleanly): definition, parameter and body ranges, parameters,
  launch bounds, the code mask, the `function_definition` node, launch sites, the `SourceModel`

- `SourceModel.placements`: per function, its facts relative to its first line, its row and a
  memo kept while its text is unchanged (`PlacedFunction`; the rules engine caches findings there)

Performance: a `SourceDocument` re-extracts only the functions whose text changed; a function
that moved gets its header shifted at once and its fact tuples shifted on first read
(`model.move_function`), so an edit costs O(functions) plus the edited function. Files with more than `parse.MAX_FUNCTIONS` functions are truncated with
a warning in `SourceModel.warnings`.
"""

from regrapht.cuda.document import SourceDocument
from regrapht.cuda.model import (
    Atomic,
    Branch,
    Call,
    Coefficient,
    Dim3,
    Expr,
    FloatLiteral,
    Function,
    LaunchSite,
    Loop,
    MallocCall,
    MathCall,
    MemoryAccess,
    Parameter,
    PlacedFunction,
    SharedArray,
    SourceModel,
    SyncCall,
)
from regrapht.cuda.parse import decode_source, parse_source
from regrapht.cuda.view import FileView, KernelView, kernel_view, kernels_of

__all__ = [
    "Atomic", "Branch", "Call", "Coefficient", "Dim3", "Expr", "FileView", "FloatLiteral", "Function", "KernelView",
    "LaunchSite", "Loop",
    "MallocCall", "MathCall", "MemoryAccess", "Parameter", "PlacedFunction", "SharedArray", "SourceDocument", "SourceModel",
    "SyncCall", "decode_source", "kernel_view", "kernels_of", "parse_source",
]
