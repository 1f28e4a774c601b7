"""FrontmatterAgentRegistry on real files: both capability forms, foreign keys, bad files, re-reading."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from blackboard.domain.capabilities import AgentCapability, rank
from blackboard.domain.signals import AgentSignal, SignalPayload, SignalType
from blackboard.infrastructure.agents import AgentFileProblem, FrontmatterAgentRegistry
from blackboard.infrastructure.agents import registry as registry_module

SHIPPED_AGENTS = Path(__file__).resolve().parents[2] / "agents"

RESEARCHER = """\
---
name: ps-researcher
description: Researches a topic.
capabilities:
  - type: RESEARCH
    score: 0.95
  - type: INVESTIGATION
    score: 0.7
command: python3 handlers/researcher.py
timeout: 120
---
You are a research agent.
"""


def write(folder: Path, file_name: str, text: str) -> Path:
    path = folder / file_name
    path.write_text(text, encoding="utf-8")
    return path


def agent(name: str, capabilities: str = "{RESEARCH: 0.9}", more: str = "") -> str:
    return f"---\nname: {name}\ncapabilities: {capabilities}\n{more}---\nInstructions of {name}.\n"


def touch_later(path: Path) -> None:
    """Move the file's mtime on, as a later edit would (coarse filesystem clocks can repeat a time)."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def messages(registry: FrontmatterAgentRegistry) -> list[str]:
    return [str(p) for p in registry.problems()]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "agents"
    path.mkdir()
    return path


# -- reading good files ------------------------------------------------------------------------------
def test_the_list_form_gives_a_profile_and_everything_a_worker_needs(folder):
    path = write(folder, "ps-researcher.md", RESEARCHER)

    [definition] = FrontmatterAgentRegistry(folder).definitions()

    assert definition.profile.agent_id == "ps-researcher"
    assert definition.profile.capabilities == (
        AgentCapability(type="RESEARCH", score=0.95),
        AgentCapability(type="INVESTIGATION", score=0.7),
    )
    assert definition.profile.threshold is None
    assert definition.path == path
    assert definition.description == "Researches a topic."
    assert definition.command == "python3 handlers/researcher.py"
    assert definition.timeout == 120
    assert definition.instructions == "You are a research agent."
    assert dict(definition.extra) == {}


def test_an_entrypoint_names_a_python_function_to_run_instead_of_a_command(folder):
    write(folder, "fast.md", agent("fast", more="entrypoint: handlers.noop:handle\ntimeout: 5\n"))
    write(folder, "deep.md", agent("deep", more="entrypoint: _pkg.sub_2.mod:Run_it\n"))
    registry = FrontmatterAgentRegistry(folder)

    fast, deep = registry.definition("fast"), registry.definition("deep")

    assert registry.problems() == []
    assert (fast.entrypoint, fast.command, fast.timeout, fast.runnable) == (
        "handlers.noop:handle",
        None,
        5,
        True,
    )
    assert deep.entrypoint == "_pkg.sub_2.mod:Run_it"
    assert "entrypoint" not in fast.extra


def test_the_shorthand_mapping_form_gives_the_same_capabilities_in_file_order(folder):
    write(folder, "a.md", agent("ps-analyst", "{ANALYSIS: 0.9, RESEARCH: 0.85}"))

    profile = FrontmatterAgentRegistry(folder).get("ps-analyst")

    assert profile is not None
    assert [(c.type, c.score) for c in profile.capabilities] == [("ANALYSIS", 0.9), ("RESEARCH", 0.85)]


def test_an_agent_may_override_the_default_threshold(folder):
    write(folder, "low.md", agent("low", more="threshold: 0.5\n"))
    write(folder, "plain.md", agent("plain"))
    registry = FrontmatterAgentRegistry(folder, default_threshold=0.7)

    assert registry.get("low").threshold == 0.5
    assert registry.get("low").threshold_or(registry.default_threshold) == 0.5
    assert registry.get("plain").threshold_or(registry.default_threshold) == 0.7


