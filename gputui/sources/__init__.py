"""Record sources: what feeds the dashboard (attach to a Slurm job, a local run, replayed files).

Each source runs in a worker thread and writes into a :class:`~gputui.sources.base.Feed`; nothing here
imports Textual.
"""
