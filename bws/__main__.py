"""``python -m bws``: the BWS command line (see bws.cli)."""

from bws.cli import main

raise SystemExit(main())
