"""Compare a kernel and its rewrite by running both on the CPU (`cuda_on_cpu.h`) with g++.

`same_outputs(source, spec_text, rewrite, launch, overrides)` builds one program that fills
every buffer of the spec with the same random values for both, launches the original with the
spec's launch and the rewrite with its own (both at the `overrides` sizes: small and odd, so
tails run), and returns the largest relative difference over the output buffers."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from regrapht.idioms.syntax import kernel_syntax
from regrapht.search.appliers.common import Rewrite
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import parse_spec
from regrapht.spec.resolve import resolve

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not on PATH")
HEADER = Path(__file__).with_name("cuda_on_cpu.h")
# g++'s flags for every comparison program, and for the header's precompiled form (g++ uses a
# .gch only when they are the same)
GXX_FLAGS = ("-std=c++20", "-O0", "-w")
C_TYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long", "uint32": "unsigned"}


@functools.cache
def precompiled_header() -> Path:
    """`cuda_on_cpu.h` with its precompiled form beside it, built once per header text and g++
    (parsing the header's standard library includes is most of each small program's compile).
    Test processes share it through the temporary directory; each writes its own file and
    renames it, so a concurrent reader never sees a partial one."""
    text = HEADER.read_bytes()
    version = subprocess.run(["g++", "--version"], capture_output=True, check=True).stdout
    digest = hashlib.sha256(text + version + " ".join(GXX_FLAGS).encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"regrapht-cuda-on-cpu-{digest}"
    header = folder / HEADER.name
    if not (folder / f"{HEADER.name}.gch").is_file():
        folder.mkdir(exist_ok=True)
        partial = folder / f"{HEADER.name}.{os.getpid()}"
        partial.write_bytes(text)
        os.replace(partial, header)
        built = subprocess.run(["g++", *GXX_FLAGS, "-x", "c++-header", str(header), "-o", f"{partial}.gch"],
                               capture_output=True, text=True, check=False)
        assert built.returncode == 0, built.stderr[-4000:]
        os.replace(f"{partial}.gch", folder / f"{HEADER.name}.gch")
    return header


def without_includes(source: str) -> str:
    """`source` without its `#include` lines (the emulation header stands in for them)."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#include"))


def same_outputs(source: str, spec_text: str, rewrite: str, launch: LaunchConfig, overrides: dict[str, int],
                 where: Path, int_scale: int = 0) -> float:
    """`int_scale` > 0: integer buffers hold values in (-int_scale, int_scale) (else the draw,
    truncated: zeros, which suits index buffers but tests no integer arithmetic)."""
    return same_outputs_all(source, spec_text, [(rewrite, launch)], overrides, where, int_scale)[0]


