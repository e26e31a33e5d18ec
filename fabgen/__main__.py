"""`python -m fabgen` runs the CLI."""

from fabgen.cli import main

raise SystemExit(main())
