"""The composition root (container.py: the one place that names every adapter) and what it is built from:
every knob (settings.py), what models cost (prices.py), the real clock and ids (clock.py)."""
