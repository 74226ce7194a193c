"""The home screen's model, without Textual: my jobs (polled from Slurm), their rows, the launch form.

:mod:`~gputui.home.poller` runs the Slurm calls (one ``squeue`` per refresh, ``sacct`` and ``sinfo`` less
often) and keeps the last good answers; :mod:`~gputui.home.rows` turns jobs into table rows (arrays
grouped, filters); :mod:`~gputui.home.launch` validates the launch form and renders its batch script with
the same code as ``gputui run``; :mod:`~gputui.home.actions` holds what the job keys run.
"""
