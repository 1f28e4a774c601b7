"""A reader following the log never skips an event, even one whose transaction commits late."""

from __future__ import annotations

import random
import threading
import time

from sqlalchemy import event

from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from tests.contract.stories import posts

WRITERS, APPENDS = 4, 25


def test_a_reader_never_skips_an_event_that_commits_after_a_later_numbered_one(sql_engine):
    def linger(conn) -> None:  # every writer holds its transaction open a moment before COMMIT
        time.sleep(random.uniform(0, 0.004))

    event.listen(sql_engine, "commit", linger)
    try:
        store = SqlAlchemyEventStore(sql_engine)
        done, seen, appended = threading.Event(), [], []

        def follow() -> None:
            after = 0
            while not done.is_set() or after < store.last_position():
                for record in store.read_all(after=after):
                    seen.append(record.position)
                    after = record.position

        def write(writer: int) -> None:
            for n, one in enumerate(posts(f"bb-{writer}", APPENDS, first=1000 * (writer + 1))):
                appended.extend(r.position for r in store.append(f"bb-{writer}", n, [one]))

        reader = threading.Thread(target=follow)
        writers = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
        reader.start()
        for t in writers:
            t.start()
        for t in writers:
            t.join()
        done.set()
        reader.join(timeout=30)
    finally:
        event.remove(sql_engine, "commit", linger)

    assert len(appended) == WRITERS * APPENDS
    assert seen == sorted(appended)  # every event, once, in position order: none was skipped
