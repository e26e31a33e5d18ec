"""The intent: models of the input file, loading with positions, semantic checks."""

from fabgen.intent.loader import LoadedIntent, load
from fabgen.intent.models import Intent

__all__ = ["Intent", "LoadedIntent", "load"]
