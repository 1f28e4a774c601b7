"""SIGKILL at random points: during appends (racing writers, one killed while the others go on) and during
a read-model rebuild. After every kill the store is sound (tests/faults/invariants.py), the survivors
surfaced no error, and an interrupted rebuild resumes to the same read model a replay gives."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time

from bench.seeding import Seeder
from tests.faults.conftest import Store, assert_clean, scaled
from tests.waiting import wait_until


def _progress(process: subprocess.Popen[str], lines: int) -> None:
    """Until the actor printed `lines` progress lines (25 operations each): it is appending by then."""
    for _ in range(lines):
        line = process.stdout.readline()
        assert line, f"the actor ended early:\n{process.stderr.read()[-4000:]}"


def test_a_writer_killed_mid_append_leaves_a_sound_store_and_the_others_carry_on(
    fault_store, record_property
):
    rng = random.Random(17)
    rounds, killed_after = scaled(2), []
    for round_ in range(rounds):
        victim = fault_store.actor(1000 + round_, 100_000)  # runs until killed
        other = fault_store.actor(2000 + round_, 60)
        _progress(victim, rng.randint(1, 4))  # 25 to 100 operations in, mid-way through the next one
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        killed_after.append(victim.returncode)
        stdout, stderr = other.communicate(timeout=600)
        assert_clean(stderr, "the surviving writer")
        assert other.returncode == 0, stderr[-4000:]
        assert sum(json.loads(stdout.splitlines()[-1]).values()) == 60
        fault_store.assert_sound()
    assert killed_after == [-signal.SIGKILL] * rounds
    record_property("kills_during_appends", rounds)


def _seed(store: Store, events: int) -> None:
    """A board of `events` events (posts, claims, completions) appended without rows, then folded once."""
    container = store.container()
    seeder = Seeder(container.engine(), "ps-seeded", prefix=9)
    while seeder.board.version < events:
        sid = seeder.post()
        seeder.claim(sid)
        seeder.complete(sid)
    seeder.flush()
    container.projector().catch_up()
    container.engine().dispose()


def test_a_rebuild_killed_at_a_random_point_resumes_to_the_replayed_read_model(fault_store, record_property):
    _seed(fault_store, scaled(9_000))
    rng = random.Random(23)
    rounds, interrupted = scaled(2), 0
    for round_ in range(rounds):
        # pages of 1,000 events: the fast replay folds 9,000 in one default page, before a kill could land
        rebuild = fault_store.blackboard("projection", "rebuild", env={"BLACKBOARD_PROJECTION_PAGE": "1000"})
        container = fault_store.container()
        read_model, store = container.read_model(), container.event_store()
        # killed once it has started folding (its position moved) and then at a random moment after
        wait_until(
            lambda: rebuild.poll() is not None or 0 < read_model.position() < store.last_position(),
            120,
            "the rebuild to start folding",
        )
        time.sleep(rng.uniform(0, 0.1))  # a random point within the next page's fold
        rebuild.send_signal(signal.SIGKILL)
        _, stderr = rebuild.communicate(timeout=30)
        assert_clean(stderr, "the rebuild")
        interrupted += read_model.position() < store.last_position()
        # commands meanwhile decide on the log; then the rebuild resumes from its checkpoint
        writer = fault_store.actor(3000 + round_, 30)
        _, stderr = writer.communicate(timeout=600)
        assert_clean(stderr, "a writer after the killed rebuild")
        assert writer.returncode == 0, stderr[-4000:]
        resume = fault_store.blackboard("projection", "rebuild", "--resume")
        _, stderr = resume.communicate(timeout=600)
        assert resume.returncode == 0, stderr
        assert read_model.position() == store.last_position()
        container.engine().dispose()
        fault_store.assert_sound()
    assert interrupted >= 1, "no kill landed mid-rebuild"
    record_property("rebuild_kills", rounds)
    record_property("rebuild_kills_mid_fold", interrupted)
    print(f"\n{rounds} rebuilds killed, {interrupted} of them mid-fold")
