"""`python -m blackboard.infrastructure.keeper WORKER_PID`: a worker's keeper (watch.py), its pipe on stdin."""

import sys

from blackboard.infrastructure.keeper.watch import main

sys.exit(main(sys.argv[1:]))
