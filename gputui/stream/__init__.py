"""The one record stream: what a record is (``records``), reading and writing record files (``io``) and
the metric names every source and reader shares (``names``). No Textual, no Slurm, no GPU library."""
