"""The beat of the process driving a solve run: its row in `solve_processes`, refreshed from a thread of its own
every beat interval (`BLACKBOARD_BEAT_INTERVAL`, as a worker's), so `solve --status` on any host tells a run
whose process is gone (`orphaned`: it stopped beating, or said it ended) from one still driven.

A process that finds on a beat that another one took its row (a `solve --resume` of the run while this one
was stalled) stops beating and says so through `holding`, which the run's loop reads before it acts again.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from dataclasses import replace
from datetime import timedelta

from blackboard.application.ports import Clock, StoreUnavailable
from blackboard.application.solve.ports import SolveProcesses
from blackboard.domain.presence import SolveProcess

logger = logging.getLogger("blackboard.solve")


class SolveBeat:
    def __init__(
        self, processes: SolveProcesses, clock: Clock, blackboard_id: str, run_id: str, every: float
    ) -> None:
        self._processes, self._clock, self._every = processes, clock, every
        now = clock.now()
        self._me = SolveProcess(
            blackboard_id=blackboard_id,
            run_id=run_id,
            holder=uuid.uuid4().hex,
            host=socket.gethostname(),
            pid=os.getpid(),
            started_at=now,
            last_beat=now,
            beat_every=timedelta(seconds=every),
        )
        self._stopping = threading.Event()
        self._taken = threading.Event()
        self._thread = threading.Thread(target=self._run, name="solve-beat", daemon=True)

    @property
    def host(self) -> str:
        return self._me.host

    @property
    def pid(self) -> int:
        return self._me.pid

    def start(self) -> None:
        """Take the run's row (whoever held it), then beat until `stop`."""
        self._processes.take(self._me)
        self._thread.start()

    def holding(self) -> bool:
        """False once another process took the run's row."""
        return not self._taken.is_set()

    def stop(self) -> None:
        """No more beats; the row says this process ended (unless another one holds it now)."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._taken.is_set():
            return
        try:
            me = self._me
            self._processes.stopped(me.blackboard_id, me.run_id, me.holder, self._clock.now())
        except StoreUnavailable as down:
            logger.warning(
                "could not say solve run %s's process ended (%s); it goes stale", self._me.run_id, down
            )

    def _run(self) -> None:
        while not self._stopping.wait(self._every):
            try:
                if not self._processes.beat(replace(self._me, last_beat=self._clock.now())):
                    logger.warning("solve run %s was taken up by another process", self._me.run_id)
                    self._taken.set()
                    return
            except StoreUnavailable as down:  # the run's own loop rides out the outage; beat again next time
                logger.warning("could not beat for solve run %s (%s)", self._me.run_id, down)
            except Exception:  # a beat must never end the thread: the run would look orphaned while it runs
                logger.exception("could not beat for solve run %s", self._me.run_id)
