"""``python -m geoeval.cli``: the ``geoeval`` command."""

import sys

from geoeval.cli.main import main

sys.exit(main())
