"""The keeper: one small process per worker that ends the worker's runs when the worker cannot.

A worker starts it (`client.Keeper`) and tells it, a line at a time over a pipe only the worker holds, each run's
root process, the marks its processes carry (`marks`) and when its claim lapses (`lease`). The keeper (`watch`,
run as `python -m blackboard.infrastructure.keeper`) kills a run's whole tree (`trees`) when the worker dies
(the pipe's end, the parent-death signal) or when the run's claim lapses without a renewal (the worker stopped,
or cut off from the board). It imports the standard library alone and never touches the board.

Beside it, `identity` reads those marks back for the board's interfaces: the caller a process is (a run of an
agent, or a person), which the CLI, the MCP server and the worker pass to the use cases. The keeper process
never imports it.
"""
