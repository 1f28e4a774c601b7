"""`blackboard worker`: an agent as a process that finds work it can do, claims it and does it.

One kind of thread per module. The claim loop (`loop`) notes the log position, sweeps expired
signals now and then, asks the claim policy (`blackboard.application.claiming`) which claimable
signals to take (most urgent first, then best score, then oldest) and claims as many as there are free handler slots,
in one command per board, each claim with a token of its own, a secret drawn for it alone (signals
other workers took meanwhile are skipped, quietly): a run's processes get their own claim's token and
no other, and the worker's public id (`status`) proves nothing. A `command` handler runs in a thread
of the pool (`handling`), which watches it and renews its claim; a Python `entrypoint` runs on a lane
(agents/lanes.py) that hands its outcome over itself, while one supervisor thread (`supervisor`) keeps
the timeouts and the grace period of every call and has the pool renew their claims, so no thread per
signal sits waiting. The outcomes
go to the recorder thread (`recorder`), which stores every outcome ready at that moment in one
command, so a busy worker writes one transaction per batch, not one per signal. The beat thread
(`beat`) says every few seconds that the worker is live, what it claims with and what it runs
(presence, not events), so a signal that fits it waits for it rather than expiring. Each run's lease and
its processes are held (`held`): the worker's keeper process (`blackboard.infrastructure.keeper`) kills a
run's processes when the worker dies or the run's claim lapses. Between rounds the
loop sleeps until the log moves past the noted position, so a signal posted or released meanwhile
wakes it at once and none is missed. `process` starts and stops them together.
"""

from blackboard.infrastructure.worker.options import WorkerOptions
from blackboard.infrastructure.worker.process import Worker

__all__ = ["Worker", "WorkerOptions"]
