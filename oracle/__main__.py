"""``python -m oracle``: the command line (see ``oracle.cli``)."""

from oracle.cli import main

raise SystemExit(main())
