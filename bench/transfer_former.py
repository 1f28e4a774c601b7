"""The former export and import (before issue 27 item 4), kept to be measured beside the streamed ones:
the whole board in a list, one `json.dumps` of the document; the whole file read, one `json.loads`, every
event loaded into a list and replayed, then all inserted. `python -m bench.transfer_former export URL BOARD
OUT` / `import URL FILE`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from blackboard.application.ports import StoredEvent
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import EntryEvent, SolveEvent, load_event
from blackboard.infrastructure.cli.transfer import _event, dump, to_document
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import load


def main(argv: list[str]) -> None:
    what, url = argv[0], argv[1]
    container = Container(config=load({"db": url}))
    store = container.event_store()
    if what == "export":
        board, out = argv[2], Path(argv[3])
        events = list(store.stream_board_events(board))  # as the former board_events: a list
        out.write_text(dump(to_document(board, events)) + "\n", encoding="utf-8")
        return
    document = json.loads(Path(argv[2]).read_text(encoding="utf-8"))
    board = document["blackboard_id"]
    events = [StoredEvent(**_event(f"events[{i}]", item)) for i, item in enumerate(document["events"])]
    loaded = [
        load_event(
            e.event_type,
            e.schema_version,
            {
                "event_id": e.event_id,
                "blackboard_id": board,
                "version": e.version,
                "occurred_at": e.occurred_at,
            },
            dict(e.data),
        )
        for e in events
    ]
    BlackboardAggregate.replay(board, [e for e in loaded if not isinstance(e, EntryEvent | SolveEvent)])
    store.import_events(board, events)
    container.projector().catch_up()


if __name__ == "__main__":
    main(sys.argv[1:])
