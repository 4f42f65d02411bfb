"""Fake simulator modules shaped like the real ones (see each module)."""