def test_a_claude_code_agent_file_with_capabilities_keeps_its_model_tools_and_other_keys(folder):
    text = (
        "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep, Glob\nmodel: sonnet\n"
        "color: blue\nhooks: {pre: [lint]}\ncapabilities:\n  REVIEW: 0.9\n---\nReview the diff.\n"
    )
    write(folder, "code-reviewer.md", text)
    registry = FrontmatterAgentRegistry(folder)

    [definition] = registry.definitions()

    assert registry.problems() == []
    assert dict(definition.extra) == {"color": "blue", "hooks": {"pre": ["lint"]}}
    assert (definition.model, definition.tools) == ("sonnet", ("Read", "Grep", "Glob"))
    assert definition.description == "Reviews code."
    assert [(c.type, c.score) for c in definition.profile.capabilities] == [("REVIEW", 0.9)]


def test_agents_come_ordered_by_name_whatever_the_file_names(folder):
    write(folder, "1.md", agent("zeta"))
    write(folder, "2.md", agent("alpha"))
    write(folder, "3.md", agent("mid"))

    assert [a.agent_id for a in FrontmatterAgentRegistry(folder).get_all()] == ["alpha", "mid", "zeta"]


def test_markdown_files_at_any_depth_count_but_dot_files_dot_folders_and_readmes_do_not(folder):
    write(folder, "a.md", agent("a"))
    write(folder, "notes.txt", "not an agent")
    write(folder, ".a.md.swp.md", "editor swap file")
    write(folder, "README.md", "# My collection\n")
    (folder / "nested" / "deeper").mkdir(parents=True)
    write(folder / "nested", "b.md", agent("b"))
    write(folder / "nested" / "deeper", "c.md", agent("c"))
    write(folder / "nested", "readme.md", "about b\n")
    (folder / ".git").mkdir()
    write(folder / ".git", "d.md", agent("d"))

    registry = FrontmatterAgentRegistry(folder)

    assert [a.agent_id for a in registry.get_all()] == ["a", "b", "c"]
    assert registry.problems() == []
    assert [r.path.relative_to(folder).as_posix() for r in registry.files()] == [
        "a.md",
        "nested/b.md",
        "nested/deeper/c.md",
    ]


def test_a_missing_folder_is_an_empty_registry(tmp_path):
    registry = FrontmatterAgentRegistry(tmp_path / "nowhere")

    assert registry.get_all() == []
    assert registry.problems() == []
    assert registry.get("ps-researcher") is None


def test_get_by_capability_ranks_best_score_first_and_leaves_out_the_unable(folder):
    write(folder, "a.md", agent("ps-analyst", "{ANALYSIS: 0.9, RESEARCH: 0.85}"))
    write(folder, "r.md", agent("ps-researcher", "{RESEARCH: 0.95}"))
    write(folder, "v.md", agent("ps-reviewer", "{REVIEW: 0.95}"))
    write(folder, "b.md", agent("b-tied", "{RESEARCH: 0.85}"))

    ranked = FrontmatterAgentRegistry(folder).get_by_capability("RESEARCH")

    assert [a.agent_id for a in ranked] == ["ps-researcher", "b-tied", "ps-analyst"]


