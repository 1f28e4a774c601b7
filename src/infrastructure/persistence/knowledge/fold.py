"""The entry half of the one fold: entry events into `blackboard_entries` and `entry_topics`.

Each key's state is read once per fold (or comes from the caller: a command's commit seeds it with
the state it loaded, a rebuild from empty keeps every key in memory), evolved by the domain's own
`evolve`, and its row, topics and searched words written again.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

from sqlalchemy import Connection, bindparam, delete, insert, select, tuple_

from blackboard.application.ports import Recorded
from blackboard.domain.events import EntryEvent
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.domain.knowledge.entries import Entry
from blackboard.infrastructure.persistence import lean
from blackboard.infrastructure.persistence.knowledge.codec import entry_from_row, entry_row, topic_rows
from blackboard.infrastructure.persistence.knowledge.search import entry_index
from blackboard.infrastructure.persistence.tables import ENTRIES, ENTRY_TOPICS

Keys = MutableMapping[tuple[str, str], Entry | None]  # (board, key) -> its state, None: never written

DROP_ROW = delete(ENTRIES).where(ENTRIES.c.blackboard_id == bindparam("b"), ENTRIES.c.key == bindparam("k"))
DROP_TOPICS = delete(ENTRY_TOPICS).where(
    ENTRY_TOPICS.c.blackboard_id == bindparam("b"), ENTRY_TOPICS.c.key == bindparam("k")
)


INSERT_ROW, INSERT_TOPIC = insert(ENTRIES), insert(ENTRY_TOPICS)
FEW = (
    8  # keys whose rows go as single statements on `writes` (a command's); more (a catch-up's page): in bulk
)


def fold_entries(
    conn: Connection,
    records: Sequence[Recorded],
    known: Keys,
    complete: bool = False,
    writes: list[lean.Step] | None = None,
) -> None:
    """Fold entry records (in position order) into the rows. `known` holds states matching the rows
    (and keeps the new ones); with `complete`, a key missing from it has no row. `writes`: where the rows'
    statements go for the caller to send with the checkpoint's move, in one round trip (fold.finish), when
    the records touch few keys; without it, or for many keys, they run here."""
    touched = list(
        dict.fromkeys(
            (r.event.blackboard_id, r.event.key)
            for r in records  # type: ignore[attr-defined]
            if isinstance(r.event, EntryEvent)
        )
    )
    missing = [k for k in touched if k not in known]
    if missing and not complete:
        for row in conn.execute(
            select(ENTRIES).where(tuple_(ENTRIES.c.blackboard_id, ENTRIES.c.key).in_(missing))
        ):
            known[(row.blackboard_id, row.key)] = entry_from_row(row)
    for record in records:
        event = record.event
        if isinstance(event, EntryEvent):
            where = (event.blackboard_id, event.key)
            known[where] = entry_rules.evolve(known.get(where), event, record.position)
    if not touched:
        return
    ids = [{"b": b, "k": k} for b, k in touched]
    states = [known[k] for k in touched]
    rows = [entry_row(e) for e in states if e is not None]
    topics = [t for e in states if e is not None for t in topic_rows(e)]
    if writes is not None and len(touched) <= FEW:
        writes.extend([*((DROP_ROW, i) for i in ids), *((DROP_TOPICS, i) for i in ids)])
        writes.extend([*((INSERT_ROW, r) for r in rows), *((INSERT_TOPIC, t) for t in topics)])
    else:
        conn.execute(DROP_ROW, ids)
        conn.execute(DROP_TOPICS, ids)
        if rows:
            conn.execute(INSERT_ROW, rows)
        if topics:
            conn.execute(INSERT_TOPIC, topics)
    entry_index(conn).replace(conn, touched, states)  # what `search` finds


def clear_entries(conn: Connection) -> None:
    conn.execute(delete(ENTRY_TOPICS))
    conn.execute(delete(ENTRIES))
    entry_index(conn).clear(conn)
