"""Demonstrations in LeRobot dataset v3.0 layout: the writer (lerobot_v3.py) and the recorder (record.py)."""
