"""Nsight Compute profiles as search priors (issue 31, docs/search.md change 21): the mapping from a
parsed profile to per-technique boosts (search/profile_evidence.py), the saved-profile JSON read
back (validate/profile_report.py), and the search raising the boosted techniques' priors on the
code the profile measured, never leaving the others out.

The fixture tests/data/profiles/dgemv_cm_ld.{raw.csv,details.txt} is written in the two formats
`validate/profiler.py` reads from `ncu --import` (the raw page as CSV, the details page as text)
and parsed by it here: the train kernel dgemv_colmajor_ld (one thread per row of a column-major
matrix, so a warp's loads of a column are contiguous) at a size that fills an H200 (2^20 rows,
64 columns), as Nsight Compute reads such a kernel: DRAM-bound, coalesced, its warps waiting on
global loads. Without a profile the search is the one before profile priors:
tests/data/profiles/search_traces.json holds every candidate the search judged on nine train
kernels before this change (`traces.py`), and it judges the same ones in the same order."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from regrapht.app.optimize import kernel_target
from regrapht.errors import InputError
from regrapht.graph import load_bundled_graph
from regrapht.inputs import read_source
from regrapht.search.pipeline import optimize
from regrapht.search.profile_evidence import (
    COMPUTE_SIDE,
    LOW_OCCUPANCY,
    MEMORY_SIDE,
    NO_PROFILE,
    RULE_WITHOUT_ESTIMATE,
    SPLIT_WORK,
    STALL_TECHNIQUES,
    bottleneck_of,
    profile_boosts,
    profile_view,
    raised_prior,
    rule_estimate,
)
from regrapht.search.request import OptimizeRequest
from regrapht.search.run import SearchRun, SearchTools
from regrapht.spec.model import parse_spec
from regrapht.techniques import technique_named
from regrapht.validate.profile_report import (
    Profile,
    ProfileFailure,
    ProfileRule,
    parse_profile,
    profile_from_json,
)
from regrapht.validate.profiler import parse_raw, profile_of

from .fakes import FakeEvaluator, search_request
from .traces import ROOT, SEARCHES, TASKS, TRAIN, key_of, synthetic_speed, task_request, trace

DATA = ROOT / "tests/data/profiles"
TRACES: dict[str, list[str]] = json.loads((DATA / "search_traces.json").read_text())
DGEMV = TRAIN / "dgemv_colmajor_ld"
LARGE = {"nrows": 1 << 20, "lda": 1 << 20, "ncols": 64}  # the size the fixture profile measured


def fixture_profile() -> Profile:
    metrics = parse_raw((DATA / "dgemv_cm_ld.raw.csv").read_text(), "_Z11dgemv_cm_ldiiiPKdS0_Pd")
    return profile_of("dgemv_cm_ld", metrics, (DATA / "dgemv_cm_ld.details.txt").read_text())


def spec_text(values: dict[str, int]) -> str:
    """dgemv_colmajor_ld's spec with its integer arguments set to `values`."""
    text = (DGEMV / "dgemv_colmajor_ld.regrapht.toml").read_text()
    for name, value in values.items():
        text, count = re.subn(rf'(name = "{name}"\ntype = "int"\nvalue = )"[^"]*"', rf'\1"{value}"', text)
        assert count == 1, name
    return text


def dgemv_search(strategy: str, budget: int, seed: int, profile: Profile | None,
                 values: dict[str, int] = LARGE) -> tuple[OptimizeRequest, SearchTools, object]:
    source, _ = read_source(DGEMV / "dgemv_colmajor_ld.cu")
    kernel = parse_spec(spec_text(values), file="dgemv.regrapht.toml").kernels[0]
    request = replace(search_request(source, kernel.name, strategy, budget, seed), profile=profile)
    return request, SearchTools(FakeEvaluator(synthetic_speed), None, load_bundled_graph()), kernel_target(kernel)


def profile(dram: float | None = 30.0, sm: float | None = 30.0, occupancy: float | None = 90.0,
            stalls: tuple[tuple[str, float], ...] = (), rules: tuple[ProfileRule, ...] = ()) -> Profile:
    return Profile("k", dram, sm, occupancy, stalls, rules)


# ---- the mapping ---------------------------------------------------------------------------------

