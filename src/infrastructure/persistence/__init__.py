"""SQLAlchemy persistence: the event store, the signal read model, snapshots and migrations."""

DEFAULT_URL = "sqlite:///.blackboard/blackboard.db"
SYNCHRONOUS_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")
