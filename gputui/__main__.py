"""``python -m gputui``: the same as the ``gputui`` command (used by the attach probe step)."""

import sys

from gputui.cli import main

sys.exit(main())
