"""``python -m acesim``: the ``acesim`` command (see :mod:`acesim.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
