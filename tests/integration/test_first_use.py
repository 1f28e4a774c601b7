"""Concurrent first use of a SQLite file: processes that start at once on a file that does not exist yet
all succeed (creating it, switching it to WAL, migrating it), round after round.

Each of N real processes holds the CLI imported (forked from a server that imported it once: tests/processes.py),
and for each round waits at a barrier with the others and runs one command against that round's fresh file, in
process, so the rounds cost milliseconds and the processes really do arrive together.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from tests.processes import warm_context

PROCESSES, ROUNDS = 8, 15
COMMANDS = (  # writers and readers arriving together
    ("post", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "first use"),
    ("signals",),
    ("events",),
)


def _run_rounds(index: int, folder: str, barrier, results) -> None:
    from blackboard.infrastructure.cli import main

    for round_ in range(ROUNDS):
        url = f"sqlite:///{Path(folder) / f'round-{round_}' / 'blackboard.db'}"
        err = io.StringIO()
        barrier.wait(timeout=120)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(["--db", url, "--agents-dir", folder, *COMMANDS[index % len(COMMANDS)]])
        results.put((round_, code, err.getvalue()))


def test_processes_starting_at_once_on_a_new_file_all_succeed(tmp_path):
    (tmp_path / "nobody.md").write_text(
        "---\nname: nobody\ncapabilities: {RESEARCH: 0.9}\n---\n", encoding="utf-8"
    )
    context = warm_context()
    barrier, results = context.Barrier(PROCESSES), context.Queue()
    workers = [
        context.Process(target=_run_rounds, args=(i, str(tmp_path), barrier, results))
        for i in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=300) for _ in range(PROCESSES * ROUNDS)]
    for worker in workers:
        worker.join(timeout=60)

    failed = [(round_, code, err.strip()) for round_, code, err in outcomes if code != 0]
    assert failed == [], f"{len(failed)} of {len(outcomes)} first uses failed, e.g. {failed[:3]}"
    assert all(w.exitcode == 0 for w in workers)
