"""A run is its agent (docs/permissions.md): a command handler run by a real `blackboard worker` reaches the board
through the real `blackboard` executable, and everything an agent may not do is refused, exit 3, naming the act
and the run, with nothing written: with its BLACKBOARD_* variables as the worker gave them, and with them
dropped (`env -u ...`), for the board finds the run in its ancestors' environments. What an agent may do (write
within its claim's keys, post follow-up work as itself) it still does, while its claim holds.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.cli_server import blackboard_command
from tests.e2e.conftest import BLACKBOARD, Cli, write_agents

RUN_VARIABLES = ("BLACKBOARD_AGENT", "BLACKBOARD_SIGNAL_ID", "BLACKBOARD_CLAIM_TOKEN", "BLACKBOARD_BOARD")
# Reads the targets from its signal's context, tries each act with its variables (through `blackboard`, warm) and
# without them (the real executable under `env -u`, so only its ancestors can tell), and writes what each said.
HANDLER = """
import json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
document = json.load(sys.stdin)
aim = document["payload"]["context"]
me = os.environ["BLACKBOARD_AGENT"]
acts = {
    "approve": ["approve", aim["gate"], "--by", "me"],
    "reject": ["reject", aim["gate"], "--by", "me", "--reason", "no"],
    "budget": ["budget", aim["paused"], "--usd", "1000"],
    "cancel": ["cancel", aim["other"]],
    "retry": ["retry", aim["cancelled"]],
    "import": ["import", aim["export"]],
    "rebuild": ["projection", "rebuild"],
    "as-another": ["write", "ok/forged", "--blackboard", "ps-run", "--author", "ps-lead", "--value", "1"],
    "outside-keys": ["write", "secret/x", "--blackboard", "ps-run", "--author", me, "--value", "1"],
    "inside-keys": ["write", "ok/{mode}", "--blackboard", "ps-run", "--author", me, "--value", "1"],
    "post": ["post", "--type", "REVIEW", "--ps-id", "ps-run", "--entry-id", "e-9", "--topic", "{mode}"],
}
drop = [word for name in %(variables)r for word in ("-u", name)]
calls = {
    f"{mode} {act}": [*prefix, *[a.replace("{mode}", mode) for a in args]]
    for mode, prefix in (("given", [%(warm)r]), ("unset", ["env", *drop, %(cold)r]))
    for act, args in acts.items()
}
def call(argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    return [done.returncode, done.stderr.strip()]
with ThreadPoolExecutor(4) as pool:
    said = dict(zip(calls, pool.map(call, calls.values())))
with open(aim["said"], "w") as out:
    json.dump(said, out)
print("tried")
"""
FORBIDDEN = (
    "approve",
    "reject",
    "budget",
    "cancel",
    "retry",
    "import",
    "rebuild",
    "as-another",
    "outside-keys",
)
REFUSALS = {
    "approve": "may not approve a gate: only a person decides",
    "reject": "may not reject a gate: only a person decides",
    "budget": "may not set the budget of ps-paused: only a person sets a board's limits",
    "cancel": "may not cancel a signal: a run ends no other work",
    "retry": "may not retry a signal: a person retries ended work",  # a cancelled one too (issue 34)
    "import": "may not import board ps-elsewhere: only a person imports a board",
    "rebuild": "may not rebuild the read model: only a person rebuilds the read model",
    "as-another": "may not write ok/forged as ps-lead: an agent writes and posts under its own name only",
}


@pytest.fixture
def rcli(make_cli, tmp_path) -> Cli:
    script = tmp_path / "tries.py"
    warm = (
        blackboard_command()
    )  # a shim forked from the suite's CLI server: the variables travel with the call
    code = HANDLER % {"variables": RUN_VARIABLES, "warm": warm, "cold": BLACKBOARD}
    script.write_text(code, encoding="utf-8")
    trier = f"---\nname: ps-trier\ncapabilities: {{RESEARCH: 0.95}}\ncommand: {sys.executable} {script}\n---\nTries.\n"
    return make_cli(
        f"sqlite:///{tmp_path / 'board.db'}",
        tmp_path,
        write_agents(tmp_path / "agents", {"ps-trier.md": trier}),
    )


def test_a_handler_may_do_only_what_an_agent_may_with_its_variables_or_without(rcli, make_cli, tmp_path):
    gate = rcli.post("--gate", type="DECISION", ps="ps-run", entry="e-1", topic="ship it?")["signal_id"]
    other = rcli.post(type="ANALYSIS", ps="ps-other", entry="e-1")["signal_id"]  # not the trier's to take
    cancelled = rcli.post(type="ANALYSIS", ps="ps-other", entry="e-2")["signal_id"]
    rcli.ok("cancel", cancelled, "--by", "alice")
    rcli.post(ps="ps-paused", entry="e-1", type="REVIEW")
    rcli.ok("budget", "ps-paused", "--usd", "0", "--by", "alice")
    elsewhere = make_cli(f"sqlite:///{tmp_path / 'elsewhere.db'}", tmp_path)
    elsewhere.post(ps="ps-elsewhere", entry="e-1")
    export = tmp_path / "elsewhere.json"
    elsewhere.ok("export", "ps-elsewhere", "--output", str(export))
    said = tmp_path / "said.json"
    context = {
        "gate": gate,
        "other": other,
        "cancelled": cancelled,
        "paused": "ps-paused",
        "export": str(export),
        "said": str(said),
    }
    work = rcli.post(
        "--write-key", "ok/*", "--context", json.dumps(context), ps="ps-run", entry="e-2", topic="try"
    )["signal_id"]
    before = {e["position"] for e in rcli.ok("events", "--all")}

    rcli("worker", "--agent", "ps-trier", "--once").expect(0)

    tried = json.loads(said.read_text(encoding="utf-8"))
    codes = {call: code for call, (code, _) in tried.items()}
    assert codes == {
        **{f"{mode} {act}": 3 for mode in ("given", "unset") for act in FORBIDDEN},
        **{f"{mode} {act}": 0 for mode in ("given", "unset") for act in ("inside-keys", "post")},
    }, tried
    run = f"agent ps-trier's run of {work}"
    for call, (_, stderr) in tried.items():
        act = call.split()[1]
        assert "Traceback" not in stderr, stderr
        if act in REFUSALS:  # the run named, its variables given or found in its parents' environment
            assert f"{run} {REFUSALS[act]}" in stderr, stderr
    assert "secret/x is not in its write keys (ok/*)" in tried["unset outside-keys"][1]

    assert rcli.ok("show", work)["status"] == "COMPLETED"
    assert rcli.ok("show", gate)["status"] == "POSTED"  # neither approved nor rejected
    assert rcli.ok("show", other)["status"] == "POSTED"  # not cancelled
    assert [s["signal_id"] for s in rcli.ok("signals", "--blackboard", "ps-other")] == [other, cancelled]
    assert rcli.ok("budget", "ps-paused")["usd"] == 0.0
    entries = {e["key"]: e for e in rcli.ok("entries", "--blackboard", "ps-run")}
    assert "ok/forged" not in entries and "secret/x" not in entries
    assert entries["ok/given"]["author"] == entries["ok/unset"]["author"] == "ps-trier"
    posted = [s for s in rcli.ok("signals", "--blackboard", "ps-run") if s["payload"]["entry_id"] == "e-9"]
    assert sorted(s["posted_by"] for s in posted) == ["ps-trier", "ps-trier"]  # as itself, not ps-skill
    written = [e for e in rcli.ok("events", "--all") if e["position"] not in before]
    assert not [e for e in written if "ps-elsewhere" in e["stream_id"]]  # nothing imported
    assert {e["event_type"] for e in written} <= {
        "AgentSignalClaimed",
        "AgentSignalClaimRenewed",
        "EntryWritten",
        "AgentSignalPosted",
        "AgentSignalCompleted",
    }, {e["event_type"] for e in written}


def test_a_run_whose_claim_is_over_writes_nothing(rcli, tmp_path):
    """The variables of a claim that ended: the board checks the claim as stored, not the variables."""
    work = rcli.post(ps="ps-run", entry="e-1")["signal_id"]
    rcli.ok("claim", work, "--agent", "ps-trier", "--token", "t-over")
    rcli.ok("complete", work, "--agent", "ps-trier", "--token", "t-over")
    env = dict(zip(RUN_VARIABLES, ("ps-trier", work, "t-over", "ps-run"), strict=True))

    refused = rcli("write", "k", "--blackboard", "ps-run", "--author", "ps-trier", "--value", "1", env=env)
    guessed = {**env, "BLACKBOARD_CLAIM_TOKEN": "guess"}
    forged = rcli("write", "k", "--blackboard", "ps-run", "--author", "ps-trier", "--value", "1", env=guessed)

    assert f"agent ps-trier's run of {work} may not write k: its claim is over: {work} is COMPLETED" in (
        refused.expect(3).stderr
    )
    assert "its claim is over" in forged.expect(3).stderr
    assert rcli.ok("entries", "--blackboard", "ps-run") == []
    assert rcli("show", work, env=env).returncode == 0  # reading needs no claim


def test_a_person_s_shell_outside_any_run_keeps_every_power(rcli):
    gate = rcli.post("--gate", type="DECISION", ps="ps-run", entry="e-1", topic="ship it?")["signal_id"]
    rcli.ok("approve", gate, "--by", "alice")
    rcli.ok("budget", "ps-run", "--usd", "5")
    rcli.ok("write", "k", "--blackboard", "ps-run", "--author", "anyone", "--value", "1")
    rcli.ok("projection", "rebuild")
    assert rcli.ok("show", gate)["status"] == "COMPLETED"


ENTRYPOINT = """
import threading
from blackboard import Blackboard, Refused


def handle(document, agent):
    aim = document["payload"]["context"]
    said = {}

    def tries(name, act):
        try:
            act()
            said[name] = "done"
        except Refused as refused:
            said[name] = str(refused)

    with Blackboard() as bb:
        tries("approve", lambda: bb.approve(aim["gate"], by="me"))
        tries("budget", lambda: bb.budget("ps-run", usd=1000))
        tries("write", lambda: bb.write("ok/in", 1, blackboard_id="ps-run", author=agent["name"]))
        outside = threading.Thread(target=tries, args=("thread", lambda: bb.approve(aim["gate"], by="me")))
        outside.start()
        outside.join()
    return {"knowledge_items": [f"{name}: {what}" for name, what in sorted(said.items())]}
"""


def test_an_entrypoint_s_python_api_calls_are_its_run_s(make_cli, tmp_path):
    """An entrypoint runs in the worker's process: `Blackboard()` inside it is its run while the function runs,
    and a thread it starts is its agent's code holding no claim: neither decides a gate nor sets a budget."""
    agents = tmp_path / "agents"
    (agents / "handlers").mkdir(parents=True)
    (agents / "handlers" / "tries.py").write_text(ENTRYPOINT, encoding="utf-8")
    (agents / "ps-inproc.md").write_text(
        "---\nname: ps-inproc\ncapabilities: {RESEARCH: 0.95}\nentrypoint: handlers.tries:handle\n---\nTries.\n",
        encoding="utf-8",
    )
    cli = make_cli(f"sqlite:///{tmp_path / 'board.db'}", tmp_path, write_agents(agents))
    gate = cli.post("--gate", type="DECISION", ps="ps-run", entry="e-1", topic="ship it?")["signal_id"]
    work = cli.post("--write-key", "ok/*", "--context", json.dumps({"gate": gate}), ps="ps-run", entry="e-2")

    cli("worker", "--agent", "ps-inproc", "--once").expect(0)

    done = cli.ok("show", work["signal_id"])
    run = f"agent ps-inproc's run of {work['signal_id']}"
    assert done["result"]["knowledge_items"] == [
        f"approve: {run} may not approve a gate: only a person decides",
        f"budget: {run} may not set the budget of ps-run: only a person sets a board's limits",
        "thread: agent ps-inproc's run may not approve a gate: only a person decides",
        "write: done",
    ]
    assert cli.ok("show", gate)["status"] == "POSTED"
    assert cli.ok("budget", "ps-run")["usd"] is None
    assert cli.ok("read", "ok/in", "--blackboard", "ps-run")["author"] == "ps-inproc"


def test_a_worker_started_inside_a_run_says_at_once_that_it_could_claim_nothing(rcli):
    rcli.post(ps="ps-run", entry="e-1")
    started = rcli("worker", "--agent", "ps-trier", "--once", env={"BLACKBOARD_AGENT": "ps-lead"}).expect(3)
    assert (
        "agent ps-lead's run may not run a worker of ps-trier: a run works on the claim it holds; workers claim"
        in started.stderr
    )
    assert rcli.ok("signals", "--status", "CLAIMED") == []