def same_outputs_all(source: str, spec_text: str, rewrites: list[tuple[str, LaunchConfig]],
                     overrides: dict[str, int], where: Path, int_scale: int = 0) -> list[float]:
    """`same_outputs` of each (rewrite, launch), all in one program: one g++ build for the
    original and every rewrite (each in a namespace of its own, on its own copy of the inputs)."""
    [kernel] = parse_spec(spec_text).kernels
    base = resolve(kernel, overrides=overrides)
    copies = len(rewrites) + 1  # copy 0 is the original's
    lines = [f'#include "{precompiled_header()}"', "namespace original {", without_includes(source), "}"]
    for index, (rewrite, _launch) in enumerate(rewrites, start=1):
        lines += [f"namespace rewritten{index} {{", without_includes(rewrite), "}"]
    lines += ["int main() {", "std::mt19937 gen(7); std::uniform_real_distribution<double> draw(-1, 1);"]
    buffers = {b.name: b for b in base.buffers}
    outputs = []
    for name, kind in base.args:
        if kind == "buffer":
            buffer = buffers[name]
            c_type = C_TYPES[buffer.dtype]
            scale = f" * {int_scale}" if int_scale and c_type not in ("float", "double") else ""
            lines += [f"std::vector<{c_type}> " + ", ".join(f"{name}_{c}({buffer.count})" for c in range(copies)) + ";",
                      f"for (size_t q = 0; q < {buffer.count}; q++) {{ {c_type} v = ({c_type})(draw(gen){scale}); "
                      + " ".join(f"{name}_{c}[q] = v;" for c in range(copies)) + " }"]
            if buffer.role in ("out", "inout"):
                outputs.append((name, buffer.count))
        else:
            c_type = C_TYPES.get(base.scalar_dtypes[name], "int")
            lines.append(f"const {c_type} {name} = ({c_type}){base.scalars[name]};")

    syntax = kernel_syntax(source, kernel.name.split("<")[0].strip())
    assert syntax is not None
    params = {p.name for p in syntax.params}  # a spec may name launch-only scalars too

    def call(namespace: str, copy: int) -> str:
        arguments = ", ".join(f"{n}_{copy}.data()" if k == "buffer" else n for n, k in base.args if n in params)
        return f"{namespace}::{kernel.name}({arguments});"

    runs = [(base, "original", 0)] + [(resolve(kernel, overrides=overrides, launch=launch), f"rewritten{index}", index)
                                      for index, (_rewrite, launch) in enumerate(rewrites, start=1)]
    for resolved, namespace, copy in runs:
        grid, block = resolved.grid, resolved.block
        lines.append(f"launch({{{grid[0]}, {grid[1]}, {grid[2]}}}, {{{block[0]}, {block[1]}, {block[2]}}}, "
                     f"[&] {{ {call(namespace, copy)} }});")
    for copy in range(1, copies):
        lines.append("{ double worst = 0;")
        for name, count in outputs:
            lines.append(f"for (size_t q = 0; q < {count}; q++) {{ double d = std::fabs((double){name}_0[q] - "
                         f"(double){name}_{copy}[q]) / (1e-3 + std::fabs((double){name}_0[q])); "
                         "if (d > worst) worst = d; }")
        lines.append('printf("%.3g\\n", worst); }')
    lines.append("return 0; }")
    program = where / "compare.cpp"
    program.write_text("\n".join(lines))
    binary = where / "compare"
    built = subprocess.run(["g++", *GXX_FLAGS, "-Winvalid-pch", str(program), "-o", str(binary)],
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-4000:]
    ran = subprocess.run([str(binary)], capture_output=True, text=True, check=False, timeout=600)
    assert ran.returncode == 0, ran.stderr[-2000:]
    worst = [float(line) for line in ran.stdout.split()]
    assert len(worst) == len(rewrites), ran.stdout
    return worst


def assert_same_outputs(source: str, spec_text: str, rewrites: list[Rewrite], overrides: dict[str, int], where: Path,
                        below: float | None = None, int_scale: int = 0,
                        prepare: Callable[[str], str] = str) -> None:
    """Every rewrite's outputs are the original's (`same_outputs_all`, one program): bit for bit,
    or with `below` a relative difference under it. A failure names each rewrite that differs.
    `prepare` turns the original's and each rewrite's text into what the emulation compiles."""
    worst = same_outputs_all(prepare(source), spec_text, [(prepare(r.source), r.launch) for r in rewrites], overrides,
                             where, int_scale)
    differ = [(r.note, w) for r, w in zip(rewrites, worst, strict=True) if (w != 0.0 if below is None else w >= below)]
    assert not differ, differ


def spec_text(name: str, grid: list[str], block: list[str], args: list[tuple[str, str, str, str]]) -> str:
    """A one-kernel spec: `args` as (name, type, count or value, role); buffers get uniform(-1, 1)."""
    def literal(values: list[str]) -> str:
        return "[" + ", ".join(f'"{v}"' for v in values) + "]"

    lines = ["[[kernel]]", f'name = "{name}"', f"grid = {literal(grid)}", f"block = {literal(block)}"]
    for arg, type_text, amount, role in args:
        lines += ["[[kernel.arg]]", f'name = "{arg}"', f'type = "{type_text}"']
        if type_text.endswith("*"):
            lines += [f'count = "{amount}"', 'init = "uniform(-1, 1)"'] + ([f'role = "{role}"'] if role else [])
        else:
            lines.append(f'value = "{amount}"')
    return "\n".join(lines) + "\n"
