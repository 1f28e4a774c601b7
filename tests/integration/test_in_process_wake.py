"""On SQLite a waiter polls the log; what its own process stores wakes it at once, through the dispatcher."""

from __future__ import annotations

import threading
import time

from blackboard.application.commands import PostSignal
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings


def test_a_waiter_wakes_as_soon_as_its_own_process_appends_not_at_its_next_poll(tmp_path, sqlite_url):
    container = Container(
        config=BlackboardSettings(db=sqlite_url, agents_dir=str(tmp_path), poll_interval=5.0)
    )
    notifier, service, store = container.notifier(), container.service(), container.event_store()
    position, woke = store.last_position(), []

    waiter = threading.Thread(target=lambda: woke.append((notifier.wait(position, 10), time.monotonic())))
    waiter.start()
    time.sleep(0.2)  # the waiter is asleep in its first poll by now
    posted_at = time.monotonic()
    service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="wake up"))
    waiter.join(10)

    ((moved, at),) = woke
    assert moved and at - posted_at < 1.0, (
        f"woke {at - posted_at:.2f}s after the post (the poll interval is 5 s)"
    )
    container.engine().dispose()
