"""The compile cache keys on what nvcc compiled (real nvcc): a header edit invalidates a cached
cubin (its registers) and a header fix a cached failure; the project's flags are part of the key;
headers compile as CUDA."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from regrapht.validate.compile_db import CompileFlags
from regrapht.validate.compiler import CompileCache, Compiler, find_nvcc, parse_dependencies

pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")]

SOURCE = '#include "work.cuh"\n__global__ void k(float* x) { x[threadIdx.x] = work(x[threadIdx.x]); }\n'
LIGHT = "#pragma once\n__device__ inline float work(float v) { return v * 2.0f; }\n"
# many live values at once: more registers than LIGHT
HEAVY = ("#pragma once\n__device__ inline float work(float v) {\n  float a[24];\n"
         "  for (int i = 0; i < 24; ++i) a[i] = v * (i + 1) + __sinf(v * i);\n  float s = 0.f;\n"
         "  for (int i = 0; i < 24; ++i) s += a[i] * a[(i * 7) % 24];\n  return s;\n}\n")
BROKEN = "#pragma once\n__device__ inline float work(float v) { return v * ; }\n"


def compiler(cache: Path) -> Compiler:
    nvcc = find_nvcc(os.environ)
    assert nvcc is not None
    return Compiler(nvcc, cache=CompileCache(cache))


def test_a_header_edit_invalidates_the_cached_cubin_and_a_header_fix_the_cached_failure(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    header = project / "work.cuh"
    header.write_text(LIGHT, encoding="utf-8")
    nvcc = compiler(tmp_path / "cache")

    def build():
        return nvcc.compile(SOURCE, file=str(project / "k.cu"), include_dirs=(str(project),))

    light = build()
    assert light.ok and not light.cached
    assert light.dependencies is not None and str(header) in dict(light.dependencies)
    again = build()
    assert again.cached and again.key == light.key
    header.write_text(HEAVY, encoding="utf-8")
    heavy = build()
    assert heavy.ok and not heavy.cached and heavy.key != light.key
    registers = {r.registers for r in light.kernels.values()}, {r.registers for r in heavy.kernels.values()}
    assert registers[0] != registers[1]  # the new cubin's report, not the old one's
    header.write_text(BROKEN, encoding="utf-8")
    broken = build()
    assert not broken.ok and any("work.cuh" in d.file for d in broken.errors)
    assert build().cached  # the failure is cached while the header stays broken
    header.write_text(LIGHT, encoding="utf-8")
    fixed = build()
    assert fixed.ok and not fixed.cached  # the fix invalidates the cached failure
    header.unlink()
    missing = build()
    assert not missing.ok and not build().cached  # included files unknown: never cached


def test_the_flags_are_part_of_the_key_and_a_header_compiles_as_cuda(tmp_path: Path) -> None:
    nvcc = compiler(tmp_path / "cache")
    source = "__global__ void k(float* x) { x[0] = SCALE; }\n"
    two = nvcc.compile(source, file="k.cuh", flags=CompileFlags(defines=("SCALE=2.0f",)))
    three = nvcc.compile(source, file="k.cuh", flags=CompileFlags(defines=("SCALE=3.0f",)))
    assert two.ok and three.ok and two.key != three.key and not three.cached
    assert "-x" in two.command and "-DSCALE=2.0f" in two.command
    assert not nvcc.compile(source, file="k.cuh").ok  # without the define it does not compile
    std = nvcc.compile("__global__ void k() {}\n", file="s.cu", flags=CompileFlags(std="c++20"))
    assert std.ok and "-std=c++20" in std.command and "-std=c++17" not in std.command


def test_dependency_files_are_parsed_with_escapes(tmp_path: Path) -> None:
    text = "out.cubin : k.cu \\\n    /usr/include/a.h \\\n    /opt/my\\ dir/b.cuh\n"
    assert parse_dependencies(text, tmp_path) == ("/usr/include/a.h", "/opt/my dir/b.cuh")


def test_cpath_still_finds_headers_and_is_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for folder, body in ((first, LIGHT), (second, BROKEN)):
        folder.mkdir()
        (folder / "work.cuh").write_text(body, encoding="utf-8")
    nvcc = compiler(tmp_path / "cache")
    monkeypatch.setenv("CPATH", str(first))
    assert nvcc.compile(SOURCE, file=str(tmp_path / "k.cu")).ok
    monkeypatch.setenv("CPATH", str(second))  # another header of the same name: not the cached result
    assert not nvcc.compile(SOURCE, file=str(tmp_path / "k.cu")).ok


def test_a_header_edit_revalidates_the_file(tmp_path: Path) -> None:
    from regrapht.spec.model import parse_spec
    from regrapht.validate.background import validate_file

    header = tmp_path / "work.cuh"
    header.write_text(LIGHT, encoding="utf-8")
    path = tmp_path / "k.cu"
    path.write_text(SOURCE, encoding="utf-8")
    spec = parse_spec('[[kernel]]\nname = "k"\ngrid = [1]\nblock = [32]\n\n[[kernel.arg]]\nname = "x"\n'
                      'type = "float*"\ncount = 32\ninit = "uniform(-1, 1)"\nrole = "inout"\n', file="k.regrapht.toml")
    nvcc = compiler(tmp_path / "cache")

    def validate():
        return validate_file(path, SOURCE, spec, compiler=nvcc, worker=None, cache_dir=tmp_path / "cache",
                             arch="sm_90")

    first = validate()
    assert not first.cached and first.kernels[0].report is not None
    assert validate().cached
    header.write_text(HEAVY, encoding="utf-8")
    edited = validate()
    assert not edited.cached and edited.kernels[0].report is not None
    assert edited.kernels[0].report["resources"]["registers"] != first.kernels[0].report["resources"]["registers"]


def test_an_included_device_file_is_never_hashed_and_the_compile_not_cached(tmp_path: Path) -> None:
    nvcc = compiler(tmp_path / "cache")
    source = '#define EMPTY "/dev/null"\n#include EMPTY\n__global__ void k(int* o) { o[0] = 1; }\n'
    first = nvcc.compile(source, file="k.cu")
    assert first.ok and first.dependencies is None  # /dev/null is not a regular file: never read
    assert not nvcc.compile(source, file="k.cu").cached


def test_the_included_files_come_from_the_one_preprocessing_of_the_device_code(tmp_path: Path) -> None:
    """The dependency list is written by the host preprocessor while it preprocesses the device
    code: nvcc runs it once (nvcc's own -MD added a second, host-side pass: about a third of a
    small kernel's compile time)."""
    (tmp_path / "work.cuh").write_text(LIGHT, encoding="utf-8")
    result = compiler(tmp_path / "cache").compile(SOURCE, file=str(tmp_path / "k.cu"), include_dirs=(str(tmp_path),))
    assert result.ok and result.dependencies is not None and str(tmp_path / "work.cuh") in dict(result.dependencies)
    (tmp_path / "k.cu").write_text(SOURCE, encoding="utf-8")
    plan = subprocess.run([*result.command, "--dryrun"], cwd=tmp_path, capture_output=True, text=True, check=True)
    preprocessing = [line for line in plan.stderr.splitlines() if " -E " in f"{line} "]
    assert len(preprocessing) == 1, preprocessing
