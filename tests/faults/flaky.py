"""`python3 flaky.py COMMAND...`: the soak's handler wrapper. Fails (exit 1) with probability
$SOAK_FAIL_RATE, else runs COMMAND in its place (same stdin, stdout and exit code)."""

import os
import random
import sys

if random.random() < float(os.environ.get("SOAK_FAIL_RATE", "0.1")):
    print("soak: a planted handler failure", file=sys.stderr)
    sys.exit(1)
os.execvp(sys.argv[1], sys.argv[1:])
