"""`solve`'s tables on SQLAlchemy: a run's events on its own stream (log.py) and the processes driving runs
(processes.py)."""
