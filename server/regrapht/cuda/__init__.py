"""The CUDA source model: tree-sitter parsing of .cu/.cuh text into plain frozen facts.

Public API:
- `parse_source(text) -> SourceModel`, `decode_source(bytes) -> (text, warnings)` (parse.py)
- `SourceDocument(text)`: `.text`, `.model`, `.apply_change(span | None, new_text)`,
  `.kernel_at(position)`, `.launch_sites(kernel)` (document.py, incremental reparse)
- the model dataclasses (model.py): `SourceModel`, `Function`, `Parameter`, `LaunchSite`,
  `Dim3`, `MallocCall`, `Call`, `SharedArray`, `Loop`, `MemoryAccess`, `Coefficient`, `Atomic`,
  `SyncCall`, `Branch`, `FloatLiteral`, `MathCall`, `Expr`

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

__all__ = [
    "Atomic", "Branch", "Call", "Coefficient", "Dim3", "Expr", "FloatLiteral", "Function", "LaunchSite", "Loop",
    "MallocCall", "MathCall", "MemoryAccess", "Parameter", "PlacedFunction", "SharedArray", "SourceDocument", "SourceModel",
    "SyncCall", "decode_source", "parse_source",
]
