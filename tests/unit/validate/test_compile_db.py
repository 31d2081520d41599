"""The compile database (validate/compile_db.py): discovery as clangd does it (nearest, build/,
the setting's path), flag extraction from CMake's real entries, a file the database lacks taking
its neighbour's flags, bad databases as InputErrors naming file and entry, the user's flags."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from regrapht.errors import InputError
from regrapht.validate.compile_db import (
    CompileSetup,
    NoticeMemory,
    compile_setup,
    discover_database,
    flags_for,
    flags_from_arguments,
    load_database,
    user_flags,
)

PROJECT = Path(__file__).resolve().parents[2] / "data" / "cmake_project"


def write_db(folder: Path, entries: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "compile_commands.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def entry(directory: Path, file: str, *flags: str) -> dict[str, object]:
    return {"directory": str(directory), "file": file,
            "arguments": ["nvcc", *flags, "-c", file, "-o", "x.o"]}


def test_the_nearest_database_wins_and_build_folders_count(tmp_path: Path) -> None:
    source = tmp_path / "a" / "b" / "k.cu"
    source.parent.mkdir(parents=True)
    source.write_text("", encoding="utf-8")
    assert discover_database(source) is None
    outer = write_db(tmp_path / "build", [entry(tmp_path, "a/b/k.cu", "-DOUTER")])
    assert discover_database(source) == outer
    inner = write_db(tmp_path / "a", [entry(tmp_path / "a", "b/k.cu", "-DINNER")])
    assert discover_database(source) == inner
    assert flags_for(source).flags.defines == ("INNER",)
    # the setting's (or --compile-commands') path overrides discovery
    assert flags_for(source, database=outer).flags.defines == ("OUTER",)


def test_flags_from_the_cmake_generated_database() -> None:
    lookup = flags_for(PROJECT / "src" / "scale.cu")
    assert lookup.database == PROJECT / "build" / "compile_commands.json"
    assert lookup.neighbour is None and lookup.notice is None and lookup.problems == ()
    flags = lookup.flags
    # the include dir sits in CMake's --options-file, relative to the entry's directory
    assert flags.include_dirs == (str(PROJECT / "include"),)
    assert flags.defines == ("PROJ_SCALE=3.0f",)
    assert flags.std == "c++17" and flags.cuda_flags == ("--expt-relaxed-constexpr",)
    args = flags.arguments()
    for dropped in ("-c", "-o", "-x", "-forward-unknown-to-host-compiler"):
        assert dropped not in args
    assert not any("generate-code" in a or "arch" in a or a.endswith(".o") for a in args)
    assert "compile_commands.json" in flags.describe() and "-DPROJ_SCALE=3.0f" in flags.describe()


def test_command_strings_and_every_spelling_of_the_flags(tmp_path: Path) -> None:
    command = ('/usr/local/cuda/bin/nvcc -I inc -Iinc2 -isystem sys --include-path=inc3 -DA -D B=2 '
               '--define-macro=C -UD -include pre.h -std c++20 --expt-relaxed-constexpr --extended-lambda '
               '-Xcompiler -fPIC -arch sm_80 -gencode arch=compute_80,code=sm_80 -MD -MF k.d -x cu -c k.cu -o k.o')
    path = write_db(tmp_path, [{"directory": str(tmp_path), "command": command, "file": "k.cu"}])
    (tmp_path / "pre.h").write_text("", encoding="utf-8")
    database = load_database(path)
    got = flags_from_arguments(database.entries[0].arguments, tmp_path, origin="t")
    assert got.include_dirs == (str(tmp_path / "inc"), str(tmp_path / "inc2"), str(tmp_path / "inc3"))
    assert got.system_include_dirs == (str(tmp_path / "sys"),)
    assert got.defines == ("A", "B=2", "C") and got.undefines == ("D",)
    assert got.forced_includes == (str(tmp_path / "pre.h"),)
    assert got.std == "c++20"
    assert got.cuda_flags == ("--expt-relaxed-constexpr", "--extended-lambda")
    assert "-fPIC" not in got.arguments() and "sm_80" not in " ".join(got.arguments())


def test_a_file_missing_from_the_database_takes_its_neighbours_flags_with_one_notice(tmp_path: Path) -> None:
    write_db(tmp_path / "build", [
        entry(tmp_path, "other/far.cu", "-DFAR"),
        entry(tmp_path, "src/near.cu", "-DNEAR"),
        entry(tmp_path, "src/k.cu", "-DSAME_STEM"),
    ])
    lookup = flags_for(tmp_path / "src" / "new.cu")
    assert lookup.flags.defines == ("NEAR",)  # same folder, first of the best
    assert lookup.neighbour == tmp_path / "src" / "near.cu"
    assert lookup.notice is not None and "near.cu" in lookup.notice and "new.cu" in lookup.notice
    header = flags_for(tmp_path / "src" / "k.cuh")  # a header takes the source of its stem
    assert header.flags.defines == ("SAME_STEM",)
    deeper = flags_for(tmp_path / "other" / "sub" / "x.cu")  # the longest shared path
    assert deeper.flags.defines == ("FAR",)
    memory = NoticeMemory()
    assert memory.fresh(lookup) == [lookup.notice]
    assert memory.fresh(lookup) == []  # once
    assert flags_for(tmp_path / "src" / "k.cu").notice is None


@pytest.mark.parametrize(("content", "says", "key"), [
    ("{not json", "not JSON", None),
    ('{"file": "k.cu"}', "JSON array", None),
    ('[{"directory": "/", "arguments": ["nvcc"], "file": "k.cu"}, {"directory": "/", "command": "nvcc"}]',
     "without \"file\"", "[1].file"),
    ('[{"directory": "/", "file": "k.cu"}]', "without \"arguments\"", "[0]"),
    ('[{"directory": "/", "file": "k.cu", "command": "nvcc \\"unclosed"}]', "cannot be split", "[0].command"),
    ('[3]', "not an object", "[0]"),
])
def test_a_bad_database_is_an_input_error_naming_file_and_entry_and_is_left_out(
        tmp_path: Path, content: str, says: str, key: str | None) -> None:
    path = tmp_path / "compile_commands.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_database(path)
    assert says in raised.value.message and raised.value.file == str(path) and raised.value.key == key
    lookup = flags_for(tmp_path / "k.cu", user=user_flags(defines=["X"]))
    assert lookup.problems and lookup.problems[0].file == str(path)
    assert lookup.flags.defines == ("X",)  # carried on without the database


def test_an_unreadable_or_missing_database_is_a_problem(tmp_path: Path) -> None:
    missing = flags_for(tmp_path / "k.cu", database=tmp_path / "nope.json")
    assert missing.problems and "cannot read" in missing.problems[0].message
    binary = tmp_path / "compile_commands.json"
    binary.write_bytes(b"\xff\xfe\x00")
    assert "cannot read" in flags_for(tmp_path / "k.cu").problems[0].message


def test_user_flags_follow_the_databases_and_the_settings_make_a_setup(tmp_path: Path) -> None:
    write_db(tmp_path, [entry(tmp_path, "k.cu", "-Iinc", "-std=c++17")])
    setup = CompileSetup(user=user_flags(["extra"], ["Y=1"], base=tmp_path))
    flags = setup.lookup(tmp_path / "k.cu").flags
    assert flags.include_dirs == (str(tmp_path / "inc"), str(tmp_path / "extra"))
    assert flags.defines == ("Y=1",) and flags.std == "c++17"
    assert "given" in flags.origin and "compile_commands.json" in flags.origin
    assert CompileSetup(discover=False).lookup(tmp_path / "k.cu").flags.empty
    assert CompileSetup().lookup(None).flags.empty
    from_settings = compile_setup(str(tmp_path / "compile_commands.json"), ["-DZ"])
    got = from_settings.lookup(tmp_path / "elsewhere" / "k.cu").flags
    assert got.extra == ("-DZ",) and got.include_dirs == (str(tmp_path / "inc"),)
    assert compile_setup("", []).database is None


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("nvcc") is None, reason="needs cmake and nvcc")
def test_the_checked_in_database_is_what_cmake_generates(tmp_path: Path) -> None:
    import subprocess

    copy = tmp_path / "project"
    shutil.copytree(PROJECT, copy, ignore=shutil.ignore_patterns("build"))
    subprocess.run(["sh", str(copy / "regenerate.sh")], check=True, capture_output=True, timeout=300)
    import shlex

    def commands(root: Path) -> list[list[str]]:
        entries = json.loads((root / "build" / "compile_commands.json").read_text(encoding="utf-8"))
        return [shlex.split(e["command"])[1:] + [e["file"], e["directory"]] for e in entries]

    def response(root: Path) -> list[str]:
        return shlex.split((root / "build" / "CMakeFiles/scale.dir/includes_CUDA.rsp").read_text(encoding="utf-8"))

    assert commands(copy) == commands(PROJECT)  # the same entries, up to the nvcc path and quoting
    assert response(copy) == response(PROJECT)
    assert flags_for(copy / "src" / "scale.cu").flags.include_dirs == (str(copy / "include"),)
