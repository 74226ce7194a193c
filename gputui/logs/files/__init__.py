"""Readers of metric files a run writes beside its log: TensorBoard event files, Lightning's CSV,
MLflow file stores and W&B offline runs (:mod:`gputui.logs.files.metric_files` picks the reader)."""
