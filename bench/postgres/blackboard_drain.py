"""blackboard in section (g): its backlog, its workers, what its event log says after a drain, and its wake-up.

The backlog is posted one signal at a time through the application's service (built by its
container, bench/common.py `wired`), before any worker runs. The workers are `blackboard worker
--agent bench-noop --concurrency C` processes (bench/fleet.py), the agent's handler an `entrypoint`
by default (a Python function in the worker, like the queues' tasks) or a `command` (`true`, a
process per signal). Done = the read model shows the signal COMPLETED.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.drain import BLACKBOARD_PROGRESS_SQL
from bench.fleet import HANDLERS, POST_TIMEOUT_S, agents_dir, worker_command, worker_env
from bench.postgres.systems import System

if TYPE_CHECKING:
    from bench.postgres.databases import Databases

BOARD = "ps-pg-bench"


def post(i: int, what: str) -> Any:
    from blackboard.application.commands import PostSignal

    return PostSignal(
        signal_type="RESEARCH", ps_id=BOARD, entry_id=f"e-{i}", topic=f"{what} {i}", prompt="nothing to do"
    )


class BlackboardSystem(System):
    name = "blackboard"
    unit = "signals"
    progress_sql = BLACKBOARD_PROGRESS_SQL

    def __init__(self, handler: str = "entrypoint", worker_args: Sequence[str] = ()) -> None:
        self.handler = handler
        self.worker_args = list(worker_args)
        self.post_seconds = 0.0

    def prepare(self, dbs: Databases, root: Path, n: int) -> str:
        from bench.common import wired

        name = dbs.create(f"bb_template_{n}")
        with wired(
            dbs.sqlalchemy_url(name), agents_dir=agents_dir(root, self.handler), post_timeout=POST_TIMEOUT_S
        ) as container:
            service = container.service()
            started = time.perf_counter()
            for i in range(n):
                service.post_signal(post(i, "backlog"))
            self.post_seconds = time.perf_counter() - started
        return name

    def command(self) -> list[str]:
        return worker_command(self.worker_args)

    def env(self, dbs: Databases, db: str, root: Path) -> dict[str, str]:
        return worker_env(dbs.sqlalchemy_url(db), agents_dir(root, self.handler))

    def analyse(self, dbs: Databases, db: str, n: int) -> dict[str, Any]:
        """From the event log: claims per worker, exactly once, and where a worker's time goes."""
        from bench.common import wired
        from bench.drain import log_figures

        with wired(dbs.sqlalchemy_url(db)) as container:
            records = container.event_store().read_all()
        return log_figures(records, n)

    def setup_note(self) -> str:
        return (
            f"`blackboard worker --agent bench-noop {' '.join(self.worker_args)}` ({HANDLERS[self.handler]}); "
            f"the backlog posted through BlackboardService ({self.post_seconds:.1f} s)"
        )


def empty_template(dbs: Databases) -> str:
    """A database with blackboard's schema and nothing else (the container opens it: schema created)."""
    from bench.common import wired

    name = dbs.create("bb_template_empty")
    with wired(dbs.sqlalchemy_url(name)) as container:
        container.engine()
    return name


def wakeup(
    dbs: Databases,
    root: Path,
    template: str,
    handler: str,
    n: int,
    gap: tuple[float, float],
    label: str = "defaults",
    worker_args: Sequence[str] = (),
) -> dict[str, Any]:
    """bench/wakeup.py with one idle worker (its defaults, but for `worker_args`) on a clone of `template`."""
    from bench.common import wired
    from bench.drain import blackboard_progress
    from bench.fleet import fleet
    from bench.wakeup import wakeup as measure

    db = dbs.create(f"wake_{label}", template=template)
    url, agents = dbs.sqlalchemy_url(db), agents_dir(root, handler)
    with (
        wired(url, agents_dir=agents, post_timeout=POST_TIMEOUT_S) as container,
        fleet(root, f"wakeup-{label}", worker_env(url, agents)) as running,
    ):
        result = measure(
            running,
            container,
            blackboard_progress(container.engine()),
            command=worker_command(worker_args),
            k=1,
            n=n,
            board=BOARD,
            gap=gap,
            seed=n,
            settle_s=0.5,
        )
    return {"variant": label, "worker_args": list(worker_args), **result, "processes": running.results}
