"""`solve`'s room in the domain: a run's decisions and its state folded from its own events (run.py)."""
