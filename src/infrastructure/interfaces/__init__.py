"""What every interface (the CLI, MCP, the Python API, the web view) shares besides the documents it prints:
each field's one public name and its former names (names.py), the words for a signal that waits for a worker
that fits (waiting.py), and a time a person gives (when.py)."""
