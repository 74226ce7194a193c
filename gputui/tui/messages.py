"""Messages between the record source's worker and the screen."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class FeedReady(Message):
    """The feed has new items (posted once per empty → non-empty transition, from the worker thread)."""


@dataclass
class SourceFinished(Message):
    """The record source's ``run`` returned (the job ended, the files were read, or it failed)."""


@dataclass
class JobsPolled(Message):
    """A refresh of the jobs list finished (posted from the poll worker)."""

    snapshot: object  # gputui.home.poller.JobsSnapshot


@dataclass
class ActionDone(Message):
    """A job action (cancel, signal, submit, ...) finished in a worker: one line for the status bar."""

    text: str
    level: str = "info"  # "info", "warning" or "error"
    refresh: bool = True  # poll Slurm again now
