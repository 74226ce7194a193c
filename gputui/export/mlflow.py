"""``gputui export RUN... --to mlflow DIR``: one MLflow run per RUN, written through MLflow's own client
(the optional extra ``gputui[mlflow]``, ``mlflow-skinny``).

DIR is a folder (an MLflow file store, what ``mlflow ui --backend-store-uri DIR`` reads) or a tracking URI
(``sqlite:///runs.db``, ``http://host:5000``). MLflow 3 keeps the file store in maintenance mode and
refuses it unless ``MLFLOW_ALLOW_FILE_STORE=true``; gputui sets that for a plain folder (see
``docs/analysis.md``).

- metrics under their canonical names (``docs/records.md``) at their step (else epoch, else their order),
  with the record's time;
- GPU samples as MLflow system metrics, named as MLflow's own GPU monitor names them with the host as its
  node id: ``system/<host>/gpu_<index>_utilization_percentage``, ``..._memory_usage_megabytes``,
  ``..._power_usage_watts`` (and ``temperature_celsius``, ``energy_joules`` where sampled);
- tags: ``gputui.outcome``, ``gputui.world_size``, the job id; status from the outcome.
"""

from __future__ import annotations

import itertools
import os
import re
from typing import Any

from gputui.analysis import RunAnalysis
from gputui.config import AlertThresholds
from gputui.export import metric_step
from gputui.output import WriteFailed
from gputui.sources.inputs import RunError, run_records
from gputui.stream.records import Record

BATCH = 1000  # MLflow's limit of metrics per log_batch call
SYSTEM_FIELDS = {
    "util_gpu_pct": ("utilization_percentage", 1.0),
    "mem_used_bytes": ("memory_usage_megabytes", 1e-6),
    "power_w": ("power_usage_watts", 1.0),
    "temp_c": ("temperature_celsius", 1.0),
    "energy_j": ("energy_joules", 1.0),
}
KILLED = ("cancelled", "time_limit", "interrupted", "truncated")
FAILED = ("oom", "nccl_error", "crashed", "crashed_traceback")
STATUS = {"completed": "FINISHED", "early_stopped": "FINISHED"}
STATUS |= dict.fromkeys(KILLED, "KILLED") | dict.fromkeys(FAILED, "FAILED")
UNSAFE_KEY = re.compile(r"[^A-Za-z0-9_\-. /]+")
EXPERIMENT = "gputui"


def tracking_uri(target: str) -> str:
    """A folder becomes a ``file:`` store (MLflow allowed to use it); a URI is used as given."""
    if "://" in target or target.startswith(("sqlite:", "databricks")):
        return target
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    return "file://" + os.path.abspath(target)


def _system_metrics(record: Record, steps: dict[tuple[str, str], int]) -> list[tuple[str, float, int]]:
    f = record.fields
    host = UNSAFE_KEY.sub("_", str(f.get("host") or "host"))
    index = f.get("index", f.get("gpu_id"))
    key = (host, str(index))
    step = steps[key] = steps.get(key, -1) + 1
    out = []
    for field, (suffix, scale) in SYSTEM_FIELDS.items():
        value = f.get(field)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out.append((f"system/{host}/gpu_{index}_{suffix}", float(value) * scale, step))
    return out


def export_mlflow(run: str, target: str) -> dict[str, int | str]:
    """Log one RUN as an MLflow run in experiment ``gputui`` of ``target``; returns what was logged."""
    try:
        from mlflow.entities import Metric
        from mlflow.exceptions import MlflowException
        from mlflow.tracking import MlflowClient
    except ImportError as exc:
        raise RunError("--to mlflow needs MLflow's client: pip install 'gputui[mlflow]'") from exc
    try:
        return _export(run, MlflowClient(tracking_uri=tracking_uri(target)), Metric)
    except MlflowException as exc:  # a store MLflow cannot use, a server that answers an error
        raise RunError(f"MLflow ({target}): {_first_line(str(exc))}") from exc
    except OSError as exc:  # the store cannot be written (a full disk)
        raise WriteFailed(target, exc) from None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "failed")


def _export(run: str, client: Any, Metric: type) -> dict[str, int | str]:
    records = run_records(run)
    first = next(records, None)
    if first is None:
        raise RunError(f"{run}: no records to export")
    experiment = client.get_experiment_by_name(EXPERIMENT)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(EXPERIMENT)
    name = os.path.basename(run.rstrip("/")) or run
    run_id = client.create_run(
        experiment_id, start_time=int(first.time * 1000), run_name=name, tags={"gputui.run": run}
    ).info.run_id
    analysis = RunAnalysis(name, idle_pct=AlertThresholds().idle_util_pct)  # no idle share exported
    metric_values = gpu_samples = 0
    order: dict[str, int] = {}
    steps: dict[tuple[str, str], int] = {}
    pending: list[Metric] = []
    last, status = first.time, "FAILED"
    try:
        for record in itertools.chain((first,), records):
            analysis.add(record)
            last = record.time
            millis = int(record.time * 1000)
            f = record.fields
            if record.kind == "metric" and isinstance(f.get("value"), int | float):
                key = UNSAFE_KEY.sub("_", str(f["name"]))
                pending.append(Metric(key, float(f["value"]), millis, metric_step(f, order)))
                metric_values += 1
            elif record.kind == "gpu":
                pending += [Metric(k, v, millis, s) for k, v, s in _system_metrics(record, steps)]
                gpu_samples += 1
            if len(pending) >= BATCH:
                client.log_batch(run_id, metrics=pending)
                pending = []
        if pending:
            client.log_batch(run_id, metrics=pending)
        report = analysis.report()
        tags = {"gputui.outcome": report.outcome or "unknown", "gputui.records": str(report.records)}
        if report.world_size:
            tags["gputui.world_size"] = str(report.world_size)
        for key, value in tags.items():
            client.set_tag(run_id, key, value)
        status = STATUS.get(report.outcome or "", "FINISHED")
    finally:  # a RUN that breaks off half-way is still a finished (FAILED) MLflow run, not RUNNING
        client.set_terminated(run_id, status, end_time=int(last * 1000))
    return {"metric values": metric_values, "GPU samples": gpu_samples, "MLflow run": run_id}
