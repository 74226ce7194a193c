"""gputui: watch, launch and attach to GPU training jobs on SLURM clusters from the terminal."""

__version__ = "0.1.0"
