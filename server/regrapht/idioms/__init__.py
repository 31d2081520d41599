"""Idiom recognition on the source model: what a kernel computes, for the deterministic appliers.

Appliers ask here instead of matching text. The core is shared by every family:
- `syntax`: the kernel's tree-sitter definition, parameters, and `Symbols`, the affine values
  (`cuda.affine.Poly`) of index expressions through the kernel's local definitions;
- `threads`: how threads map to items (`thread_mapping`: guarded or grid-stride global indices);
- `access`: the memory accesses of a statement with their index polynomials, and purity;
- `rows`: per-item programs over rows and columns (reductions with their operator, scans,
  multi-pass row operations, dot products, CSR row ranges) and whole-array reductions and scans.
Family modules for other idioms live beside these and build on the same three core modules.
Nothing here edits source text: recognisers return frozen descriptions with the nodes they cover.
"""
