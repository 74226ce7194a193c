"""A plotext chart that redraws only when its data changed, and at most once a second."""

from __future__ import annotations

import time

from textual_plotext import PlotextPlot

MIN_REDRAW_S = 1.0


class ThrottledPlot(PlotextPlot):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._key: tuple | None = None
        self._drawn_at = 0.0

    def due(self, key: tuple, *, force: bool = False) -> bool:
        """Whether a redraw for data ``key`` is due now (and note it as drawn when it is). ``force``
        lifts the once-a-second limit, never the "only when changed" rule. The widget's size is part
        of the key: a resized chart is redrawn."""
        key = (*key, self.size)
        now = time.monotonic()
        if key == self._key or (not force and now - self._drawn_at < MIN_REDRAW_S):
            return False
        self._key, self._drawn_at = key, now
        return True
