"""The default claim threshold, apart from the scoring models so that reading the settings (every CLI
call does, before it knows what it runs) does not import pydantic: an agent may claim a signal when its
score for it is above the threshold (capabilities.py)."""

DEFAULT_THRESHOLD = 0.8
