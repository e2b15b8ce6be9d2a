"""``python -m kubevec.controller.cli``."""

import sys

from kubevec.controller.cli.main import main

sys.exit(main())
