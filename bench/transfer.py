"""(y) Export and import of a big board: the peak memory (RSS) of `blackboard export` and `blackboard import`,
each in a fresh process, beside the former export and import (bench/transfer_former.py: the whole board in a
list, one json.dumps / json.loads of the document), on the same board, in one run (issue 27, item 4).

The board is synthesised as an export document (no command runs to make it): per signal a post (a
prompt of about 700 characters), a claim, a completion and an entry written by its claimer, so about
930 bytes of document per event, as the board the issue measured. It is imported into an empty SQLite
file (measured), exported from there (measured), then the former import runs on a second empty file
and the former export on the first. Sizes: BENCH_TRANSFER_EVENTS (comma separated, default
50000,500000); BENCH_TRANSFER_FORMER_MAX caps the sizes the former runs at (its peak
grows with the board: default 50000). Run alone: `BENCH_SECTIONS=x make bench` or
`.venv/bin/python -m bench.transfer 50000 500000`.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import progress, table, temp_dir
from bench.log_reading import BLACKBOARD, measured
from blackboard.application.ports import StoredEvent
from blackboard.domain.events import (
    AgentSignalClaimed,
    AgentSignalCompleted,
    AgentSignalPosted,
    BlackboardEvent,
    EntryWritten,
)
from blackboard.domain.signals import SignalPayload, SignalResult, SignalType
from blackboard.infrastructure.cli.transfer import write_document

BOARD = "bench-transfer"
PROMPT = ("Find what the log says about the failure of the nightly build and what fixed it. " * 9)[:700]
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def synthesise(path: Path, events: int) -> int:
    """An export document of about `events` events (a multiple of 4); returns its size in bytes."""
    with path.open("w", encoding="utf-8") as out:
        write_document(BOARD, _events(events // 4), out)
    return path.stat().st_size


def _events(signals: int) -> Iterator[StoredEvent]:
    position, version = 0, 0
    for i in range(signals):
        at = T0 + timedelta(seconds=i)
        signal_id = f"sig-{i:08x}"
        agent = f"ps-agent-{i % 7}"
        for event in (
            AgentSignalPosted(
                blackboard_id=BOARD,
                version=version + 1,
                occurred_at=at,
                signal_id=signal_id,
                signal_type=SignalType.RESEARCH,
                payload=SignalPayload(ps_id="ps-1", entry_id="e-1", topic=f"topic {i}", prompt=PROMPT),
                target_capabilities=("RESEARCH",),
                posted_by="bench",
            ),
            AgentSignalClaimed(
                blackboard_id=BOARD,
                version=version + 2,
                occurred_at=at,
                signal_id=signal_id,
                claimed_by=agent,
                score=0.9,
                token=uuid.uuid4().hex,
            ),
            AgentSignalCompleted(
                blackboard_id=BOARD,
                version=version + 3,
                occurred_at=at,
                signal_id=signal_id,
                completed_by=agent,
                result=SignalResult(artifact_path=f"out/{i}.md"),
            ),
        ):
            position += 1
            yield _stored(position, event)
        version += 3
        position += 1
        yield _stored(
            position,
            EntryWritten(
                blackboard_id=BOARD,
                version=1,
                occurred_at=at,
                key=f"notes/{i}",
                value={"summary": PROMPT[:200], "n": i},
                author=agent,
                signal_id=signal_id,
            ),
        )


def _stored(position: int, event: BlackboardEvent) -> StoredEvent:
    return StoredEvent(
        position=position,
        event_id=event.event_id,
        stream_id=event.stream_id,
        version=event.version,
        event_type=event.event_type,
        schema_version=type(event).schema_version,
        data=event.data(),
        metadata={"actor": "bench", "command": "Bench"},
        occurred_at=event.occurred_at,
        recorded_at=event.occurred_at,
    )


def run(sizes: list[int], former_max: int) -> dict[str, Any]:
    cases: dict[str, dict[str, Any]] = {}
    with temp_dir("transfer") as d:
        for size in sizes:
            document = d / f"board-{size}.json"
            progress(f"(y) synthesising a board of {size:,} events")
            size_bytes = synthesise(document, size)
            db, former_db = d / f"new-{size}.db", d / f"former-{size}.db"
            url, former_url = f"sqlite:///{db}", f"sqlite:///{former_db}"
            case: dict[str, Any] = {"document_mib": round(size_bytes / 2**20, 1)}
            progress(f"(y) blackboard import / export of {size:,} events")
            case["import"] = measured([BLACKBOARD, "--db", url, "import", str(document)])
            case["export"] = measured(
                [BLACKBOARD, "--db", url, "export", BOARD, "--output", str(d / "again.json")]
            )
            same = (d / "again.json").read_bytes() == document.read_bytes()
            case["round_trip_identical"] = same
            if size <= former_max:
                progress(f"(y) former import / export of {size:,} events")
                former = [sys.executable, "-m", "bench.transfer_former"]
                case["former_import"] = measured([*former, "import", former_url, str(document)])
                case["former_export"] = measured([*former, "export", url, BOARD, str(d / "former.json")])
            cases[str(size)] = case
            for path in (document, db, former_db, d / "again.json", d / "former.json"):
                path.unlink(missing_ok=True)
    return {"cases": cases}


def rows(report: dict[str, Any]) -> list[list[Any]]:
    out = []
    for size, case in report["cases"].items():
        former_import = case.get("former_import", {}).get("peak_mb", "-")
        former_export = case.get("former_export", {}).get("peak_mb", "-")
        out.append(
            [
                f"{int(size):,}",
                case["document_mib"],
                former_export,
                case["export"]["peak_mb"],
                former_import,
                case["import"]["peak_mb"],
                case["export"]["wall_s"],
                case["import"]["wall_s"],
            ]
        )
    return out


HEADERS = [
    "events",
    "document MiB",
    "export MB before",
    "export MB now",
    "import MB before",
    "import MB now",
    "export s now",
    "import s now",
]


def main() -> None:
    sizes = [
        int(s) for s in (sys.argv[1:] or os.environ.get("BENCH_TRANSFER_EVENTS", "50000,500000").split(","))
    ]
    report = run(sizes, int(os.environ.get("BENCH_TRANSFER_FORMER_MAX", "50000")))
    print(table("(y) export and import, peak RSS of the process (MB), SQLite", HEADERS, rows(report)))
    out = Path(os.environ.get("BENCH_OUT_TRANSFER", "bench-results/transfer.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
