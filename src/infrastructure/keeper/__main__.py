"""`python -m blackboard.infrastructure.keeper WORKER_PID`: a worker's keeper (watch.py), its pipe on stdin."""

import sys

from blackboard.infrastructure.keeper.watch import main

if __name__ == "__main__":  # importing it (a walk over the package's modules) starts nothing
    sys.exit(main(sys.argv[1:]))
