"""The Textual terminal UI. The only part of gputui that imports Textual."""
