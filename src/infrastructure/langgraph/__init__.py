"""LangGraph on the board (primary adapters over the Python API): `BlackboardStore`, a LangGraph
`BaseStore` whose items are the board's entries (docs/langgraph.md, "Store").

Imported only by those who use it: it needs the `langgraph` extra (`pip install 'agent-blackboard[langgraph]'`).
The public names are re-exported by `blackboard.langgraph`.
"""
