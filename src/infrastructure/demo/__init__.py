"""The demos: `make demo` (board.py, then flow.py: docbot's phases as a flow) and `make demo-claude` (claude.py)."""
