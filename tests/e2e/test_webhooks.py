"""Gates that call a person (docs/webhooks.md; issue 36 item 6): through the real CLI, a real worker and the real
web view, on SQLite and PostgreSQL, against a real HTTP receiver on 127.0.0.1 (a thread of the test). A gate
opened by `post --gate` or `flow run`, decided by `approve`/`reject` (or on the web view), or timed out is
POSTed to each URL, signed with the secret; a receiver that answers 500 or refuses connections gets the same
body again, each try recorded, until it takes it; two processes delivering at once send each one once."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.e2e.conftest import Cli, cli_with_agents
from tests.e2e.web import UiServer, free_port
from tests.waiting import wait_until

SECRET = "whsec-0123456789abcdef"
TOKEN = "ui-token-0123456789"
AGENTS = {
    "ps-quick.md": "---\nname: ps-quick\ncapabilities: {RESEARCH: 0.95, SYNTHESIS: 0.95}\n"
    "command: env > env-of-a-run.txt; echo done\n---\nAnswers at once, noting what its run was given.\n"
}
FLOW = """---
name: publish
description: approve, then write
steps:
  - id: approve
    gate: true
    topic: publish the <report> & its numbers?
  - id: write
    agent: ps-quick
    type: SYNTHESIS
    topic: the report
    after: [approve]
