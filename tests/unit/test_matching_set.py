"""The labelled set for matching by text holds what it says (tests/fixtures/matching/tasks.yaml): real public
agent files with their provenance, requests with one intended agent each, reworded ones that share no word
with their agent's name and description, and a third of them kept aside by a fixed rule."""

from __future__ import annotations

import re

import pytest

from bench.matching_set import AGENTS, FOLDER, load, words
from blackboard.infrastructure.agents import FrontmatterAgentRegistry
from blackboard.infrastructure.agents.parsing import AgentDefinition


@pytest.fixture(scope="module")
def agents() -> dict[str, AgentDefinition]:
    registry = FrontmatterAgentRegistry(AGENTS)
    assert registry.problems() == []
    return {d.name: d for d in registry.definitions()}


def provenance() -> dict[str, list[str]]:
    lines = (FOLDER / "PROVENANCE").read_text(encoding="utf-8").splitlines()
    return {row[0]: row[1:] for row in (ln.split("\t") for ln in lines if ln and not ln.startswith("#"))}


def test_the_folder_holds_at_least_sixty_public_agent_files_that_all_load(agents):
    assert len(agents) >= 60 and len(agents) == len(list(AGENTS.rglob("*.md")))  # every file loads
    assert len({d.path.parent.name for d in agents.values()}) >= 3  # several collections


def test_every_file_has_its_provenance_and_every_collection_its_license():
    rows = provenance()
    on_disk = {str(p.relative_to(FOLDER)) for p in AGENTS.rglob("*") if p.is_file()}
    assert set(rows) == on_disk
    for repository, commit, path, license_ in rows.values():
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", repository) and re.fullmatch(r"[0-9a-f]{40}", commit)
        assert path and license_ == "MIT"
    for collection in {p.parent for p in AGENTS.rglob("*.md")}:
        assert (collection / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_the_set_has_at_least_forty_tasks_each_for_an_agent_of_the_folder(agents):
    labelled = load()
    assert len(labelled.tasks) >= 40
    assert {t.agent for t in labelled.tasks} <= set(agents)
    assert len({t.text for t in labelled.tasks}) == len(labelled.tasks)


def test_reworded_tasks_share_no_word_with_their_agent_s_name_and_description_and_the_others_do(agents):
    labelled = load()
    for task in labelled.tasks:
        agent = agents[task.agent]
        said = words(f"{agent.name.replace('-', ' ')} {agent.description}", labelled.reworded_ignores)
        shared = words(task.text, labelled.reworded_ignores) & said
        assert bool(shared) is not task.reworded, (task.agent, task.text, shared)
        assert words(task.text, labelled.reworded_ignores) & words(agent.instructions, frozenset())


def test_a_third_is_held_out_by_the_hash_rule_with_enough_reworded_tasks_in_each_part():
    labelled = load()
    held, tuning = labelled.part(held_out=True), labelled.part(held_out=False)
    assert 0.25 <= len(held) / len(labelled.tasks) <= 0.42
    assert sum(t.reworded for t in held) >= 20 and sum(t.reworded for t in tuning) >= 20
    assert sum(not t.reworded for t in held) >= 5 and sum(not t.reworded for t in tuning) >= 5