def test_the_fixture_reads_as_a_dram_bound_kernel_waiting_on_global_loads() -> None:
    parsed = fixture_profile()
    assert (parsed.dram_pct, parsed.sm_pct, parsed.occupancy_pct) == (86.37, 14.22, 88.95)
    assert parsed.stalls[0] == ("long_scoreboard", 38.42)
    assert [r.kind for r in parsed.rules] == ["INF", "OPT", "INF"]
    boosts = profile_boosts(parsed)
    assert boosts.bottleneck == "memory"
    assert [b.technique for b in boosts.boosts] == ["vectorized_access", "shared_memory_tiling"]
    top_stalls = 38.42 + 2.36 + 0.94 + 0.42
    assert boosts.weight("vectorized_access") == pytest.approx(0.8637 + 38.42 / top_stalls + 0.128, abs=1e-3)
    assert boosts.weight("shared_memory_tiling") == pytest.approx(0.8637 + 38.42 / top_stalls, abs=1e-3)
    # coalesced: no rule measured wasted sectors, so coalescing is not raised
    assert boosts.weight("memory_coalescing") == 0.0
    assert any("Est. Speedup: 12.8%" in r for r in boosts.boosts[0].reasons)
    assert boosts.weight("launch_configuration") == 0.0  # 89% achieved occupancy


def test_memory_bound_with_l1tex_stalls_and_uncoalesced_loads_raises_the_memory_side() -> None:
    rules = (ProfileRule("OPT", "Est. Speedup: 36.04% The memory access pattern for global loads from L1TEX might "
                                "not be optimal: only 4.0 of the transmitted 32 bytes per sector are utilized",
                         "memory_coalescing"),)
    boosts = profile_boosts(profile(88.0, 21.0, 92.0, (("long_scoreboard", 40.0), ("wait", 3.0)), rules))
    assert boosts.bottleneck == "memory"
    assert [b.technique for b in boosts.boosts] == ["shared_memory_tiling", "vectorized_access", "memory_coalescing"]
    assert boosts.weight("vectorized_access") == pytest.approx(0.88 + 40 / 43, abs=1e-3)
    # coalescing by the rule that measured the wasted sectors, at its estimate
    assert boosts.weight("memory_coalescing") == pytest.approx(0.3604, abs=1e-3)
    assert not set(COMPUTE_SIDE) & {b.technique for b in boosts.boosts}
    assert boosts.weight("loop_unrolling") == 0.0  # the wait stall is 7% of the stalls: not dominant


def test_low_occupancy_raises_launch_configuration_by_how_low_it_is() -> None:
    boosts = profile_boosts(profile(occupancy=25.0))
    assert [b.technique for b in boosts.boosts] == ["launch_configuration"]
    assert boosts.weight("launch_configuration") == 0.75
    assert "achieved occupancy 25%" in boosts.boosts[0].reasons[0]
    assert profile_boosts(profile(occupancy=LOW_OCCUPANCY)).boosts == ()


def test_a_latency_bound_kernel_raises_only_what_its_stalls_and_rules_say() -> None:
    assert bottleneck_of(profile()) == "latency" and profile_boosts(profile()).boosts == ()
    barrier = profile_boosts(profile(stalls=(("barrier", 9.0), ("long_scoreboard", 2.0))))
    assert {b.technique for b in barrier.boosts} == {"warp_shuffle_reduction", "launch_configuration"}
    assert profile_boosts(profile(stalls=(("misc", 30.0),))).boosts == ()  # names no technique
    assert profile_boosts(profile(stalls=(("lg_throttle", 0.6),))).boosts == ()  # under a cycle per instruction
    assert bottleneck_of(profile(dram=None)) == "unknown"


def test_a_grid_too_small_for_the_device_raises_block_shapes_and_work_splitting() -> None:
    rule = ProfileRule("OPT", "This kernel grid is too small to fill the available resources on this device, "
                              "resulting in only 0.2 full waves across all SMs.", "launch_configuration")
    boosts = profile_boosts(profile(rules=(rule,)))
    assert {b.technique for b in boosts.boosts} == {"launch_configuration", *SPLIT_WORK}
    assert all(b.weight == RULE_WITHOUT_ESTIMATE for b in boosts.boosts)


def test_only_optimization_and_warning_rules_with_a_known_technique_count() -> None:
    rules = (ProfileRule("INF", "Est. Speedup: 90% bank conflicts", "bank_conflict_padding"),
             ProfileRule("WRN", "a rule naming nothing", ""),
             ProfileRule("OPT", "a hand-edited technique", "no_such_technique"),
             ProfileRule("WRN", "Bank conflicts in shared stores", "padding"))  # a synonym
    boosts = profile_boosts(profile(rules=rules))
    assert [(b.technique, b.weight) for b in boosts.boosts] == [("bank_conflict_padding", RULE_WITHOUT_ESTIMATE)]


