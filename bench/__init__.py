"""Persistence benchmarks: `make bench` (not part of `make test`)."""
