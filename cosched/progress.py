"""Progress of long runs: a bar on a terminal, a note a minute in a file.

A bar redraws itself many times a second with carriage returns: right on a terminal, but in a Slurm
``.out`` file or a CI log every redraw stays, and the bars fill the log. `progress_bar` draws the
bar only when its stream is a terminal; elsewhere it writes one plain line per `NOTE_SECONDS`
(none for a run shorter than that) and a last one when a long run ends.
"""

from __future__ import annotations

import sys

from tqdm import tqdm

__all__ = ["NOTE_SECONDS", "ProgressNotes", "progress_bar"]

NOTE_SECONDS = 60.0  # seconds between two progress notes in a file or log


class ProgressNotes(tqdm):
    """A tqdm that writes a plain line (`desc: n/total unit (p %), elapsed m:ss`) at most once per
    `NOTE_SECONDS`, never a bar or a carriage return."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.update(leave=False, mininterval=NOTE_SECONDS, maxinterval=NOTE_SECONDS)
        self._last_note: float | None = None
        super().__init__(*args, **kwargs)

    def display(self, msg=None, pos=None) -> bool:
        if msg == "":  # tqdm clearing its bar: nothing was drawn
            return False
        started = getattr(self, "start_t", None)  # unset while tqdm's __init__ draws the bar
        now = self._time()
        if started is not None and now - (self._last_note or started) >= NOTE_SECONDS:
            self._note(now)
        return True

    def close(self) -> None:
        noted = self._last_note is not None and not getattr(self, "disable", True)
        super().close()
        if noted:  # a long run: its last count too
            self._note(self._time())

    def _note(self, now: float) -> None:
        self._last_note = now
        done, total = self.n, self.total
        count = f"{done:g}/{total:g}" if total else f"{done:g}"
        share = f" ({100 * done / total:.0f} %)" if total else ""
        elapsed = self.format_interval(now - self.start_t)
        unit = f" {self.unit}" if self.unit != "it" else ""
        postfix = f", {self.postfix}" if self.postfix else ""
        what = self.desc or "progress"
        self.fp.write(f"{what}: {count}{unit}{share}, {elapsed} elapsed{postfix}\n")
        self.fp.flush()


def progress_bar(*args, **kwargs) -> tqdm:
    """A tqdm bar (same arguments) when its stream (`file`, default stderr) is a terminal, else
    `ProgressNotes`."""
    stream = kwargs.get("file") or sys.stderr
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        terminal = False
    return (tqdm if terminal else ProgressNotes)(*args, **kwargs)
