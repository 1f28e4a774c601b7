"""The replay's pause of Python's cyclic collector (replay.collector_paused)."""

from __future__ import annotations

import gc

from blackboard.infrastructure.persistence import replay


def test_what_a_replay_allocated_leaves_no_young_collection_to_walk_it_all():
    """Left in the youngest generation, the objects a replay keeps (every signal of a rebuild) were walked by
    the first collection after it: 1.5 µs an event of a rebuild."""
    assert gc.isenabled()
    with replay.collector_paused():
        assert not gc.isenabled()
        kept = [[i] for i in range(50_000)]  # tracked by the collector, as signals are
    assert gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(kept) in oldest and id(kept[-1]) in oldest  # not walked by a young collection to get there
    assert gc.get_freeze_count() == 0
    assert len(kept) == 50_000


def test_objects_someone_else_froze_stay_frozen():
    """A fork server freezes what it imported, so its children do not touch those pages: a replay in a
    child must not hand them back to the collector. (The frozen count itself may drop meanwhile: a frozen
    object freed by its last reference leaves the permanent generation, and other threads run.)"""
    theirs = [object()]  # tracked by the collector until frozen
    gc.freeze()
    try:
        assert id(theirs) not in {id(o) for o in gc.get_objects()}  # frozen: in no generation
        with replay.collector_paused():
            kept = [[i] for i in range(1_000)]
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
        tracked = {id(o) for o in gc.get_objects()}
        assert id(theirs) not in tracked  # still frozen: not handed back to the collector
        assert id(kept) in tracked  # the replay's own objects are the collector's as usual
    finally:
        gc.unfreeze()
