"""A project's compile flags for one file: `compile_commands.json` read as clangd reads it.

Owns: finding the database (the nearest `compile_commands.json` in the file's folder or a
parent, or in a `build/` subfolder of one of those; or the path a setting or `--compile-commands`
names), parsing its entries (`command` or `arguments`, paths relative to `directory`), taking
from an entry what matters to nvcc for a candidate compile (`-I`, `-isystem`, `-D`, `-U`,
`-include`, `-std=`, the CUDA language flags such as `--expt-relaxed-constexpr`; never outputs,
dependency files, archs or `-c`: the compiler sets its own), the neighbour's entry for a file the
database lacks (the same folder and stem first, then the longest shared path, as clangd
interpolates), and the flags the user adds (`extraCompilerArgs`, `-I`/`-D` on the command
line). The result is a frozen `CompileFlags` that travels with every compile request.

Bad input (an unreadable or malformed database, an entry without `file`) is an `InputError`
naming the file and entry, returned as a problem: the caller reports it and carries on without
the database. Pure apart from reading the database files; no state (a caller that wants the
one-time neighbour notice keeps `NoticeMemory`).
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from regrapht.errors import InputError

log = logging.getLogger(__name__)

DATABASE_NAME = "compile_commands.json"

# Flags kept as they are: CUDA language features a kernel's source may need to compile.
_CUDA_LANGUAGE_FLAGS = frozenset({
    "--expt-relaxed-constexpr", "-expt-relaxed-constexpr",
    "--extended-lambda", "-extended-lambda", "--expt-extended-lambda", "-expt-extended-lambda",
    "--use_fast_math", "-use_fast_math",
    "--ftz=true", "--ftz=false", "--prec-div=true", "--prec-div=false",
    "--prec-sqrt=true", "--prec-sqrt=false", "--fmad=true", "--fmad=false",
    "-ftz=true", "-ftz=false", "-prec-div=true", "-prec-div=false",
    "-prec-sqrt=true", "-prec-sqrt=false", "-fmad=true", "-fmad=false",
})
# Spellings of the flags read, each to its short form; the value follows, joined or separate.
_VALUE_FLAGS = {
    "-I": "-I", "--include-path": "-I",
    "-isystem": "-isystem", "--system-include": "-isystem",
    "-D": "-D", "--define-macro": "-D",
    "-U": "-U", "--undefine-macro": "-U",
    "-include": "-include", "--pre-include": "-include",
    "-std": "-std", "--std": "-std",
    "-x": "-x", "--x": "-x",
}
# Flags that take a separate value and are dropped with it (outputs, dependency files, archs, ...).
_DROPPED_WITH_VALUE = frozenset({
    "-o", "--output-file", "-MF", "-MT", "-MQ", "--dependency-output", "-odir", "--output-directory",
    "-arch", "--gpu-architecture", "-code", "--gpu-code", "-gencode", "--generate-code",
    "-ccbin", "--compiler-bindir", "-Xcompiler", "--compiler-options",
    "-Xlinker", "--linker-options", "-Xptxas", "--ptxas-options", "-l", "-L", "--library-path",
})


@dataclass(frozen=True)
class CompileFlags:
    """What a compile of a project's file needs beyond the source: part of every compile request."""

    include_dirs: tuple[str, ...] = ()  # -I, absolute where the database made them so
    system_include_dirs: tuple[str, ...] = ()  # -isystem
    defines: tuple[str, ...] = ()  # NAME or NAME=VALUE (-D)
    undefines: tuple[str, ...] = ()  # -U
    forced_includes: tuple[str, ...] = ()  # -include
    std: str | None = None  # e.g. "c++17"; None: the compiler's default
    cuda_flags: tuple[str, ...] = ()  # --expt-relaxed-constexpr and the like, verbatim
    extra: tuple[str, ...] = ()  # `extraCompilerArgs`, verbatim, last
    origin: str = ""  # where they came from, for the card and the log ("" = nowhere: no flags)

    @property
    def empty(self) -> bool:
        return not self.arguments()

    def arguments(self) -> tuple[str, ...]:
        """The nvcc arguments, in a fixed order (the compile cache keys on them)."""
        args: list[str] = []
        args += [f"-I{d}" for d in self.include_dirs]
        for d in self.system_include_dirs:
            args += ["-isystem", d]
        args += [f"-D{d}" for d in self.defines]
        args += [f"-U{u}" for u in self.undefines]
        for f in self.forced_includes:
            args += ["-include", f]
        if self.std is not None:
            args.append(f"-std={self.std}")
        return (*args, *self.cuda_flags, *self.extra)

    def describe(self) -> str:
        """One short line: the arguments and where they came from."""
        shown = " ".join(shlex.quote(a) for a in self.arguments()) or "default flags"
        if len(shown) > 160:
            shown = shown[:157] + "..."
        return f"{shown} ({self.origin})" if self.origin else shown

    def plus(self, other: CompileFlags) -> CompileFlags:
        """These flags, then `other`'s (the user's additions after the database's)."""
        if other.empty:
            return self
        if self.empty:
            return other
        return CompileFlags(
            include_dirs=(*self.include_dirs, *other.include_dirs),
            system_include_dirs=(*self.system_include_dirs, *other.system_include_dirs),
            defines=(*self.defines, *other.defines), undefines=(*self.undefines, *other.undefines),
            forced_includes=(*self.forced_includes, *other.forced_includes),
            std=other.std or self.std, cuda_flags=(*self.cuda_flags, *other.cuda_flags),
            extra=(*self.extra, *other.extra), origin=" + ".join(o for o in (self.origin, other.origin) if o))


