"""Fake `robosuite` (tests only): present so the adapter's availability check passes; nothing is imported from it."""
