"""A dependency-free progress bar for long runs (written to stderr)."""
from __future__ import annotations

import sys
import time


class Progress:
    """Text progress bar; silent unless ``enabled`` (default: stderr is a terminal)."""

    def __init__(self, total: float, label: str, enabled: bool | None = None, width: int = 30) -> None:
        self.total = total
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.width = width
        self._start = time.perf_counter()
        self._last = 0.0

    def update(self, done: float, info: str = "") -> None:
        now = time.perf_counter()
        if not self.enabled or (now - self._last < 0.1 and done < self.total):
            return
        self._last = now
        frac = min(max(done / self.total, 0.0), 1.0) if self.total > 0 else 1.0
        bar = "#" * int(frac * self.width)
        sys.stderr.write(f"\r{self.label} [{bar:<{self.width}}] {100 * frac:5.1f}% "
                         f"{now - self._start:6.1f} s {info}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            self.update(self.total)
            sys.stderr.write("\n")
