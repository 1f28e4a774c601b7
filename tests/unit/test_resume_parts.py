"""The parts of resume instead of restart, apart (docs/agents.md, "Resume instead of restart"): a run's session
id, where a claude-code run finds an earlier session and what Claude Code counts it to have cost, the
arguments that resume it, the conversation an API runner continues from a transcript, each attempt's
transcript, and an attempt's own cost. Real Claude Code and real workers: tests/runners/test_resume.py."""

from __future__ import annotations

import json
from pathlib import Path

from blackboard.application.runners import (
    AgentBrief,
    EarlierRun,
    RunLimits,
    RunRequest,
    session_of,
)
from blackboard.domain.events import AgentSignalAttemptFailed
from blackboard.domain.evolution import evolve
from blackboard.domain.signals import AgentSignal, FailedAttempt, SignalPayload, SignalType, SignalUsage
from blackboard.infrastructure.documents.signals import signal as document
from blackboard.infrastructure.persistence.codec import attempts_json
from blackboard.infrastructure.runners.api_loop import kept_conversation
from blackboard.infrastructure.runners.claude_code import arguments
from blackboard.infrastructure.runners.sessions import SHARED, Resume, SessionFiles, spent_in
from blackboard.infrastructure.runners.usage import Tally
from blackboard.infrastructure.worker.runs import transcript_of
from tests.fakes import T0


def request(tmp_path: Path, attempt: int = 1, signal_id: str = "sig-0000000a", **limits: float) -> RunRequest:
    return RunRequest(
        agent=AgentBrief(name="a", description="d", instructions="i"),
        signal_id=signal_id,
        blackboard_id="bb",
        prompt="p",
        token="t",
        limits=RunLimits(timeout=60, **limits),
        workdir=str(tmp_path),
        transcript_path=str(tmp_path / "t.jsonl"),
        attempt=attempt,
    )


