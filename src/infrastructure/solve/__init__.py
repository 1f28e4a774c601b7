"""`solve`'s room in the infrastructure: one run as the CLI and the Python API start or resume it (run.py), the
beat of the process driving it (beat.py) and the controller agent run once per iteration (controller.py).
Its tables live in persistence/solve/, its command in cli/solve/."""
