"""Junos's push face: the napalm `junos` driver, the candidate it loads, how `fabgen diff` reads
its configurations and backups (face.py)."""