# -- bad files ----------------------------------------------------------------------------------------
BAD_FILES = {
    "yaml.md": ("---\nname: x\ncapabilities: {RESEARCH: 0.9\n---\n", "capabilities: is not valid YAML"),
    "yaml-all.md": ("---\n[unclosed\n---\n", "frontmatter: is not valid YAML"),
    "yaml-command.md": (agent("yaml-command", more="command: echo a: b\n"), "command: is not valid YAML"),
    "no-frontmatter.md": ("Just some Markdown.\n", "frontmatter: is missing"),
    "no-name.md": ("---\ncapabilities: {RESEARCH: 0.9}\n---\n", "name: is required"),
    "bad-name.md": (agent("-bad-name"), "name: must be 1 to 200 characters, not starting with a hyphen"),
    "score-list.md": (
        agent("score-list", "[{type: RESEARCH, score: 0.5}, {type: REVIEW, score: 1.4}]"),
        "capabilities[1].score: must be between 0 and 1, got 1.4",
    ),
    "score-map.md": (
        agent("score-map", "{RESEARCH: -0.1}"),
        "capabilities.RESEARCH: must be between 0 and 1, got -0.1",
    ),
    "score-text.md": (
        agent("score-text", "{RESEARCH: high}"),
        "capabilities.RESEARCH: must be a number, got 'high'",
    ),
    "no-type.md": (agent("no-type", "[{score: 0.5}]"), "capabilities[0].type: is required"),
    "threshold.md": (agent("threshold", more="threshold: 2\n"), "threshold: must be between 0 and 1, got 2"),
    "timeout.md": (
        agent("timeout", more="timeout: 0\n"),
        "timeout: must be a positive number of seconds, got 0",
    ),
    "stall-timeout.md": (
        agent("stall-timeout", more="stall_timeout: -5\n"),
        "stall_timeout: must be a number of seconds, 0 or more (0: never stalls), got -5",
    ),
    "stall-timeout-text.md": (
        agent("stall-timeout-text", more="stall_timeout: soon\n"),
        "stall_timeout: must be a number, got 'soon'",
    ),
    "command.md": (
        agent("command", more="command: [python3, x.py]\n"),
        "command: input should be a valid string",
    ),
    "list-fm.md": ("---\n- a\n- b\n---\n", "frontmatter: must be a mapping of keys to values, got a list"),
    "entry-path.md": (
        agent("entry-path", more="entrypoint: handlers/noop.py\n"),
        "entrypoint: must be module.path:function, Python names joined by dots, a colon, then the function's "
        "name (e.g. handlers.research:handle), got 'handlers/noop.py'",
    ),
    "entry-no-function.md": (
        agent("entry-no-function", more="entrypoint: handlers.noop\n"),
        "entrypoint: must be module.path:function",
    ),
    "entry-digit.md": (
        agent("entry-digit", more="entrypoint: handlers.2nd:handle\n"),
        "entrypoint: must be module.path:function",
    ),
    "entry-two-colons.md": (
        agent("entry-two-colons", more="entrypoint: a:b:c\n"),
        "entrypoint: must be module.path:function",
    ),
    "entry-empty-part.md": (
        agent("entry-empty-part", more="entrypoint: handlers..noop:handle\n"),
        "entrypoint: must be module.path:function",
    ),
    "both-handlers.md": (
        agent("both-handlers", more="command: python3 handlers/noop.py\nentrypoint: handlers.noop:handle\n"),
        "command, entrypoint, runner: name one way to run the agent",
    ),
    "command-and-runner.md": (
        agent("command-and-runner", more="command: python3 handlers/noop.py\nrunner: anthropic\n"),
        "command, entrypoint, runner: name one way to run the agent",
    ),
    "unknown-runner.md": (
        agent("unknown-runner", more="runner: gemini\n"),
        "runner: must be claude-code, anthropic or openai, got 'gemini'",
    ),
    "zero-turns.md": (
        agent("zero-turns", more="max_turns: 0\n"),
        "max_turns: must be a whole number of turns, 1 or more, got 0",
    ),
    "text-turns.md": (
        agent("text-turns", more="max_turns: many\n"),
        "max_turns: must be a whole number of turns, 1 or more, got 'many'",
    ),
    "free-budget.md": (
        agent("free-budget", more="max_budget_usd: 0\n"),
        "max_budget_usd: must be a positive number of US dollars, got 0",
    ),
    "retries-zero.md": (
        agent("retries-zero", more="retries: 0\n"),
        "retries: must be a whole number of attempts from 1 to 1000, got 0",
    ),
    "retries-text.md": (
        agent("retries-text", more="retries: often\n"),
        "retries: must be a whole number of attempts or a mapping of max_attempts, backoff, initial, max and "
        "jitter, got 'often'",
    ),
    "retries-negative-initial.md": (
        agent("retries-negative-initial", more="retries: {max_attempts: 3, initial: -1}\n"),
        "retries.initial: must be a number of seconds from 0 to 86400, got -1",
    ),
    "retries-max-below-initial.md": (
        agent("retries-max-below-initial", more="retries: {max_attempts: 3, initial: 10s, max: 5s}\n"),
        "retries.max: must not be less than initial (10s), got 5s",
    ),
    "retries-backoff.md": (
        agent("retries-backoff", more="retries: {max_attempts: 3, backoff: linear}\n"),
        "retries.backoff: must be exponential or fixed, got 'linear'",
    ),
    "retries-no-attempts.md": (
        agent("retries-no-attempts", more="retries: {backoff: fixed}\n"),
        "retries.max_attempts: is required",
    ),
    "retries-jitter.md": (
        agent("retries-jitter", more="retries: {max_attempts: 2, jitter: 2}\n"),
        "retries.jitter: must be a fraction from 0 to 1, got 2",
    ),
    "retries-unknown-key.md": (
        agent("retries-unknown-key", more="retries: {max_attempts: 2, delay: 5}\n"),
        "retries.delay: is not a key of retries",
    ),
}


