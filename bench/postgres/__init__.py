"""(g) PostgreSQL: `blackboard worker` processes beside two job queues, pgqueuer and procrastinate, and wake-up.

drain: for each system and each worker count k (1, 4), a fresh database is cloned from a template
that already holds the backlog, k worker processes are spawned on it, and the benchmark polls
(every 20 ms, one count query) until every item is done. Figures: total (spawn -> all done,
start-up included), start-up (spawn -> the first completion the poll sees), and the steady rate
from that first completion to the last, which is the one compared.

wake-up: one idle `blackboard worker` (its defaults), signals posted one at a time 100 to 200 ms
apart; the claim event's occurred_at minus the post event's, from the event log.

Where the time goes: the worker's candidate query, timed and EXPLAINed before and after ANALYZE,
one worker round replayed step by step in this process, and the handler's own cost.

The modules, one concern each:

- `section`: the sizes, the order of the run, the ratios; `run(config)` is the section.
- `databases`: fresh databases and templates on the server, always dropped.
- `systems`: what a system is (prepare a template, a worker command, a progress query) and one
  drain of any system on a clone of its template, with the fleet and the poll loop of bench/drain.py.
- `blackboard_drain`, `pgqueuer_peer`, `procrastinate_peer`: the three systems.
- `server`: the PostgreSQL server's CPU and pg_stat_database, per run.
- `steps`: the step-by-step analysis (candidate query, one worker round, a handler call).
- `report`: the tables and the targets.

The job-queue worker processes import `bench.postgres.pgqueuer_peer` and
`bench.postgres.procrastinate_peer`, so this package and those modules import nothing heavy at the top.
"""
