"""Defaults and limits defined once, for the server's settings, the CLI flags and the search.

The VS Code client declares the same settings in client-vscode/package.json (its settings UI
validates against that schema) and normalises them in client-vscode/src/core/settings.ts;
tests/unit/app/test_limits.py fails when either disagrees with the values here.
Pure constants: importable from anywhere (engines, settings, commands) without cycles.
"""

from __future__ import annotations

SEARCH_STRATEGIES = ("mcgs", "random", "greedy", "cot", "rules")
DEFAULT_SEARCH_STRATEGY = "mcgs"
# Candidates judged per optimize run: each costs a compile, a check and a timing (seconds).
DEFAULT_SEARCH_BUDGET = 24
SEARCH_BUDGET_RANGE = (1, 1_000)

DEFAULT_DEBOUNCE_MS = 150
DEBOUNCE_MS_RANGE = (0, 10_000)

DEFAULT_MODEL_GPU_LAYERS = 0
MODEL_GPU_LAYERS_RANGE = (-1, 100_000)  # -1: all layers (llama.cpp)
DEFAULT_MODEL_THREADS = 0  # llama.cpp's default
MODEL_THREADS_RANGE = (0, 1_024)
DEFAULT_MODEL_CONTEXT = 4_096
MODEL_CONTEXT_RANGE = (512, 1_048_576)

LOG_LEVELS = ("error", "warning", "info", "debug")
RULE_CODE_PATTERN = r"^R[0-9]{3}$"  # enabledRules, severityOverrides keys
ARCH_PATTERN = r"^(sm_[0-9]{2,3}[a-z]?)?$"  # empty: the device's, else sm_90
DEFAULT_ARCH = "sm_90"  # what nvcc compiles for when neither a device nor a setting names one
DEFAULT_LOG_LEVEL = "info"

# The project's compile flags (validate/compile_db.py): "" = the nearest compile_commands.json
DEFAULT_COMPILE_COMMANDS = ""
EXTRA_COMPILER_ARGS_MAX = 256  # items of extraCompilerArgs
# Flags ReGraphT sets itself (arch, outputs, dependency files, the compile step): refused in
# extraCompilerArgs, as `flag`, `flag=value` or (the -M family) any `-M...`.
REFUSED_COMPILER_ARGS = ("-o", "--output-file", "-arch", "--gpu-architecture", "-code", "--gpu-code",
                         "-gencode", "--generate-code", "-c", "--compile", "-cubin", "--cubin", "-ptx", "--ptx",
                         "-E", "--preprocess", "-x", "--x", "-odir", "--output-directory")