@pytest.mark.parametrize("file_name", sorted(BAD_FILES))
def test_a_bad_file_is_reported_with_its_path_and_field_while_the_others_load(folder, file_name):
    text, expected = BAD_FILES[file_name]
    write(folder, "good.md", RESEARCHER)
    bad = write(folder, file_name, text)
    registry = FrontmatterAgentRegistry(folder)

    problems = registry.problems()

    assert [a.agent_id for a in registry.get_all()] == ["ps-researcher"]
    assert problems and all(p.path == bad for p in problems)
    assert any(expected in p.message for p in problems), problems
    assert str(problems[0]).startswith(f"{bad}: ")


def test_retries_in_a_file_give_the_agent_its_retry_policy(folder):
    write(folder, "a.md", agent("short", more="retries: 3\n"))
    write(
        folder,
        "b.md",
        agent(
            "long", more="retries: {max_attempts: 5, backoff: fixed, initial: 500ms, max: 2m, jitter: 0}\n"
        ),
    )
    write(folder, "c.md", agent("none"))
    registry = FrontmatterAgentRegistry(folder)

    short, long, none = (registry.get(name).retries for name in ("short", "long", "none"))

    assert registry.problems() == []
    assert (short.max_attempts, short.backoff, short.initial, short.max) == (3, "exponential", 1.0, 300.0)
    assert (long.max_attempts, long.backoff, long.initial, long.max, long.jitter) == (5, "fixed", 0.5, 120, 0)
    assert none is None


def test_every_rule_a_file_breaks_is_reported_at_once(folder):
    bad = write(
        folder,
        "x.md",
        "---\nname: x\ncapabilities: [{type: A, score: 0.5}, {type: B, score: 1.4}]\nthreshold: -1\n---\n",
    )

    assert FrontmatterAgentRegistry(folder).problems() == [
        AgentFileProblem(bad, "capabilities[1].score: must be between 0 and 1, got 1.4"),
        AgentFileProblem(bad, "threshold: must be between 0 and 1, got -1"),
    ]


def test_a_yaml_error_names_the_line_of_the_file(folder):
    write(folder, "x.md", "---\nname: x\nfoo: : : bar\ncapabilities: [{type: R, score: 0.9]\n---\n")

    [problem] = FrontmatterAgentRegistry(folder).problems()

    assert (
        problem.message.startswith("capabilities: is not valid YAML")
        and "line 4 of the file" in problem.message
    )


def test_a_repeated_name_keeps_the_first_file_in_file_name_order_and_reports_the_later(folder):
    first = write(folder, "a-first.md", agent("ps-researcher", "{RESEARCH: 0.95}"))
    later = write(folder, "b-later.md", agent("ps-researcher", "{REVIEW: 0.5}"))
    registry = FrontmatterAgentRegistry(folder)

    [definition] = registry.definitions()

    assert definition.path == first
    assert registry.problems() == [
        AgentFileProblem(
            later,
            f"name: 'ps-researcher' is already declared by {first}, which is kept; this file is left out",
            "rename one of them",
        )
    ]


