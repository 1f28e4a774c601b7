"""`blackboard ui`: a read-only web page of a board, live from the event log (Starlette, uvicorn, SSE).

Nothing here is imported until `blackboard ui` runs: the other commands never pay for a web framework."""
