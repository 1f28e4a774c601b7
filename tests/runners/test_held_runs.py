"""A run dies with its worker and with its claim: real workers, real handlers and the real Claude Code against
the stand-in, a real SIGKILL and SIGSTOP. Each run starts long-lived processes, one of which escapes its process
group and its parent (setsid and a double fork); none of them may outlive the worker that holds the claim, nor
a claim that lapsed while its worker was stopped."""

from __future__ import annotations

import json
import os
import signal as signals
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runners.claude import claude_env, environ, processes
from tests.runners.standins import call, say, slow, stand_in
from tests.waiting import wait_until

# What a run starts: a sleep in its group, and an escaped shell (its own session, its parent gone) with a sleep
# of its own; each writes its pid to the file named by $1, and the script ends once all three have.
SPAWN = """\
sleep 3600 >/dev/null 2>&1 &
echo $! >> "$1"
( setsid sh -c 'echo $$ >> "$0"; sleep 3600 >/dev/null 2>&1 & echo $! >> "$0"; wait' "$1" >/dev/null 2>&1 & )
while [ "$(wc -l < "$1")" -lt 3 ]; do sleep 0.05; done
"""
HANDLER = SPAWN + 'echo $$ >> "$1"\nwait\n'  # a handler that stays, its own pid the fourth
PROCESSES = 4
GONE_WITHIN = 10.0  # seconds: a generous bound on a loaded machine; bench (h) measures it (under 1 s)


@pytest.fixture
def spawned(tmp_path):
    """The file the run's processes write their pids to; whatever is left of them is killed afterwards."""
    pids = tmp_path / "pids"
    yield pids
    for pid in read_pids(pids):
        try:
            os.kill(pid, signals.SIGKILL)
        except ProcessLookupError:
            pass


def read_pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def alive(pids: list[int]) -> list[int]:
    table = processes()
    return [pid for pid in pids if pid in table and table[pid][2] != "Z"]


def all_up(path: Path, count: int = PROCESSES) -> list[int] | None:
    pids = read_pids(path)
    return pids if len(pids) == count and len(alive(pids)) == count else None


def handler_agent(board, tmp_path, spawned: Path) -> None:
    (tmp_path / "spawn.sh").write_text(HANDLER)
    board.agent("keeper-test", f"command: sh {tmp_path / 'spawn.sh'} {spawned}\n", "Run.")


def test_a_worker_killed_takes_its_command_handler_and_every_process_it_started_with_it(
    board, tmp_path, spawned
):
    handler_agent(board, tmp_path, spawned)
    signal = board.post("keeper-test")
    worker = board.cli.start("worker", "--agent", "keeper-test")
    pids = wait_until(lambda: all_up(spawned), 30, "the handler's processes")
    carried = [environ(pid) for pid in pids]

    os.kill(worker.call_pid, signals.SIGKILL)

    wait_until(lambda: not alive(pids), GONE_WITHIN, "every process of the run to be gone")
    assert board.show(signal["signal_id"])["status"] == "CLAIMED"  # nothing recorded: the lease lapses later
    assert_identity(carried, "keeper-test", signal["signal_id"])


def assert_identity(environments: list[dict[str, str]], agent: str, signal_id: str) -> None:
    """Every process of the run carries its agent, signal, board and the claim's token (that claim's own: a
    secret drawn for it, not the worker's public id)."""
    for environment in environments:
        assert environment["BLACKBOARD_AGENT"] == agent and environment["BLACKBOARD_SIGNAL_ID"] == signal_id
        assert environment["BLACKBOARD_BOARD"] == "ps-1"
        assert len(environment["BLACKBOARD_CLAIM_TOKEN"]) >= 32
        assert not environment["BLACKBOARD_CLAIM_TOKEN"].startswith(f"{agent}/")
    assert len({environment["BLACKBOARD_CLAIM_TOKEN"] for environment in environments}) == 1


