"""The dashboard's model: what the record stream says about a job, kept in bounded memory.

Nothing here imports Textual: the TUI renders this state, and ``gputui demo --headless`` and the
benchmarks drive the same code without a screen.
"""
