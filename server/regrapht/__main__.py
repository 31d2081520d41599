"""`python -m regrapht` runs the command-line interface."""

import sys

from regrapht.cli import main

sys.exit(main())
