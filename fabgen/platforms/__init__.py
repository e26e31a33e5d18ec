"""Everything fabgen knows about each network OS, one folder per OS (`<os>/`), behind one
contract (`contract/`) the core asks through the registries (`registry/`).

This package's `__init__` modules import nothing: the intent models import the registry of
facts, so this file runs at the bottom layer (docs/architecture.md, "Platforms").
"""
