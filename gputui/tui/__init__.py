"""The terminal UI (Textual). The only package of gputui that imports Textual."""
