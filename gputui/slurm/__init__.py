"""Slurm: jobs, launching, attaching and host lists. Never imports Textual."""
