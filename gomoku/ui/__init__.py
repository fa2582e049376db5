"""The pygame play window. The only part of the project that imports pygame; nothing imports it
but ``scripts/play.py``."""