NO_FLAGS = CompileFlags()


def _value_flag(token: str) -> tuple[str, str | None] | None:
    """(short form, joined value or None when the value is the next token) for a flag read."""
    if token in _VALUE_FLAGS:
        return _VALUE_FLAGS[token], None
    for spelling, short in _VALUE_FLAGS.items():
        if token.startswith(spelling + "="):
            return short, token[len(spelling) + 1:]
        # joined values: -Iinc, -DX=1, -isystem/usr/x; not the long spellings, not "-std" ("-std=c++17" above)
        if len(spelling) == 2 and token.startswith(spelling) and len(token) > 2:
            return short, token[2:]
    if token.startswith("-isystem") and len(token) > len("-isystem"):
        return "-isystem", token[len("-isystem"):]
    return None


_OPTIONS_FILE = ("--options-file", "-optf")


def _expand_options_files(arguments: Sequence[str], directory: Path) -> list[str]:
    """The arguments with each `--options-file FILE` (CMake writes the include dirs there) replaced
    by the file's arguments; a missing file is logged and skipped (the build folder was cleaned)."""
    expanded: list[str] = []
    tokens = iter(arguments)
    for token in tokens:
        name = None
        if token in _OPTIONS_FILE:
            name = next(tokens, None)
        elif token.startswith(tuple(f + "=" for f in _OPTIONS_FILE)):
            name = token.split("=", 1)[1]
        if name is None:
            expanded.append(token)
            continue
        path = Path(name) if os.path.isabs(name) else directory / name
        try:
            expanded += shlex.split(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            log.warning("%s: the options file of a compile command cannot be read (%s); its flags are left out",
                        path, error)
    return expanded


def flags_from_arguments(arguments: Sequence[str], directory: Path, *, origin: str) -> CompileFlags:
    """What matters to nvcc in one compile command (arguments[0] is the compiler); paths are made
    absolute against `directory`. Unknown flags, the source file, outputs and archs are dropped."""
    includes: list[str] = []
    system: list[str] = []
    defines: list[str] = []
    undefines: list[str] = []
    forced: list[str] = []
    cuda: list[str] = []
    std: str | None = None
    tokens = iter(_expand_options_files(arguments[1:], directory))

    def absolute(value: str) -> str:
        return str(Path(value)) if os.path.isabs(value) else os.path.normpath(directory / value)

    for token in tokens:
        if token in _DROPPED_WITH_VALUE:
            next(tokens, None)
            continue
        if token in _CUDA_LANGUAGE_FLAGS:
            if token not in cuda:
                cuda.append(token)
            continue
        parsed = _value_flag(token)
        if parsed is None:
            continue
        short, value = parsed
        if value is None:
            value = next(tokens, None)
            if value is None:
                break
        if short == "-I":
            includes.append(absolute(value))
        elif short == "-isystem":
            system.append(absolute(value))
        elif short == "-D":
            defines.append(value)
        elif short == "-U":
            undefines.append(value)
        elif short == "-include":
            forced.append(absolute(value) if (directory / value).is_file() else value)
        elif short == "-std":
            std = value
        # "-x cu" (or c++): every compile here is CUDA; the compiler passes -x cu itself
    return CompileFlags(tuple(includes), tuple(system), tuple(defines), tuple(undefines), tuple(forced),
                        std, tuple(cuda), origin=origin)


def user_flags(include_dirs: Iterable[str] = (), defines: Iterable[str] = (), extra: Iterable[str] = (),
               *, base: Path | None = None) -> CompileFlags:
    """The flags a user gives (`-I`, `-D` on the command line, `extraCompilerArgs`); relative include
    dirs are taken against `base` (the current folder)."""
    root = base or Path.cwd()
    includes = tuple(d if os.path.isabs(d) else os.path.normpath(root / d) for d in include_dirs)
    defines = tuple(defines)
    extra = tuple(extra)
    if not (includes or defines or extra):
        return NO_FLAGS
    return CompileFlags(include_dirs=includes, defines=defines, extra=extra, origin="given")


# ---------------------------------------------------------------------------------------------
# The database


@dataclass(frozen=True)
class DatabaseEntry:
    file: Path  # absolute, normalised
    directory: Path
    arguments: tuple[str, ...]


@dataclass(frozen=True)
class CompileDatabase:
    path: Path
    entries: tuple[DatabaseEntry, ...]

    def entry_for(self, file: Path) -> DatabaseEntry | None:
        wanted = Path(os.path.normpath(file))
        return next((e for e in self.entries if e.file == wanted), None)

    def neighbour_of(self, file: Path) -> DatabaseEntry | None:
        """clangd's choice for a file the database lacks: the same folder and stem (foo.cuh ->
        foo.cu), else the longest shared path, then the same folder; the first entry on ties."""
        wanted = Path(os.path.normpath(file))

        def score(entry: DatabaseEntry) -> tuple[int, int, int]:
            same_dir = entry.file.parent == wanted.parent
            shared = len(os.path.commonpath([str(entry.file.parent), str(wanted.parent)]).split(os.sep))
            return (int(same_dir and entry.file.stem == wanted.stem), shared, int(same_dir))

        best: DatabaseEntry | None = None
        best_score = (-1, -1, -1)
        for entry in self.entries:
            current = score(entry)
            if current > best_score:
                best, best_score = entry, current
        return best


def _split_command(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError as error:
        raise ValueError(f"its command cannot be split into arguments ({error})") from error


def parse_database(text: str, path: Path) -> CompileDatabase:
    """The entries of a `compile_commands.json` (InputError naming the file and entry)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"not JSON: {error.msg}", file=str(path), line=error.lineno) from error
    if not isinstance(raw, list):
        raise InputError("a compile database is a JSON array of entries", file=str(path))
    entries = []
    for index, item in enumerate(raw):
        key = f"[{index}]"
        if not isinstance(item, dict):
            raise InputError("an entry is not an object", file=str(path), key=key)
        name, directory = item.get("file"), item.get("directory", "")
        if not isinstance(name, str) or not name:
            raise InputError("an entry without \"file\"", file=str(path), key=f"{key}.file")
        if not isinstance(directory, str):
            raise InputError("\"directory\" is not a string", file=str(path), key=f"{key}.directory")
        folder = Path(directory) if os.path.isabs(directory) else path.parent / directory
        arguments = item.get("arguments")
        command = item.get("command")
        if isinstance(arguments, list) and all(isinstance(a, str) for a in arguments):
            args = tuple(arguments)
        elif isinstance(command, str):
            try:
                args = tuple(_split_command(command))
            except ValueError as error:
                raise InputError(str(error), file=str(path), key=f"{key}.command") from error
        else:
            raise InputError("an entry without \"arguments\" (a list of strings) or \"command\" (a string)",
                             file=str(path), key=key)
        file = Path(os.path.normpath(folder / name))
        entries.append(DatabaseEntry(file, Path(os.path.normpath(folder)), args))
    return CompileDatabase(path, tuple(entries))


def load_database(path: Path) -> CompileDatabase:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise InputError(f"cannot read the compile database: {reason}", file=str(path)) from error
    return parse_database(text, path)


def _parents(file: Path) -> Iterator[Path]:
    folder = file.parent
    yield folder
    yield from folder.parents


def discover_database(file: Path) -> Path | None:
    """The nearest `compile_commands.json` in the file's folder or a parent, or in `build/` of one."""
    for folder in _parents(Path(os.path.abspath(file))):
        for candidate in (folder / DATABASE_NAME, folder / "build" / DATABASE_NAME):
            if candidate.is_file():
                return candidate
    return None


# ---------------------------------------------------------------------------------------------
# One file's flags


@dataclass(frozen=True)
class FlagsLookup:
    """A file's flags and what the caller should tell the user about them."""

    file: Path
    flags: CompileFlags
    database: Path | None = None  # the database read, if any
    neighbour: Path | None = None  # the file whose entry was taken, when the database lacks this one
    problems: tuple[InputError, ...] = ()  # bad databases: reported, then carried on without

    @property
    def notice(self) -> str | None:
        """The one-time notice for a file the database lacks (None when it has it or there is none)."""
        if self.database is None:
            return None
        if self.neighbour is not None:
            return (f"{self.file} is not in {self.database}: compiling it with the flags of "
                    f"{self.neighbour} (the nearest entry)")
        return None


def flags_for(file: Path, *, database: Path | None = None, user: CompileFlags = NO_FLAGS) -> FlagsLookup:
    """The flags to compile `file` with: its entry in `database` (None: the discovered one), else
    its neighbour's; then the user's. A bad database is a problem, and the user's flags alone are used."""
    path = database if database is not None else discover_database(file)
    if path is None:
        return FlagsLookup(file, user)
    try:
        loaded = load_database(path)
    except InputError as error:
        return FlagsLookup(file, user, problems=(error,))
    target = Path(os.path.abspath(file))
    entry = loaded.entry_for(target)
    neighbour = None
    if entry is None:
        entry = loaded.neighbour_of(target)
        neighbour = entry.file if entry is not None else None
    if entry is None:
        return FlagsLookup(file, user, database=path)
    origin = f"{DATABASE_NAME}" + (f", from {entry.file.name}" if neighbour is not None else "")
    found = flags_from_arguments(entry.arguments, entry.directory, origin=origin)
    return FlagsLookup(file, found.plus(user), database=path, neighbour=neighbour)


class NoticeMemory:
    """The notices and problems already given, so each is given once per process (thread-safe)."""

    def __init__(self) -> None:
        self._given: set[str] = set()
        self._lock = threading.Lock()

    def fresh(self, lookup: FlagsLookup) -> list[str]:
        """The lookup's problems and notice not given yet (the caller shows or logs them)."""
        problems = [f"{p} (compiling without the compile database)" for p in lookup.problems]
        notices = [lookup.notice] if lookup.notice is not None else []
        new = []
        with self._lock:
            for message in (*problems, *notices):
                if message not in self._given:
                    self._given.add(message)
                    new.append(message)
        return new


@dataclass(frozen=True)
class CompileSetup:
    """How a workflow finds each file's flags: the database (None: the nearest one, when
    `discover`), then the user's flags (`extraCompilerArgs`, `-I`/`-D`)."""

    database: Path | None = None
    user: CompileFlags = NO_FLAGS
    discover: bool = True

    def lookup(self, file: Path | None) -> FlagsLookup:
        """The flags of `file` (None, an untitled text: the user's flags alone)."""
        if file is None or (self.database is None and not self.discover):
            return FlagsLookup(file or Path("untitled.cu"), self.user)
        return flags_for(file, database=self.database, user=self.user)


def compile_setup(database: str, extra_args: Sequence[str]) -> CompileSetup:
    """The setup of the settings `compileCommands` ("" = discover) and `extraCompilerArgs`."""
    extra = user_flags(extra=extra_args)
    return CompileSetup(Path(database).expanduser() if database else None, extra)
