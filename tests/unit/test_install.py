"""The install step (regrapht.install): portable build targets, the wheel cache, a lean install."""

from __future__ import annotations

import importlib.metadata
import platform
from pathlib import Path

from regrapht import install

V3_FLAGS = "fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma f16c bmi1 bmi2 avx512f avx512bw amx_tile amx_int8"


def test_cpu_flags_come_from_the_first_cpu_of_proc_cpuinfo():
    text = f"processor\t: 0\nflags\t\t: {V3_FLAGS}\n\nprocessor\t: 1\nflags\t\t: fpu\n"
    assert install.cpu_flags(text) == frozenset(V3_FLAGS.split())
    assert install.cpu_flags("Features\t: fp asimd evtstrm\n") == frozenset({"fp", "asimd", "evtstrm"})
    assert install.cpu_flags("") == frozenset()


def test_never_native_never_amx_or_avx512_even_where_the_cpu_advertises_them():
    target = install.build_target("x86_64", install.cpu_flags(f"flags : {V3_FLAGS}"))
    assert target.level == "x86_64-v3"
    assert "-DGGML_NATIVE=OFF" in target.cmake_args
    for option in ("GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16", "GGML_AVX512"):
        assert f"-D{option}=OFF" in target.cmake_args
        assert f"-D{option}=ON" not in target.cmake_args
    assert "-DGGML_AVX2=ON" in target.cmake_args


def test_only_the_libraries_are_built_on_every_target():
    for target in (install.build_target("x86_64", install.cpu_flags(f"flags : {V3_FLAGS}")),
                   install.build_target("x86_64", frozenset()), install.build_target("aarch64", frozenset())):
        for part in ("LLAVA_BUILD", "LLAMA_BUILD_TESTS", "LLAMA_BUILD_TOOLS", "LLAMA_BUILD_EXAMPLES",
                     "LLAMA_BUILD_SERVER"):
            assert f"-D{part}=OFF" in target.cmake_args, (target.level, part)


def test_a_cpu_without_the_v3_set_gets_the_baseline_and_arm64_its_family_baseline():
    old = install.build_target("x86_64", frozenset({"sse2", "avx"}))
    assert old.level == "x86_64-baseline"
    assert "-DGGML_AVX2=OFF" in old.cmake_args and "-DGGML_AVX=OFF" in old.cmake_args
    arm = install.build_target("aarch64", frozenset({"asimd"}))
    assert arm.level == "aarch64"
    assert "-DGGML_NATIVE=OFF" in arm.cmake_args
    assert not any("AVX2=ON" in a for a in arm.cmake_args)


def test_the_cache_folder_names_the_version_and_the_level(tmp_path):
    assert install.cache_root({"REGRAPHT_WHEEL_CACHE": str(tmp_path)}) == tmp_path
    assert install.cache_root({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path("/c/regrapht/wheels")
    assert install.cache_root({"HOME": "/h"}) == Path("/h/.cache/regrapht/wheels")
    target = install.build_target("x86_64", frozenset())
    folder = install.wheel_dir(tmp_path, target)
    assert folder.name == f"llama-cpp-python-{install.LLAMA_CPP_PYTHON_VERSION}-x86_64-baseline"
    assert install.cached_wheel(folder) is None
    folder.mkdir(parents=True)
    wheel = folder / f"llama_cpp_python-{install.LLAMA_CPP_PYTHON_VERSION}-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"")
    assert install.cached_wheel(folder) == wheel


def test_a_cached_wheel_is_reused_without_building(tmp_path, monkeypatch):
    folder = install.wheel_dir(tmp_path, install.this_machine_target())
    folder.mkdir(parents=True)
    wheel = folder / f"llama_cpp_python-{install.LLAMA_CPP_PYTHON_VERSION}-py3-none-any.whl"
    wheel.write_bytes(b"")

    def no_build(*_args: object) -> Path:
        raise AssertionError("a cached wheel must not be built again")

    monkeypatch.setattr(install, "build_wheel", no_build)
    assert install.ensure_wheel("python3", {"REGRAPHT_WHEEL_CACHE": str(tmp_path)}) == wheel


def test_progress_reads_ninja_and_make_steps():
    assert install.last_progress("x\n  [12/140] g++ -c a.cpp\n  [13/140] g++ -c b.cpp\n") == "[13/140]"
    assert install.last_progress("[ 42%] Building CXX object\n") == "[42%]"
    assert install.last_progress("-- Configuring\n") == ""
    assert install.expected_minutes(2) == 12 and install.expected_minutes(64) == 2


# Network clients that the `llm` tool (a dependency the model package declares) would pull in.
UNNEEDED_NETWORK_PACKAGES = ("llm", "openai", "httpx", "httpcore", "requests", "aiohttp", "urllib3", "sqlite-utils")


def test_the_installed_set_holds_no_network_client_the_product_does_not_need():
    installed = {d.metadata["Name"].lower().replace("_", "-") for d in importlib.metadata.distributions()}
    assert "regrapht" in installed
    # Ray (the optional `cluster` extra, in the dev set for its tests) needs requests/urllib3 for
    # its own cluster protocol; the product without --ray never imports them
    allowed = {"requests", "urllib3"} if "ray" in installed else set()
    present = sorted(set(UNNEEDED_NETWORK_PACKAGES) & installed - allowed)
    assert not present, f"installed but never used by ReGraphT: {present}"


def test_this_machine_gets_a_portable_target():
    target = install.this_machine_target()
    assert "-DGGML_NATIVE=OFF" in target.cmake_args
    assert target.level.startswith(platform.machine()) or target.level == platform.machine()