def test_a_claim_that_lapses_while_its_worker_is_stopped_ends_its_run_and_nothing_of_it_is_recorded(
    board, tmp_path, spawned
):
    handler_agent(board, tmp_path, spawned)
    signal = board.post("keeper-test")
    worker = board.cli.start(
        "worker", "--agent", "keeper-test", "--once", env={"BLACKBOARD_CLAIM_TIMEOUT": "3"}
    )
    pids = wait_until(lambda: all_up(spawned), 30, "the handler's processes")
    token = environ(pids[-1])["BLACKBOARD_CLAIM_TOKEN"]  # the handler's own

    os.kill(worker.call_pid, signals.SIGSTOP)
    try:
        wait_until(lambda: not alive(pids), 3 + GONE_WITHIN, "the run's processes to be gone")
        assert processes()[worker.call_pid][2] == "T"  # while the worker is still stopped
    finally:
        os.kill(worker.call_pid, signals.SIGCONT)

    stopped = board.cli.finish(worker).expect(0)
    assert "its claim lapsed at" in stopped.stderr
    assert "blackboard keeper: " in stopped.stderr and token not in stopped.stderr  # the keeper's lines too
    done = board.show(signal["signal_id"])
    assert done["status"] == "EXPIRED"  # the board's word, at the worker's outcome: the worker's was refused
    assert "did not finish within the claim timeout of 3s" in done["result"]["error"]


def test_a_keeper_killed_is_started_again_and_still_ends_the_runs_with_their_worker(board, tmp_path, spawned):
    handler_agent(board, tmp_path, spawned)
    board.post("keeper-test")
    worker = board.cli.start("worker", "--agent", "keeper-test")
    pids = wait_until(lambda: all_up(spawned), 30, "the handler's processes")
    first = wait_until(lambda: keeper_of(worker.call_pid), 30, "the worker's keeper")

    os.kill(first, signals.SIGKILL)
    wait_until(lambda: keeper_of(worker.call_pid) not in (None, first), 30, "another keeper")
    os.kill(worker.call_pid, signals.SIGKILL)

    wait_until(lambda: not alive(pids), GONE_WITHIN, "every process of the run to be gone")
    _, said = worker.communicate(timeout=30)  # killed: no exit code to expect (the harness's shim has none)
    assert "starting another, which holds the 1 run(s) running" in said


def keeper_of(worker: int) -> int | None:
    found = [
        pid
        for pid, (line, _, state) in processes().items()
        if "blackboard.infrastructure.keeper" in line and state != "Z" and parent_of(pid) == worker
    ]
    return found[0] if found else None


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rfind(")") + 2 :].split()[1])


def test_a_worker_killed_takes_its_claude_code_run_its_board_server_and_its_tools_processes_with_it(
    board, tmp_path, spawned
):
    (tmp_path / "spawn.sh").write_text(SPAWN)
    board.agent("coder", "description: Codes.\ntools: Bash\nmodel: sonnet\n", "Code.")
    signal = board.post("coder")
    script = [
        call("Bash", {"command": f"sh {tmp_path / 'spawn.sh'} {spawned}", "description": "start servers"}),
        slow(120, say("never")),
    ]
    with stand_in(script) as api:
        worker = board.cli.start("worker", "--agent", "coder", env=claude_env(api.url, tmp_path))
        wait_until(lambda: len(api.model_calls) == 2, 60, "Claude Code's answer to the tool call")
        tools = wait_until(lambda: all_up(spawned, 3), 30, "the tool's processes")
        run = wait_until(lambda: claude_run(signal["signal_id"], tmp_path), 30, "Claude Code and its server")
        carried = [environ(pid) for pid in [*run, *tools]]

        os.kill(worker.call_pid, signals.SIGKILL)

        wait_until(lambda: not alive([*run, *tools]), GONE_WITHIN, "every process of the run to be gone")
    assert_identity(carried, "coder", signal["signal_id"])


