"""``gputui export RUN --to tensorboard``: one RUN as TensorBoard event files written by tensorboardX (the
optional extra ``gputui[tensorboard]``, no TensorFlow): each metric under its canonical name at its step
(else its epoch, else its order), with the record's time; GPU samples as
``system/<host>/gpu<index>/<field>``."""

from __future__ import annotations

import os

from gputui.export import make_folder, metric_step
from gputui.output import WriteFailed
from gputui.sources.inputs import RunError, run_records

GPU_SCALARS = ("util_gpu_pct", "util_mem_bw_pct", "mem_used_bytes", "temp_c", "power_w", "energy_j")


class _EventFile:
    """One TensorBoard event file written in this thread (tensorboardX's SummaryWriter writes in a thread
    of its own, which dies on a full disk and leaves the caller waiting on its queue for ever): a failed
    write is a WriteFailed naming ``folder``."""

    def __init__(self, folder: str) -> None:
        from tensorboardX.event_file_writer import EventsWriter
        from tensorboardX.proto.event_pb2 import Event
        from tensorboardX.summary import scalar

        self.folder, self._event, self._scalar = folder, Event, scalar
        make_folder(folder)
        self._writer = self._guard(EventsWriter, os.path.join(folder, "events"))

    def _guard(self, call, *args):
        try:
            return call(*args)
        except OSError as exc:
            raise WriteFailed(self.folder, exc) from None

    def add_scalar(self, tag: str, value: float, step: int, walltime: float) -> None:
        event = self._event(wall_time=walltime, step=int(step), summary=self._scalar(tag, value))
        self._guard(self._writer.write_event, event)

    def close(self) -> None:
        self._guard(self._writer.close)


def export_tensorboard(run: str, folder: str) -> dict[str, int | str]:
    """Write one RUN's metrics and GPU samples as TensorBoard event files in ``folder``."""
    try:
        import tensorboardX  # noqa: F401 - the extra's presence, before any file is made
    except ImportError as exc:
        raise RunError("--to tensorboard needs tensorboardX: pip install 'gputui[tensorboard]'") from exc
    records = run_records(run)  # the RUN resolved before anything is written
    metric_values = gpu_samples = 0
    order: dict[str, int] = {}
    gpu_steps: dict[tuple[str, str], int] = {}
    writer = _EventFile(folder)
    try:
        for record in records:
            f = record.fields
            if record.kind == "metric" and isinstance(f.get("value"), int | float):
                writer.add_scalar(f["name"], f["value"], metric_step(f, order), record.time)
                metric_values += 1
            elif record.kind == "gpu":
                key = (str(f.get("host")), str(f.get("index", f.get("gpu_id"))))
                step = gpu_steps[key] = gpu_steps.get(key, -1) + 1
                for field in GPU_SCALARS:
                    value = f.get(field)
                    if isinstance(value, int | float) and not isinstance(value, bool):
                        writer.add_scalar(f"system/{key[0]}/gpu{key[1]}/{field}", value, step, record.time)
                gpu_samples += 1
    finally:
        writer.close()
    return {"metric values": metric_values, "GPU samples": gpu_samples}
