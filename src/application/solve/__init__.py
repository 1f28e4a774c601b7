"""`solve`'s room in the application: the loop a controller drives (solver.py), its commands and ports
(ports.py), the controller's answers read and checked (answers.py, decisions.py), the prompt it reads
(prompt.py, entries.py), the steps it posts (steps.py) and the runs it lists (runs.py)."""
