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
