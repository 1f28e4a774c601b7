"""Distributions of timed samples: the one percentile and the two summaries every section reports.

Standard library only: the job-queue worker processes of section (g) import the harness that uses it.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def percentile(samples: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def dist_ms(samples: Sequence[float]) -> dict[str, float]:
    """Seconds in, milliseconds out: n, p50, mean, p90, p99, max and min (sections f and g)."""
    if not samples:
        return {"n": 0}
    return {
        "n": len(samples),
        "p50_ms": ms(statistics.median(samples)),
        "mean_ms": ms(statistics.fmean(samples)),
        "p90_ms": ms(percentile(samples, 90)),
        "p99_ms": ms(percentile(samples, 99)),
        "max_ms": ms(max(samples)),
        "min_ms": ms(min(samples)),
    }


def summary_ms(samples: Sequence[float]) -> dict[str, float]:
    """Seconds in, milliseconds out: median, p95, min, max (sections c and e)."""
    return {
        "median_ms": round(statistics.median(samples) * 1000, 3),
        "p95_ms": round(percentile(samples, 95) * 1000, 3),
        "min_ms": round(min(samples) * 1000, 3),
        "max_ms": round(max(samples) * 1000, 3),
        "n": len(samples),
    }
