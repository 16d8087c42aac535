"""``python -m acesim``: the ``acesim`` command (see :mod:`acesim.cli`)."""

import sys

from .cli import main

sys.exit(main())