def session_file(folder: Path, session_id: str, *lines: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_run_s_session_id_is_known_from_its_signal_and_attempt_alone(tmp_path):
    assert session_of("sig-0000000a", 1) == session_of("sig-0000000a", 1)
    assert (
        len({session_of("sig-0000000a", 1), session_of("sig-0000000a", 2), session_of("sig-0000000b", 1)})
        == 3
    )
    assert request(tmp_path, 2).session_id == session_of("sig-0000000a", 2)
    assert request(tmp_path, signal_id="").session_id is None  # solve's controller: never resumed


def test_the_latest_reachable_earlier_session_is_resumed_with_what_claude_code_counts_it_cost(tmp_path):
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    one, two = session_of("sig-0000000a", 1), session_of("sig-0000000a", 2)
    session_file(
        projects / "-work",
        one,
        {"type": "user"},
        {"type": "cost-state", "totalCostUSD": 0.25},
        {"type": "cost-state", "totalCostUSD": 0.5},
    )
    earlier = (EarlierRun(2, two, "t2"), EarlierRun(1, one, "t1"))  # attempt 2 never started Claude Code

    assert SessionFiles({"HOME": str(home)}).resume(earlier) == Resume(one, 0.5)
    assert SessionFiles({"HOME": str(tmp_path / "elsewhere")}).resume(earlier) is None
    assert SessionFiles({"CLAUDE_CONFIG_DIR": str(home / ".claude")}).resume(earlier) == Resume(one, 0.5)


def test_a_session_killed_before_it_said_its_cost_counts_as_costing_nothing_so_far(tmp_path):
    path = session_file(tmp_path, "s", {"type": "user"}, {"type": "assistant"})
    path.write_text(path.read_text() + '{"type":"cost-state","totalCostUSD":0.7')  # cut as it was written

    assert spent_in(path) == 0.0
    assert spent_in(tmp_path / "missing.jsonl") == 0.0


def test_a_shared_folder_carries_a_session_from_one_host_s_config_to_another_s(tmp_path):
    shared, one = tmp_path / "shared", session_of("sig-0000000a", 1)
    host_a = SessionFiles({"HOME": str(tmp_path / "a"), SHARED: str(shared)})
    session_file(
        tmp_path / "a" / ".claude" / "projects" / "-work", one, {"type": "cost-state", "totalCostUSD": 0.1}
    )

    host_a.keep(one, now=True)
    host_b = SessionFiles({"HOME": str(tmp_path / "b"), SHARED: str(shared)})
    resumed = host_b.resume((EarlierRun(1, one, "t1"),))

    assert resumed == Resume(one, 0.1)
    assert (
        host_b.local(one) == tmp_path / "b" / ".claude" / "projects" / "blackboard-sessions" / f"{one}.jsonl"
    )
    assert not list(shared.glob(".*partial"))  # a copy is whole, or not there


def test_resuming_forks_the_earlier_session_under_the_attempt_s_own_id_with_this_attempt_s_budget(tmp_path):
    (tmp_path / "private").mkdir()
    fresh = arguments(request(tmp_path, 1, max_budget_usd=0.5), tmp_path / "private")
    resumed = arguments(
        request(tmp_path, 2, max_budget_usd=0.5),
        tmp_path / "private",
        Resume(session_of("sig-0000000a", 1), 0.25),
    )

    assert f"--session-id={session_of('sig-0000000a', 1)}" in fresh and not [
        a for a in fresh if "resume" in a
    ]
    assert resumed[-3:] == [
        f"--resume={session_of('sig-0000000a', 1)}",
        "--fork-session",
        f"--session-id={session_of('sig-0000000a', 2)}",
    ]
    assert "--max-budget-usd=0.75" in resumed  # Claude Code counts the session's earlier $0.25 against it
    # the attempt's own session, run before (Claude Code refuses a --session-id it has): continued as it is
    again = arguments(request(tmp_path, 2), tmp_path / "private", Resume(session_of("sig-0000000a", 2)))
    assert again[-1] == f"--resume={session_of('sig-0000000a', 2)}" and not [
        a for a in again if "session-id" in a
    ]


def test_an_attempt_s_cost_leaves_out_what_the_resumed_session_cost_before():
    tally = Tally("claude-code", reported_cost=0.75, resumed_cost=0.25, resumed_from="s-1")

    assert tally.cost_usd == 0.5 and tally.usage().resumed_from == "s-1"
    assert Tally("claude-code", reported_cost=0.1, resumed_cost=0.25).cost_usd == 0.0


def test_an_api_runner_continues_from_the_last_whole_turn_its_transcript_kept(tmp_path):
    def record(message: dict, runner: str = "anthropic") -> str:
        return json.dumps({"type": "message", "at": "now", "runner": runner, "message": message}) + "\n"

    prompt, answer = (
        {"role": "user", "content": "p"},
        {"role": "assistant", "content": [{"type": "tool_use"}]},
    )
    results = {"role": "user", "content": [{"type": "tool_result"}]}
    path = tmp_path / "t.jsonl"
    path.write_text(
        record(prompt)
        + json.dumps({"type": "response", "at": "now"})
        + "\n"
        + record(answer)
        + record(results)
        + record({"role": "assistant", "content": [{"type": "tool_use", "id": "unanswered"}]})
        + record({"role": "user", "content": "another runner's"}, runner="openai")
        + '{"type": "message", "at": "now", "runner": "anthr'  # its worker died as it wrote this line
    )

    assert kept_conversation(path, "anthropic") == [prompt, answer, results]
    assert kept_conversation(path, "openai") == []  # no answer of its own: nothing to continue
    assert kept_conversation(tmp_path / "missing.jsonl", "anthropic") == []


def test_each_attempt_keeps_its_own_transcript_the_first_where_every_run_s_was(tmp_path):
    assert transcript_of(tmp_path, "sig-0000000a", 1) == tmp_path / "sig-0000000a.jsonl"
    assert transcript_of(tmp_path, "sig-0000000a", 3) == tmp_path / "sig-0000000a.attempt-3.jsonl"


def test_a_failed_attempt_that_resumed_says_so_in_the_signal_its_row_and_its_document():
    claimed = AgentSignal(
        signal_id="sig-0000000a",
        blackboard_id="bb-1",
        signal_type=SignalType.RESEARCH,
        payload=SignalPayload(ps_id="PS-1", entry_id="e-1", topic="topic"),
        target_capabilities=("a",),
        posted_by="p",
        created_at=T0,
    ).claimed("a", T0, token="t")
    failed = AgentSignalAttemptFailed(
        blackboard_id="bb-1",
        version=3,
        occurred_at=T0,
        signal_id="sig-0000000a",
        attempt=1,
        max_attempts=3,
        claimed_by="a",
        reason="max_turns reached",
        retry_at=T0,
        usage=SignalUsage(runner="claude-code", session_id="s-2", resumed_from="s-1"),
    )

    [retried] = evolve(failed, lambda _: claimed, lambda _: ())

    assert retried.attempts[-1].resumed_from == "s-1"
    row = attempts_json(retried)
    assert row is not None and FailedAttempt.model_validate(json.loads(row)[0]).resumed_from == "s-1"
    assert document(retried).attempts[0].resumed_from == "s-1"
    # an attempt that started afresh keeps the row's shape of before
    afresh = failed.model_copy(update={"usage": SignalUsage(runner="claude-code")})
    assert "resumed_from" not in str(attempts_json(evolve(afresh, lambda _: claimed, lambda _: ())[0]))