# -- re-reading ---------------------------------------------------------------------------------------
def test_a_changed_an_added_and_a_removed_file_are_seen_on_the_next_call(folder):
    changed = write(folder, "a.md", agent("a", "{RESEARCH: 0.9}"))
    removed = write(folder, "b.md", agent("b"))
    registry = FrontmatterAgentRegistry(folder)
    assert [a.agent_id for a in registry.get_all()] == ["a", "b"]

    write(folder, "a.md", agent("a", "{RESEARCH: 0.5}"))
    touch_later(changed)
    removed.unlink()
    write(folder, "c.md", agent("c"))

    assert [a.agent_id for a in registry.get_all()] == ["a", "c"]
    assert registry.get("a").capabilities[0].score == 0.5


def test_a_fixed_file_stops_being_a_problem_and_a_broken_one_starts(folder):
    path = write(folder, "a.md", agent("a", "{RESEARCH: 1.5}"))
    registry = FrontmatterAgentRegistry(folder)
    assert registry.get("a") is None and len(registry.problems()) == 1

    write(folder, "a.md", agent("a", "{RESEARCH: 0.5}"))
    touch_later(path)
    assert registry.get("a") is not None and registry.problems() == []

    write(folder, "a.md", "---\nname: [\n---\n")
    touch_later(path)
    assert registry.get("a") is None and len(registry.problems()) == 1


def test_the_folder_may_appear_after_the_registry_was_made(tmp_path):
    registry = FrontmatterAgentRegistry(tmp_path / "agents")
    assert registry.get_all() == []

    (tmp_path / "agents").mkdir()
    write(tmp_path / "agents", "a.md", agent("a"))

    assert [a.agent_id for a in registry.get_all()] == ["a"]


def test_unchanged_files_are_not_parsed_again(folder, monkeypatch):
    write(folder, "a.md", agent("a"))
    changed = write(folder, "b.md", agent("b"))
    parsed: list[str] = []
    real = registry_module.read_agent_file

    def counting(path: Path):
        parsed.append(path.name)
        return real(path)

    monkeypatch.setattr(registry_module, "read_agent_file", counting)
    registry = FrontmatterAgentRegistry(folder)

    registry.get_all()
    registry.definitions()
    registry.problems()
    registry.get("a")
    assert parsed == ["a.md", "b.md"]

    write(folder, "b.md", agent("b", "{REVIEW: 0.9}"))
    touch_later(changed)
    registry.get_all()
    registry.get_all()
    assert parsed == ["a.md", "b.md", "b.md"]


# -- the shipped examples -------------------------------------------------------------------------------
def test_the_shipped_agents_load_without_problems():
    registry = FrontmatterAgentRegistry(SHIPPED_AGENTS)

    assert registry.problems() == []
    assert [a.agent_id for a in registry.get_all()] == [
        "docbot-planner",  # docbot's phases (flows/docbot.md)
        "docbot-presenter",
        "docbot-researcher",
        "docbot-writer",
        "ps-analyst",
        "ps-architect",
        "ps-researcher",
        "ps-reviewer",
        "ps-writer",
    ]
    for definition in registry.definitions():
        assert definition.runnable and not definition.warnings
        if definition.name == "ps-writer":  # the one that calls a model: a Python function
            assert definition.entrypoint == "handlers.writer:handle" and definition.model
            assert (SHIPPED_AGENTS / "handlers" / "writer.py").is_file()
            continue
        assert definition.command and definition.command.startswith("python3 handlers/")
        assert (SHIPPED_AGENTS / definition.command.split()[1]).is_file()
        assert definition.timeout and definition.timeout > 0
        assert definition.description and len(definition.instructions) > 200


def test_the_researcher_wins_a_research_race_against_the_analyst():
    registry = FrontmatterAgentRegistry(SHIPPED_AGENTS)
    signal = AgentSignal(
        signal_id="sig-0000000a",
        blackboard_id="ps-1",
        signal_type=SignalType.RESEARCH,
        payload=SignalPayload(ps_id="ps-1", entry_id="e-1", topic="Event stores"),
        target_capabilities=("RESEARCH",),
        posted_by="test",
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
    )

    ranking = [(v.agent.agent_id, v.score, v.passes) for v in rank(signal, registry.get_all())[:2]]

    assert ranking == [("ps-researcher", 0.95, True), ("ps-analyst", 0.85, True)]
