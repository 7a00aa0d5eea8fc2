"""`python -m solar.kernelbench ROOT --arch ... --out DIR`: the `solar kernelbench` subcommand alone."""

import sys

from solar.kernelbench.cli import main

sys.exit(main())
