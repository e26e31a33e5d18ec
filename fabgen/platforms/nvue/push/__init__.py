"""The push face: driver, candidate, backups for fabgen diff."""
