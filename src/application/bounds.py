"""The numbers behind the field rules (fields.py), importable without pydantic (the settings read them)."""

MAX_INT64 = 2**63 - 1  # a log position or a count: what SQLite and PostgreSQL store
MAX_SECONDS = 1e9  # about 31 years: past it a deadline overflows; nan and inf are no number of seconds
MAX_NAME = 200  # what the read model's name columns hold (a board, an agent, an author, a dedupe key)
MAX_TOKEN = 100  # a claim's token column
