"""``python -m fairdecide``."""

import sys

from fairdecide.cli import main

sys.exit(main())
