"""The CUDA source model: tree-sitter parsing of .cu/.cuh text into plain frozen facts.

Public API:
- `parse_source(text) -> SourceModel`, `decode_source(bytes) -> (text, warnings)` (parse.py)
- `SourceDocument(text)`: `.text`, `.model`, `.apply_change(span | None, new_text)`,
  `.kernel_at(position)`, `.launch_sites(kernel)` (document.py, incremental reparse)
- the model dataclasses (model.py): `SourceModel`, `Function`, `Parameter`, `LaunchSite`,
  `Dim3`, `MallocCall`, `Call`, `SharedArray`, `Loop`, `MemoryAccess`, `Coefficient`, `Atomic`,
  `SyncCall`, `Branch`, `FloatLiteral`, `MathCall`, `Expr`

Performance: a `SourceDocument` re-extracts only the functions whose text changed; moved
functions are shifted. Files with more than `parse.MAX_FUNCTIONS` functions are truncated with
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
    SharedArray,
    SourceModel,
    SyncCall,
)
from regrapht.cuda.parse import decode_source, parse_source

__all__ = [
    "Atomic", "Branch", "Call", "Coefficient", "Dim3", "Expr", "FloatLiteral", "Function", "LaunchSite", "Loop",
    "MallocCall", "MathCall", "MemoryAccess", "Parameter", "SharedArray", "SourceDocument", "SourceModel",
    "SyncCall", "decode_source", "parse_source",
]
