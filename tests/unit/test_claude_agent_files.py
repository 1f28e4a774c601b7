"""Claude Code agent files read as they are: lenient frontmatter, the name as capability, governance-style
`capabilities`, `tools` and `model`, capability names in any case; and files that are not agent files."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackboard.infrastructure.agents import (
    AgentFileInvalid,
    FrontmatterAgentRegistry,
    parsing,
    read_agent_file,
)
from blackboard.infrastructure.agents.lenient import read_frontmatter

COLLECTION = Path(__file__).resolve().parents[1] / "fixtures" / "agent-collection"


def read(tmp_path: Path, text: str, name: str = "a.md"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_agent_file(path)


def capabilities(definition) -> list[tuple[str, float]]:
    return [(c.type, c.score) for c in definition.profile.capabilities]


def test_every_file_of_a_public_collection_loads_without_a_problem(monkeypatch, tmp_path):
    monkeypatch.setenv("BLACKBOARD_CLAUDE", str(tmp_path / "no-claude"))  # whatever the machine has
    registry = FrontmatterAgentRegistry(COLLECTION)

    assert registry.problems() == []
    assert len(registry.files()) == 8  # README.md is not an agent
    assert all(d.runner_name == "claude-code" and not d.runnable for d in registry.definitions())


def test_an_unquoted_description_with_context_lines_is_read_as_claude_code_reads_it():
    reviewer = read_agent_file(COLLECTION / "engineering" / "code-reviewer.md")

    assert reviewer.description.startswith("Use this agent when code has been written or changed")
    assert (
        "\nContext: The user has just implemented a new authentication endpoint.\nuser: \"I've added"
        in reviewer.description
    )
    assert reviewer.description.endswith("</example>")
    [warning] = reviewer.warnings
    assert warning.message.startswith(
        "description: is not strict YAML (mapping values are not allowed"
    )  # libyaml's
    assert (
        ", line 3 of the file); read as plain text, as Claude Code reads it" in warning.message
    )  # words or PyYAML's
    assert warning.fix == "quote the description"
    assert (reviewer.model, reviewer.tools, dict(reviewer.extra)) == (
        "sonnet",
        ("Read", "Grep", "Glob", "Bash"),
        {"color": "blue"},
    )
    assert reviewer.instructions.startswith("You are a senior code reviewer.")


def test_a_multi_line_unquoted_description_keeps_its_lines_and_the_keys_after_it():
    designer = read_agent_file(COLLECTION / "design" / "ui-designer.md")

    assert designer.description.splitlines() == [
        "Use this agent when creating user interfaces, design systems or visual refreshes.",
        "Examples:",
        "<example>",
        "Context: Starting a new app or feature design",
        'user: "We need a settings screen for the mobile app"',
        'assistant: "I\'ll use the ui-designer agent to design it."',
        "</example>",
    ]
    assert designer.tools == ("Write", "Read", "MultiEdit", "WebSearch", "WebFetch")
    assert designer.extra["color"] == "magenta"


def test_a_quoted_description_is_strict_yaml_and_loads_without_a_warning():
    writer = read_agent_file(COLLECTION / "testing" / "test-writer.md")

    assert writer.warnings == ()
    assert writer.description.startswith("Writes and fixes tests. Examples: <example>Context: A function")
    assert (writer.model, writer.tools) == ("inherit", ("Read", "Write", "Bash"))


def test_without_capabilities_the_name_is_the_capability_at_one():
    architect = read_agent_file(COLLECTION / "engineering" / "backend-architect.md")

    assert capabilities(architect) == [("BACKEND-ARCHITECT", 1.0)]
    assert architect.profile.score_for_capability("backend-architect") == 1.0
    assert architect.tools == ("Read", "Write", "Edit", "Bash")


@pytest.mark.parametrize(
    "file_name", ["governance/security-auditor.md", "governance/docs-writer.md", "governance/pr-reviewer.md"]
)
def test_a_capabilities_key_used_for_governance_is_ignored_with_a_warning_and_kept_as_written(file_name):
    definition = read_agent_file(COLLECTION / file_name)

    assert capabilities(definition) == [(definition.name.upper(), 1.0)]
    [warning] = definition.warnings
    assert warning.message.startswith("capabilities: is not a score map")
    assert (
        f"ignored: the agent takes signals for its name, {definition.name.upper()}, at 1.0" in warning.message
    )
    assert definition.extra["capabilities"]  # the collection's own value, for whoever reads it


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ("[review, Debug]", [("REVIEW", 1.0), ("DEBUG", 1.0)]),
        ("{review: 0.9, Research: 0.5}", [("REVIEW", 0.9), ("RESEARCH", 0.5)]),
        ("[{type: review, score: 0.7}]", [("REVIEW", 0.7)]),
    ],
)
def test_capability_names_are_kept_in_one_case_whatever_form_declares_them(tmp_path, declared, expected):
    assert capabilities(read(tmp_path, f"---\nname: a\ncapabilities: {declared}\n---\n")) == expected


@pytest.mark.parametrize("declared", ["[]", "{}", "read-only"])
def test_empty_or_scalar_capabilities_are_ignored_with_a_warning(tmp_path, declared):
    definition = read(tmp_path, f"---\nname: a\ncapabilities: {declared}\n---\n")

    assert capabilities(definition) == [("A", 1.0)] and len(definition.warnings) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "---\nname: a\ncapabilities: {REVIEW: 1.5}\n---\n",
            "capabilities.REVIEW: must be between 0 and 1, got 1.5",
        ),
        (
            "---\nname: a\ncapabilities: [{type: REVIEW, score: high}]\n---\n",
            "capabilities[0].score: must be a number",
        ),
        ("---\ndescription: no name: here\ntools: Read\n---\n", "name: is required"),
        (
            "---\nname: a\nthreshold: x: y\n---\n",
            "threshold: is not valid YAML (mapping values are not allowed",
        ),
    ],
)
def test_a_score_shape_with_a_bad_score_and_our_own_keys_stay_errors(tmp_path, text, expected):
    with pytest.raises(AgentFileInvalid) as refused:
        read(tmp_path, text)

    assert any(p.message.startswith(expected) for p in refused.value.problems), refused.value.problems


def test_the_lenient_reader_takes_valid_keys_as_yaml_and_the_others_as_text():
    read = read_frontmatter(
        "\nname: a\ndescription: Use it when: always\ntools:\n  - Read\n  - Bash\nmodel: opus\n"
    )

    assert read.data == {
        "name": "a",
        "description": "Use it when: always",
        "tools": ["Read", "Bash"],
        "model": "opus",
    }
    assert [fix for _, fix in read.warnings] == ["quote the description"] and read.errors == []


def test_an_unreadable_file_is_left_out_naming_the_rule_and_the_fix(tmp_path, monkeypatch):
    (tmp_path / "a.md").write_text("---\nname: a\n---\n")
    (tmp_path / "b.md").write_text("---\nname: b\n---\n")
    real = parsing._text_of

    def unreadable(path: Path) -> str:
        if path.name == "a.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(parsing, "_text_of", unreadable)
    registry = FrontmatterAgentRegistry(tmp_path)

    assert [a.agent_id for a in registry.get_all()] == ["b"]
    [problem] = registry.problems()
    assert (problem.path.name, problem.message, problem.fix) == (
        "a.md",
        "file: cannot be read (Permission denied)",
        "make it readable (chmod a+r)",
    )


def test_a_duplicate_name_across_folders_keeps_the_first_folder_s_file(tmp_path):
    first, second = tmp_path / "mine", tmp_path / "collection"
    (first).mkdir()
    (second / "sub").mkdir(parents=True)
    (first / "reviewer.md").write_text("---\nname: reviewer\ncommand: exit 0\n---\n")
    (second / "sub" / "reviewer.md").write_text("---\nname: reviewer\n---\n")

    registry = FrontmatterAgentRegistry([first, second])

    assert registry.definition("reviewer").path == first / "reviewer.md"
    [problem] = registry.problems()
    assert problem.path == second / "sub" / "reviewer.md" and "is already declared by" in problem.message


def test_a_value_yaml_cannot_build_in_a_foreign_key_is_text_with_a_warning(tmp_path):
    # PyYAML raises ValueError (not a YAMLError) for an impossible date; it once read as "no closing --- line"
    definition = read(tmp_path, "---\nname: dated\ncreated: 2024-13-45\ncommand: echo hi\n---\nbody\n")

    assert definition.extra["created"] == "2024-13-45"
    assert "month must be in 1..12" in definition.warnings[0].message


def test_a_value_yaml_cannot_build_in_a_key_of_ours_is_an_error_naming_it(tmp_path):
    with pytest.raises(AgentFileInvalid, match="name: is not valid YAML"):
        read(tmp_path, "---\nname: 2024-13-45\n---\nbody\n")


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("ps-researcher", "ps-researcher"),
        ("powershell-5.1-expert", "powershell-5.1-expert"),
        ("Good-List", "good-list-"),
        ("Frontend Developer", "frontend-developer-"),
        ("héllo wörld", "h-llo-w-rld-"),
        ("***", "agent-"),
    ],
)
def test_a_name_reaches_a_path_as_its_slug(name, slug):
    from blackboard.infrastructure.agents.spec import path_slug

    made = path_slug(name)

    assert made == slug if slug == name else made.startswith(slug) and len(made) == len(slug) + 8
    assert "/" not in made and "\\" not in made and made not in (".", "..")


def test_two_names_that_slug_alike_never_share_a_file():
    from blackboard.infrastructure.agents.spec import path_slug

    assert path_slug("Good List") != path_slug("good-list") != path_slug("Good-List")