def test_nsight_computes_estimates_are_read_from_the_rule_text() -> None:
    assert rule_estimate("Est. Speedup: 36.04% The memory ...") == pytest.approx(0.3604)
    assert rule_estimate("Est. Local Speedup: 87.5% The 2.00 theoretical warps ...") == pytest.approx(0.875)
    assert rule_estimate("Est. Local Speedup: 80% Est. Global Speedup: 12.5% ...") == pytest.approx(0.125)
    assert rule_estimate("no estimate here") is None


def test_every_technique_the_mapping_names_is_in_the_registry() -> None:
    named = {*MEMORY_SIDE, *COMPUTE_SIDE, *SPLIT_WORK, "launch_configuration",
             *(t for _, techniques in STALL_TECHNIQUES.values() for t in techniques)}
    assert all(technique_named(name).name == name for name in named)


def test_the_boosts_hold_on_the_code_the_profile_measured_only() -> None:
    view = profile_view(fixture_profile(), "original text")
    assert view.boost_on("original text", "vectorized_access") > 1.0
    assert view.boost_on("rewritten text", "vectorized_access") == 0.0
    assert NO_PROFILE.boost_on("original text", "vectorized_access") == 0.0
    # a technique whose applier also implements a raised one is raised by it
    assert view.boost_on("original text", "block_per_row") == 0.0
    assert view.boost_on("original text", "block_per_row", ("shared_memory_tiling",)) == \
        view.boost_on("original text", "shared_memory_tiling")
    assert profile_view(None, "original text") is NO_PROFILE


# ---- saved profiles ------------------------------------------------------------------------------

def test_a_saved_profile_reads_back_in_each_shape_it_is_saved_in() -> None:
    parsed = fixture_profile()
    saved = json.loads(json.dumps(parsed.to_json()))
    assert profile_from_json(saved, "dgemv_cm_ld") == parsed
    assert profile_from_json({"kernel": "dgemv_cm_ld", "profile": saved}, "dgemv_cm_ld") == parsed  # bench --profile --json
    assert profile_from_json({"profiles": {"dgemv_cm_ld": saved}}, "dgemv_cm_ld") == parsed  # validateKernel's answer
    template = {**saved, "kernel": "scale<float>"}
    assert profile_from_json(template, "scale").kernel == "scale<float>"
    assert profile_from_json({"error": "no device"}, "dgemv_cm_ld") == ProfileFailure("no device")


@pytest.mark.parametrize(("data", "says"), [
    ([], "a JSON object"),
    ({"kernel": "other", "dram_pct": 1.0}, "of kernel 'other'"),
    ({"profiles": {"other": {}}}, "no kernel 'dgemv_cm_ld'"),
    ({"kernel": "dgemv_cm_ld", "dram_pct": "high"}, "dram_pct must be"),
    ({"kernel": "dgemv_cm_ld", "stalls": [["lg_throttle"]]}, "stalls[0]"),
    ({"kernel": "dgemv_cm_ld", "rules": [{"kind": 1}]}, "rules[0]"),
    ({"dram_pct": 3.0}, "names its kernel"),
])
def test_anything_else_is_bad_input_naming_the_key(data: object, says: str) -> None:
    with pytest.raises(InputError) as raised:
        profile_from_json(data, "dgemv_cm_ld")
    assert says in str(raised.value)


def test_stalls_read_back_largest_first() -> None:
    read = parse_profile({"kernel": "k", "stalls": [["wait", 1.0], ["barrier", 5.0]]})
    assert isinstance(read, Profile) and read.stalls == (("barrier", 5.0), ("wait", 1.0))


# ---- the search ----------------------------------------------------------------------------------

@pytest.mark.slow  # 27 searches on the real appliers: ~100 s on the 2-core VM
@pytest.mark.parametrize("task", TASKS)
def test_without_a_profile_the_search_judges_what_it_judged_before(task: str) -> None:
    for strategy, budget, seed in SEARCHES:
        request, tools, target = task_request(task, strategy, budget, seed)
        assert trace(request, tools, target) == TRACES[key_of(task, strategy, budget, seed)], (strategy, budget, seed)


def test_a_profile_that_raises_nothing_changes_nothing() -> None:
    for strategy, budget, seed in SEARCHES:
        request, tools, target = task_request("dgemv_colmajor_ld", strategy, budget, seed)
        quiet = replace(request, profile=profile())  # latency-bound, no stalls, no rules: no boost
        assert trace(quiet, tools, target) == TRACES[key_of("dgemv_colmajor_ld", strategy, budget, seed)]


