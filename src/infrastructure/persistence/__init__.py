"""SQLAlchemy persistence: the event store, the signal read model, snapshots and migrations."""
