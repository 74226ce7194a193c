"""The app's own cost, as the help screen shows it: bytes per second written to the terminal (what an SSH
link carries) and the CPU share of the gputui process, over the last few seconds.

Textual-free: :meth:`CostMeter.counting` wraps the terminal driver's ``write`` (the app does it when it
starts), :meth:`CostMeter.sample` is called every second or so and keeps a short window of (time, bytes,
CPU time) samples; :meth:`CostMeter.rates` reads the rates over that window.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

WINDOW_S = 10.0  # the rates shown are over about this long
MIN_SPAN_S = 2.0  # a rate over less time than this is noise (a start-up burst): not shown


class CostMeter:
    """Bytes written to the terminal and this process's CPU time (all threads), as rates."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        cpu_clock: Callable[[], float] = time.process_time,
        window_s: float = WINDOW_S,
    ) -> None:
        self.clock, self.cpu_clock, self.window_s = clock, cpu_clock, window_s
        self.bytes_written = 0
        self._samples: deque[tuple[float, int, float]] = deque()
        self.sample()

    def count(self, data: str) -> None:
        """Count ``data`` as the terminal gets it (UTF-8)."""
        self.bytes_written += len(data.encode("utf-8", "surrogateescape"))

    def counting(self, write: Callable[[str], None]) -> Callable[[str], None]:
        """``write`` that counts what it writes first."""

        def write_counted(data: str) -> None:
            self.count(data)
            write(data)

        return write_counted

    def sample(self) -> None:
        """Note the totals now; forget samples older than the window (keeping one at its start)."""
        now = self.clock()
        self._samples.append((now, self.bytes_written, self.cpu_clock()))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self.window_s:
            self._samples.popleft()

    def rates(self) -> tuple[float, float, float] | None:
        """(bytes/s, CPU % of one core, seconds covered) from the oldest sample to now; None before
        :data:`MIN_SPAN_S` have passed."""
        now = self.clock()
        then, written, cpu = self._samples[0]
        span = now - then
        if span < MIN_SPAN_S:
            return None
        return (self.bytes_written - written) / span, 100 * (self.cpu_clock() - cpu) / span, span

    def line(self) -> str:
        """``gputui's own cost: 1.2 KB/s to the terminal, 2.1 % CPU (last 10 s)``."""
        rates = self.rates()
        if rates is None:
            return "gputui's own cost: not measured yet"
        per_s, cpu_pct, span = rates
        return (
            f"gputui's own cost: {_bytes(per_s)}/s to the terminal, {cpu_pct:.1f} % CPU (last {span:.0f} s)"
        )


def _bytes(n: float) -> str:
    """``512 B``, ``1.2 KB``, ``3.4 MB`` (decimal units, as link speeds are given)."""
    if n < 1000:
        return f"{n:.0f} B"
    if n < 1_000_000:
        return f"{n / 1000:.1f} KB"
    return f"{n / 1_000_000:.1f} MB"