---
A person approves before the report is written.
"""


class Receiver:
    """An HTTP receiver in a thread of the test: records every POST and answers `answer`; `stop()` closes its
    port (a client's connection is then refused) and `start()` opens it again."""

    def __init__(self) -> None:
        self.port = free_port()
        self.answer = 200
        self.delay = 0.0  # seconds before it answers: longer than the board's timeout, it never hears back
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/gates"

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                late = receiver.delay > 0
                with receiver._lock:
                    receiver.calls.append(
                        {
                            "path": self.path,
                            "headers": dict(self.headers),
                            "body": body,
                            "answer": None if late else receiver.answer,
                        }
                    )
                if late:
                    threading.Event().wait(receiver.delay)  # the board has given up on this try by then
                    return
                self.send_response(receiver.answer)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.handle_error = lambda request, address: None  # type: ignore[method-assign] - a client gone
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def received(self, event: str | None = None, signal_id: str | None = None) -> list[dict[str, Any]]:
        """The bodies of the POSTs answered 2xx (of that event and gate), checked for their signature."""
        with self._lock:
            calls = list(self.calls)
        found = []
        for call in calls:
            if call["answer"] is None or call["answer"] >= 300:
                continue
            body = verified(call["headers"], call["body"])
            if event in (None, body["event"]) and signal_id in (None, body["signal_id"]):
                found.append(body)
        return found

    def tries(self, signal_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return [c for c in self.calls if json.loads(c["body"])["signal_id"] == signal_id]


def verified(headers: dict[str, str], body: bytes) -> dict[str, Any]:
    """What a receiver does (docs/webhooks.md): the HMAC-SHA256 of the bytes it got, keyed with the secret,
    compared with the header in constant time; then the JSON."""
    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Blackboard-Signature"], expected), "a bad signature"
    assert headers["Content-Type"] == "application/json"
    return json.loads(body)


class HookedCli(Cli):
    """The CLI with the webhooks configured for every call (a call's own `env` may change them)."""

    hooks: dict[str, str] = {}

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return super().environment({**self.hooks, **(extra or {})})


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def hcli(request, make_cli, tmp_path_factory, tmp_path, receiver) -> Iterator[HookedCli]:
    plain = cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "webhooks", AGENTS)
    made = HookedCli(plain.db_url, plain.agents_dir, plain.cwd)
    made.hooks = {
        "BLACKBOARD_WEBHOOKS": receiver.url,
        "BLACKBOARD_WEBHOOK_SECRET": SECRET,
        "BLACKBOARD_UI_URL": "https://board.example/",
        "BLACKBOARD_WEBHOOK_RETRY": "0.3",
        # a command waits for its round at most this long: a bound for a loaded machine, never reached
        "BLACKBOARD_WEBHOOK_TIMEOUT": "10",
    }
    (tmp_path / "publish.md").write_text(FLOW, encoding="utf-8")
    made.ok("events", "--limit", "1")  # the schema exists before anything starts
    yield made
    made.close()


def gate(cli: Cli, entry: str, *args: str, board: str = "ps-w", env: dict[str, str] | None = None) -> str:
    return cli.post(
        "--gate", *args, type="DECISION", ps=board, entry=entry, topic=f"decide {entry}", env=env
    )["signal_id"]


def listed(cli: Cli, board: str = "ps-w") -> list[dict[str, Any]]:
    return cli.ok("webhooks", "--blackboard", board)


def by_event(rows: list[dict[str, Any]], signal_id: str) -> dict[str, dict[str, Any]]:
    return {r["event"]: r for r in rows if r["signal_id"] == signal_id}


def test_a_gate_posted_and_decided_calls_the_receiver_signed_and_each_delivery_is_listed(hcli, receiver):
    g = gate(hcli, "e-1")
    # the command's own round sends it before it exits (it waits for it at most the timeout)
    opened = wait_until(lambda: receiver.received("gate.opened", g), what="the gate's opening")
    after = hcli.post("--after", g, ps="ps-w", entry="e-2", topic="after the <decision>")["signal_id"]

    approved = hcli.ok("approve", g, "--by", "alice", "--note", "fine & checked")
    assert approved["status"] == "COMPLETED"
    [decided] = wait_until(lambda: receiver.received("gate.approved", g), what="the gate's approval")

    body = opened[0]
    assert (body["board"], body["signal_id"], body["topic"], body["status"]) == (
        "ps-w",
        g,
        "decide e-1",
        "POSTED",
    )
    assert body["approve_url"] == f"https://board.example/api/gates/{g}/approve"
    assert body["reject_url"] == f"https://board.example/api/gates/{g}/reject"
    assert body["waiting"] == [] and body["decided_by"] is None
    assert body["text"].startswith(f"Gate {g} on board ps-w waits for a person: decide e-1")
    assert (decided["decided_by"], decided["note"], decided["status"]) == (
        "alice",
        "fine & checked",
        "COMPLETED",
    )
    assert [w["signal_id"] for w in decided["waiting"]] == [after]
    assert (
        decided["waiting"][0]["topic"] == "after the <decision>"
    )  # the board's words: a JSON string as given
    assert "fine &amp; checked" in decided["text"]  # ... and escaped in the chat's text
    call = receiver.tries(g)[-1]
    assert call["path"] == "/hooks/gates" and call["headers"]["X-Blackboard-Event"] == "gate.approved"

    rows = listed(hcli)
    assert [(r["event"], r["signal_id"], r["status"], r["attempts"]) for r in rows] == [
        ("gate.opened", g, "delivered", 1),
        ("gate.approved", g, "delivered", 1),
    ]
    assert all(
        r["url"] == receiver.url and r["last_status"] == 200 and r["next_try_at"] is None for r in rows
    )
    text = hcli("webhooks", "--blackboard", "ps-w").expect(0).stdout
    assert "gate.approved" in text and "delivered" in text and receiver.url in text
    assert SECRET not in json.dumps(rows) + text  # never printed, never stored with the deliveries

    r = gate(hcli, "e-3")
    hcli.ok("reject", r, "--by", "bob", "--reason", "not now")
    [rejected] = wait_until(lambda: receiver.received("gate.rejected", r), what="the rejection")
    assert (rejected["decided_by"], rejected["note"], rejected["status"]) == ("bob", "not now", "FAILED")
    assert len(receiver.received(signal_id=g)) == 2  # nothing was sent twice

    c = gate(hcli, "e-4")
    wait_until(lambda: receiver.received("gate.opened", c), what="the third gate's opening")
    hcli.ok("cancel", c, "--by", "carol", "--reason", "moot")
    [cancelled] = wait_until(lambda: receiver.received("gate.cancelled", c), what="the cancel")
    assert (cancelled["status"], cancelled["decided_by"], cancelled["note"]) == ("CANCELLED", "carol", "moot")


def test_a_flow_run_opens_its_gate_with_the_work_waiting_on_it(hcli, receiver):
    flow = hcli.ok("flow", "run", "publish.md", "--blackboard", "docs", "--flow-id", "f-1")
    steps = {s["step_id"]: s["signal_id"] for s in flow["steps"]}

    [body] = wait_until(lambda: receiver.received("gate.opened", steps["approve"]), what="the flow's gate")

    assert body["board"] == "docs" and body["topic"] == "publish the <report> & its numbers?"
    assert [(w["signal_id"], w["signal_type"], w["status"]) for w in body["waiting"]] == [
        (steps["write"], "SYNTHESIS", "POSTED")
    ]
    assert "publish the &lt;report&gt; &amp; its numbers?" in body["text"]
    assert [r["event"] for r in listed(hcli, "docs")] == ["gate.opened"]


def test_a_gate_that_times_out_is_announced_once_it_expires(hcli, receiver):
    g = gate(hcli, "e-1", "--timeout-s", "1")
    wait_until(lambda: receiver.received("gate.opened", g), what="the gate's opening")

    wait_until(lambda: any(s["signal_id"] == g for s in hcli.ok("expire")), what="the gate to time out")

    [body] = wait_until(lambda: receiver.received("gate.timed_out", g), what="the time-out's announcement")
    assert (body["status"], body["decided_by"]) == ("EXPIRED", None)
    assert "timed out" in body["text"]
    assert [(r["event"], r["status"]) for r in listed(hcli)] == [
        ("gate.opened", "delivered"),
        ("gate.timed_out", "delivered"),
    ]


def test_a_receiver_that_fails_then_is_down_then_comes_back_gets_the_same_body_and_every_try_is_recorded(
    hcli, receiver
):
    receiver.answer = 500
    g = gate(hcli, "e-1")  # the command is not failed by its receiver

    first = by_event(listed(hcli), g)["gate.opened"]
    assert (first["status"], first["attempts"], first["last_status"]) == ("pending", 1, 500)
    assert first["last_error"].startswith("HTTP 500") and first["next_try_at"] is not None

    receiver.stop()  # refuses connections now
    second = wait_until(
        lambda: (row := _delivered_or_tried(hcli, g, 2)) and row,
        what="a second try, to a receiver that is down",
    )
    assert (second["status"], second["last_status"]) == ("pending", None)
    assert "refused" in second["last_error"]
    assert second["next_try_at"] > first["next_try_at"]  # backing off

    receiver.answer = 200
    receiver.start()
    done = wait_until(
        lambda: (row := _delivered_or_tried(hcli, g, 3)) and row["status"] == "delivered" and row,
        what="the receiver, back, to take it",
    )
    assert (done["attempts"], done["last_status"], done["last_error"], done["next_try_at"]) == (
        3,
        200,
        None,
        None,
    )
    tries = receiver.tries(g)
    assert [t["answer"] for t in tries] == [500, 200]  # the try in between found the port closed
    assert tries[0]["body"] == tries[1]["body"]  # the same bytes, the same signature
    assert tries[0]["headers"]["X-Blackboard-Signature"] == tries[1]["headers"]["X-Blackboard-Signature"]
    assert len(receiver.received("gate.opened", g)) == 1


def test_a_receiver_that_never_answers_does_not_fail_the_command_and_its_try_is_recorded(hcli, receiver):
    receiver.delay = 5.0
    quick = {"BLACKBOARD_WEBHOOK_TIMEOUT": "0.5"}
    g = gate(hcli, "e-1", env=quick)  # exit 0, whatever the receiver does

    row = wait_until(
        lambda: (row := _delivered_or_tried(hcli, g, 1, quick)) and row["last_error"] and row,
        timeout=90,  # should the command have ended before recording its try: its lease's end, then a round
        what="the try that got no answer to be recorded",
    )
    assert (row["status"], row["last_status"]) == ("pending", None)
    assert row["last_error"] == "no answer within 0.5s"

    receiver.delay = 0.0
    done = wait_until(
        lambda: (row := _delivered_or_tried(hcli, g, 2, quick)) and row["status"] == "delivered" and row,
        timeout=90,
        what="the receiver, answering now, to take it",
    )
    assert done["last_error"] is None
    assert len(receiver.received("gate.opened", g)) == 1


def _delivered_or_tried(
    cli: Cli, signal_id: str, attempts: int, env: dict[str, str] | None = None
) -> dict[str, Any] | None:
    """A round (`webhooks --deliver`, as a cron job would run it), then the gate's opening once tried that often."""
    cli("webhooks", "--deliver", env=env).expect(0)
    row = by_event(listed(cli), signal_id)["gate.opened"]
    return row if row["attempts"] >= attempts else None


def test_a_delivery_nobody_takes_is_given_up_after_its_time(hcli, receiver):
    receiver.stop()
    quick = {"BLACKBOARD_WEBHOOK_GIVE_UP": "1.5", "BLACKBOARD_WEBHOOK_RETRY": "0.2"}
    g = gate(hcli, "e-1", env=quick)

    def given_up() -> dict[str, Any] | None:
        hcli("webhooks", "--deliver", env=quick).expect(0)
        row = by_event(listed(hcli), g)["gate.opened"]
        return row if row["status"] == "given up" else None

    row = wait_until(given_up, what="the delivery to be given up")
    assert row["attempts"] >= 2 and row["next_try_at"] is None and "refused" in row["last_error"]
    receiver.start()
    hcli("webhooks", "--deliver").expect(0)
    assert receiver.tries(g) == []  # given up: never sent again


def test_processes_delivering_at_once_send_each_announcement_once(hcli, receiver):
    quiet = {"BLACKBOARD_WEBHOOKS": ""}  # posted with no webhooks: the rounds below find them all at once
    gates = [gate(hcli, f"e-{i}", env=quiet) for i in range(6)]
    assert listed(hcli) == []

    rounds = hcli.many({f"round-{i}": (("--json", "webhooks", "--deliver"), None) for i in range(4)})
    counts = [done.result().expect(0).json() for done in rounds.values()]
    assert sum(c["made"] for c in counts) == len(gates)  # each delivery made by one of them ...
    assert sum(c["received"] for c in counts) == len(gates)  # ... and sent by one

    assert sorted(b["signal_id"] for b in receiver.received("gate.opened")) == sorted(gates)
    assert len(receiver.calls) == len(gates)  # each POSTed once, whichever process took it
    assert {(r["status"], r["attempts"]) for r in listed(hcli)} == {("delivered", 1)}


def test_the_web_view_deciding_a_gate_announces_it_from_its_own_process(hcli, receiver):
    g = gate(hcli, "e-1")
    wait_until(lambda: receiver.received("gate.opened", g), what="the gate's opening")
    server = UiServer(hcli, "--token", TOKEN).wait_ready({"X-Blackboard-Token": TOKEN})
    try:
        body = json.dumps({"by": "carol", "note": "from the page"})
        headers = {"X-Blackboard-Token": TOKEN, "Origin": server.url}
        status, _, _ = server.post(f"/api/gates/{g}/approve", body, headers)
        assert status == 200

        [decided] = wait_until(lambda: receiver.received("gate.approved", g), what="the page's decision")
        assert (decided["decided_by"], decided["note"]) == ("carol", "from the page")
        # the server records the answer once it has it: a moment after the receiver got the body
        wait_until(
            lambda: by_event(listed(hcli), g)["gate.approved"]["status"] == "delivered",
            what="the page's announcement to be recorded delivered",
        )
    finally:
        assert "Traceback" not in server.stop()


def test_the_python_api_announces_the_gates_it_posts_and_decides(hcli, receiver):
    from blackboard import Blackboard

    with Blackboard(
        hcli.db_url,
        agents_dir=hcli.agents_dir,
        webhooks=receiver.url,
        webhook_secret=SECRET,
        webhook_retry=0.3,
    ) as bb:
        g = bb.post("DECISION", "ps-api", "e-1", "ship it?", gate=True).signal_id
        wait_until(lambda: receiver.received("gate.opened", g), what="the API's gate")
        bb.reject(g, by="dana", reason="not yet")
    # closing waited for the round its rejection asked for (at most the timeout and a second)
    [body] = wait_until(lambda: receiver.received("gate.rejected", g), what="the API's rejection")
    assert (body["board"], body["decided_by"], body["note"]) == ("ps-api", "dana", "not yet")
    assert (
        body["approve_url"] == f"http://127.0.0.1:8765/api/gates/{g}/approve"
    )  # BLACKBOARD_UI_URL's default


def test_a_worker_completing_the_upstream_announces_the_gate_it_opens(hcli, receiver):
    up = hcli.post(ps="ps-w", entry="e-1", topic="find the numbers")["signal_id"]
    g = gate(hcli, "e-2", "--after", up)
    assert receiver.received() == []  # waiting for its upstream: not open yet

    worker = hcli.start("worker", "--agent", "ps-quick", "--board", "ps-w")
    try:
        [body] = wait_until(lambda: receiver.received("gate.opened", g), what="the worker to open the gate")
        assert body["status"] == "POSTED" and hcli.ok("show", up)["status"] == "COMPLETED"
        handed = (hcli.agents_dir / "env-of-a-run.txt").read_text()
        assert "BLACKBOARD_DB=" in handed  # what the run needs ...
        assert SECRET not in handed and "BLACKBOARD_WEBHOOKS" not in handed  # ... and never the secret
    finally:
        worker.terminate()
        hcli.finish(worker)


def test_bad_webhook_settings_are_refused_naming_the_variable_and_write_nothing(hcli, receiver):
    refused = hcli(
        "post",
        "--gate",
        "--type",
        "DECISION",
        "--ps-id",
        "ps-w",
        "--entry-id",
        "e-1",
        "--topic",
        "t",
        env={"BLACKBOARD_WEBHOOKS": "ftp://files.example/x"},
    ).expect(2)
    assert "BLACKBOARD_WEBHOOKS: must be http:// or https:// URLs" in refused.stderr
    no_secret = hcli("webhooks", "--blackboard", "ps-w", env={"BLACKBOARD_WEBHOOK_SECRET": ""}).expect(2)
    assert "BLACKBOARD_WEBHOOK_SECRET: must be set when BLACKBOARD_WEBHOOKS is" in no_secret.stderr
    assert SECRET not in no_secret.stderr
    assert "BLACKBOARD_UI_URL" in hcli("expire", env={"BLACKBOARD_UI_URL": "board.example"}).expect(2).stderr
    assert "--blackboard: is required" in hcli("webhooks").expect(2).stderr
    unset = hcli("webhooks", "--deliver", env={"BLACKBOARD_WEBHOOKS": ""}).expect(2)
    assert "BLACKBOARD_WEBHOOKS: must be set to deliver" in unset.stderr
    assert hcli("webhooks", "--blackboard", "no-such-board").returncode == 4
    assert hcli.ok("events", "--all") == [] and receiver.calls == []