def first_techniques(strategy: str, budget: int, seed: int, profile: Profile | None,
                     values: dict[str, int] = LARGE) -> list[str]:
    return [step.split()[0] for step in trace(*dgemv_search(strategy, budget, seed, profile, values))]


@pytest.mark.parametrize("seed", [0, 1])
def test_the_profile_changes_mcgs_first_choice_and_leaves_the_others_in(seed: int) -> None:
    """Column split and vectorized access both match dgemv_cm_ld; the graph's priors (4.2 against
    1.7) put the column split first; the profile of the large launch (DRAM-bound, coalesced,
    waiting on global loads) raises vectorized access past it. The column split is still judged
    within the budget: a raised technique comes first, none is left out."""
    before = first_techniques("mcgs", 8, seed, None)
    after = first_techniques("mcgs", 8, seed, fixture_profile())
    assert before[0] == "column_split_reduction" and "vectorized_access" in before
    assert after[0] == "vectorized_access"
    assert "column_split_reduction" in after


def test_greedy_reads_the_same_order() -> None:
    assert first_techniques("greedy", 3, 0, None)[0] == "column_split_reduction"
    assert first_techniques("greedy", 3, 0, fixture_profile())[0] == "vectorized_access"


def test_the_profile_of_the_small_launch_keeps_the_column_split_first() -> None:
    """At the corpus size (4096 rows: 32 blocks of 128 threads for 132 SMs) Nsight Compute says the
    grid is too small to fill the device and occupancy is low: that raises the work-splitting
    techniques and block shapes, and the column split stays first."""
    small = Profile("dgemv_cm_ld", 6.1, 3.9, 5.8, (("long_scoreboard", 41.0), ("wait", 1.2)), (
        ProfileRule("OPT", "Est. Speedup: 75.8% This kernel grid is too small to fill the available resources on "
                           "this device, resulting in only 0.2 full waves across all SMs.", "launch_configuration"),))
    corpus = {"nrows": 4096, "lda": 4096, "ncols": 4096}
    boosts = profile_boosts(small)
    assert boosts.weight("column_split_reduction") == pytest.approx(0.758)
    assert boosts.weight("launch_configuration") == pytest.approx(0.758 + 0.942)
    assert first_techniques("mcgs", 3, 0, small, corpus)[0] == "column_split_reduction"


def test_a_strong_prior_the_profile_does_not_name_stays_ahead() -> None:
    """raised_prior: a boost multiplies a prior of at least 1 by (1 + boost): the profile orders
    comparable priors and does not override what the graph measured other algorithms gaining."""
    assert raised_prior(4.24, 0.0) == 4.24 and raised_prior(float("inf"), 0.0) == float("inf")
    assert raised_prior(1.71, 1.0) == pytest.approx(3.42)
    assert raised_prior(0.0, 0.5) == 0.5 and raised_prior(-0.5, 0.5) == 0.0
    assert raised_prior(1.71, 1.9) < 13.16  # vectorizing after the profile, tiling's graph prior


def test_the_result_lists_the_boosts_and_whether_the_strategy_read_them() -> None:
    for strategy, applied in (("mcgs", True), ("rules", False)):
        request, tools, target = dgemv_search(strategy, 2, 0, fixture_profile())
        data = optimize(request, target, tools).to_json()  # type: ignore[arg-type]
        shown = data["profile"]
        assert isinstance(shown, dict) and shown["applied"] is applied and shown["bottleneck"] == "memory"
        assert shown["kernel"] == "dgemv_cm_ld"
        assert [b["technique"] for b in shown["boosts"]] == ["vectorized_access", "shared_memory_tiling"]
        assert all(b["reasons"] and b["boost"] > 0 for b in shown["boosts"])
    request, tools, target = dgemv_search("mcgs", 2, 0, None)
    assert optimize(request, target, tools).to_json()["profile"] is None  # type: ignore[arg-type]


def test_the_session_reads_the_requests_profile() -> None:
    request, tools, target = dgemv_search("mcgs", 2, 0, fixture_profile())
    session = SearchRun.open(request, target, tools)  # type: ignore[arg-type]
    assert session.profile.boost_on(request.source, "vectorized_access") > 1.0
    assert SearchRun.open(replace(request, profile=None), target, tools).profile is NO_PROFILE  # type: ignore[arg-type]