def claude_run(signal_id: str, home: Path) -> list[int] | None:
    """Claude Code (whose HOME is this test's) and the board's MCP server it started, once both are up."""
    table = processes()
    claude = [
        pid
        for pid, (line, group, state) in table.items()
        if "--agents=" in line and group == pid and state != "Z" and home_of(pid) == str(home)
    ]
    server = [pid for pid, (line, _, _) in table.items() if f"mcp --agent coder --signal {signal_id}" in line]
    return [claude[0], server[0]] if claude and server else None


def home_of(pid: int) -> str | None:
    try:
        return environ(pid).get("HOME")
    except OSError:
        return None


def test_a_keeper_never_prints_a_run_s_token_even_from_a_line_it_could_not_read():
    """The keeper says what it ignored, and the worker's log holds what it says: never the marks."""
    secret = "a-claim-s-own-secret"
    held = {
        "run": "sig-0000beef",
        "pid": "not a pid",
        "group": 1,
        "marks": {"BLACKBOARD_CLAIM_TOKEN": secret},
    }
    lines = [json.dumps({**held, "renewed": 0, "wall": 0, "timeout": 5}), f"not json {secret}"]
    keeper = subprocess.run(
        [sys.executable, "-m", "blackboard.infrastructure.keeper", str(os.getpid())],
        input="".join(f"{line}\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert keeper.returncode == 0
    assert keeper.stderr.count("blackboard keeper: ignored a line it could not read") == 2, keeper.stderr
    assert '"marks": "(hidden)"' in keeper.stderr and "not a JSON object" in keeper.stderr
    assert secret not in keeper.stderr


# What a run leaves running as it ends by itself: SPAWN's three, and a sleep that ignores SIGTERM (the fourth)
LEAVES = (
    SPAWN
    + """\
( trap '' TERM; exec sleep 3600 ) >/dev/null 2>&1 &
echo $! >> "$1"
"""
)


def test_a_command_handler_that_ends_by_itself_leaves_nothing_running(board, tmp_path, spawned):
    """Before: the run COMPLETED and its processes lived on (reparented, an hour of sleep each), past the
    worker's own end too: only a run the worker still held was ended."""
    (tmp_path / "leaves.sh").write_text(LEAVES + "echo done\n")
    board.agent("keeper-test", f"command: sh {tmp_path / 'leaves.sh'} {spawned}\n", "Run.")
    signal = board.post("keeper-test")
    worker = board.cli.start("worker", "--agent", "keeper-test")
    wait_until(lambda: board.show(signal["signal_id"])["status"] == "COMPLETED", 60, "the run's end")
    pids = read_pids(spawned)
    assert len(pids) == PROCESSES

    wait_until(lambda: not alive(pids), GONE_WITHIN, "every process the run left to be gone")
    worker.send_signal(signals.SIGTERM)
    stopped = board.cli.finish(worker).expect(0)
    assert board.show(signal["signal_id"])["result"]["knowledge_items"] == ["done"]
    assert (
        f"{signal['signal_id']} ended; killed 1 process(es) it left running, 1s after SIGTERM"
        in stopped.stderr
    )


def test_a_claude_code_run_that_ends_by_itself_leaves_nothing_its_tools_started_running(
    board, tmp_path, spawned
):
    (tmp_path / "leaves.sh").write_text(LEAVES)
    board.agent("coder", "description: Codes.\ntools: Bash\nmodel: sonnet\n", "Code.")
    signal = board.post("coder")
    script = [
        call("Bash", {"command": f"sh {tmp_path / 'leaves.sh'} {spawned}", "description": "start servers"}),
        say("SERVERS STARTED"),
    ]
    with stand_in(script) as api:
        worker = board.cli.start("worker", "--agent", "coder", env=claude_env(api.url, tmp_path))
        wait_until(lambda: board.show(signal["signal_id"])["status"] == "COMPLETED", 120, "the run's end")
        pids = read_pids(spawned)
        assert len(pids) == PROCESSES

        wait_until(lambda: not alive(pids), GONE_WITHIN, "every process the run left to be gone")
        worker.send_signal(signals.SIGTERM)
        board.cli.finish(worker).expect(0)
    assert board.show(signal["signal_id"])["result"]["knowledge_items"] == ["SERVERS STARTED"]
