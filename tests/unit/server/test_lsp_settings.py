from regrapht.settings import ProblemMemory, Settings, parse_settings


def test_defaults_when_nothing_is_set():
    settings, problems = parse_settings(None)
    assert settings == Settings()
    assert settings.debounce_ms == 150 and settings.search_strategy == "mcgs" and settings.model_context == 4096
    assert problems == []


def test_camel_case_keys_are_read():
    settings, problems = parse_settings(
        {
            "enabledRules": ["R001", "R003"],
            "severityOverrides": {"R001": "hint"},
            "debounceMs": 40,
            "modelPath": "/m.gguf",
            "backgroundValidation": True,
            "logLevel": "debug",
            "arch": "sm_90",
            "python": "/usr/bin/python3",  # client-only key: ignored silently
        }
    )
    assert problems == []
    assert settings.enabled_rules == ("R001", "R003")
    assert settings.severity_overrides == {"R001": "hint"}
    assert settings.debounce_ms == 40 and settings.model_path == "/m.gguf"
    assert settings.background_validation is True and settings.log_level == "debug"


def test_bad_values_are_replaced_by_defaults_and_reported():
    settings, problems = parse_settings(
        {
            "debounceMs": "fast",
            "searchBudget": -3,
            "searchStrategy": "magic",
            "backgroundValidation": 1,
            "severityOverrides": {"R001": "fatal"},
            "enabledRules": "R001",
            "modelThreads": 4,
        }
    )
    defaults = Settings()
    assert settings.debounce_ms == defaults.debounce_ms
    assert settings.search_budget == defaults.search_budget
    assert settings.search_strategy == defaults.search_strategy
    assert settings.background_validation is False
    assert settings.severity_overrides == {}
    assert settings.enabled_rules == ()
    assert settings.model_threads == 4  # the good value next to bad ones is kept
    keys = sorted(p.key for p in problems)
    assert keys == sorted(
        ["debounceMs", "searchBudget", "searchStrategy", "backgroundValidation", "severityOverrides", "enabledRules"]
    )
    assert all("using the default" in p.describe() for p in problems)


def test_not_an_object():
    settings, problems = parse_settings(["debounceMs", 3])
    assert settings == Settings() and len(problems) == 1


def test_null_means_default():
    settings, problems = parse_settings({"debounceMs": None})
    assert settings.debounce_ms == 150 and problems == []


def test_problems_are_shown_once():
    memory = ProblemMemory()
    _, problems = parse_settings({"debounceMs": "fast"})
    assert len(memory.new(problems)) == 1
    _, again = parse_settings({"debounceMs": "fast", "searchBudget": 0})
    fresh = memory.new(again)
    assert [p.key for p in fresh] == ["searchBudget"]
    assert memory.new(again) == []


def test_compile_database_settings():
    settings, problems = parse_settings({"compileCommands": "/p/build/compile_commands.json",
                                         "extraCompilerArgs": ["-I/opt/inc", "-DX=1", "--expt-relaxed-constexpr"]})
    assert problems == []
    assert settings.compile_commands == "/p/build/compile_commands.json"
    assert settings.extra_compiler_args == ("-I/opt/inc", "-DX=1", "--expt-relaxed-constexpr")
    for bad in (["-o", "x.o"], ["-arch=sm_80"], ["-MD"], ["-c"], "-Iinc", [3], ["-I"] * 257):
        settings, problems = parse_settings({"extraCompilerArgs": bad})
        assert settings.extra_compiler_args == () and [p.key for p in problems] == ["extraCompilerArgs"], bad
    settings, problems = parse_settings({"compileCommands": 3})
    assert settings.compile_commands == "" and problems[0].key == "compileCommands"
