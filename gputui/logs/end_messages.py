"""The lines frameworks print when a training run has finished: the one table of end messages.

Each :class:`EndMessage` names the framework that prints it, an example as printed, the pattern that
finds it, and what it means. Two kinds (``anywhere``):

- ``True``: a framework's own end message, searched in every frame the outcome gate flags (its ``key``,
  a plain substring, is one of the gate's scans), so a long final evaluation after it does not hide it;
  it counts when it comes after the line where the run's last epoch was first seen;
- ``False``: common wording of scripts (``Training done``, ``DONE``, ``exit code 0``), read only among
  the log's last frames after its last epoch (a ``done`` early in a log is about something else).

Every message was checked against the framework's source or a log it printed
(``docs/log-formats.md``, section Outcome, has the same table). Frameworks that print no end message
(Keras ``fit``, nanoGPT, MMEngine, PaddleSeg) complete by their counters instead: the last planned
``Epoch N/N``, or a global ``iter N/N`` followed by a summary (:mod:`gputui.logs.outcome`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class EndMessage:
    framework: str
    example: str  # as printed (a test reads each one and expects ``completed``)
    pattern: str  # a regex, searched case-sensitively unless ``anywhere`` is False
    meaning: str
    key: bytes = b""  # for ``anywhere`` messages: a substring every match contains (the gate's scan)
    anywhere: bool = True


END_MESSAGES: tuple[EndMessage, ...] = (
    EndMessage(
        "Hugging Face Trainer",
        "Training completed. Do not forget to share your model on huggingface.co/models =)",
        r"Training completed\. Do not forget to share your model",
        "Trainer.train() left its loop (printed before the final metrics dict)",
        b"Training completed. Do not forget",
    ),
    EndMessage(
        "Hugging Face Trainer",
        "{'train_runtime': 246.2454, 'train_samples_per_second': 7.2, 'train_loss': 0.742, 'epoch': 3.0}",
        r"'train_runtime':",
        "the final metrics of Trainer.train() (any length: a long dict is still read)",
        anywhere=False,
    ),
    EndMessage(
        "PyTorch Lightning",
        "`Trainer.fit` stopped: `max_epochs=10` reached.",
        r"`Trainer\.fit` stopped: `max_(?:epochs|steps)=\d+` reached",
        "fit() reached max_epochs or max_steps",
        anywhere=False,
    ),
    EndMessage(
        "Ultralytics YOLO",
        "40 epochs completed in 0.012 hours.",
        r"\b\d+ epochs completed in [\d.]+ hours\b",
        "the epoch loop ended (the final validation of best.pt follows)",
        b"epochs completed in",
    ),
    EndMessage(
        "Megatron-LM",
        "[after training is done] datetime: 2026-06-18 16:59:24",
        r"\bafter training is done\b",
        "pretrain() finished its iterations",
        b"after training is done",
    ),
    EndMessage(
        "Megatron-LM",
        "[exiting program after consuming all available data at iteration 19]",
        r"\bexiting program (?:after consuming all available data|at iteration \d+)",
        "the data ran out, or --exit-interval was reached: a deliberate exit",
        b"exiting program",
    ),
    EndMessage(
        "ms-swift",
        "[INFO:swift] End time of running main: 2026-04-25 13:14:46.011901",
        r"\bEnd time of running main\b",
        "the sft/pt entry point returned",
        b"End time of running main",
    ),
    EndMessage(
        "fairseq",
        "done training in 33.0 seconds",
        r"\bdone training in [\d.]+ seconds",
        "fairseq-train finished its epochs or max_update",
        b"done training in",
    ),
    EndMessage(
        "timm",
        "*** Best metric: 72.19 (epoch 299)",
        r"\*\*\* Best metric: \S+ \(epoch \d+\)",
        "train.py printed the best checkpoint after its epoch loop",
        b"*** Best metric:",
    ),
    EndMessage(
        "detectron2",
        "[d2.engine.hooks]: Overall training speed: 298 iterations in 0:06:13 (1.2533 s / it)",
        r"\bOverall training speed: \d+ iterations in ",
        "the trainer's after_train hook (also printed after a crash: the crash's signal wins)",
        b"Overall training speed:",
    ),
    EndMessage(
        "detectron2",
        "[d2.engine.hooks]: Total training time: 0:06:14 (0:00:01 on hooks)",
        r"\bTotal training time: [\d:]+ \([\d:]+ on hooks\)",
        "the same hook, its last line",
        b"Total training time:",
    ),
    EndMessage(
        "DeiT / DINO / MAE / DETR (MetricLogger scripts)",
        "Training time 1 day, 2:03:04",
        r"^Training time (?:\d+ days?, )?\d+:\d\d:\d\d\s*$",
        "main() printed the total time after its epoch loop",
        b"Training time ",
    ),
    EndMessage(
        "TensorFlow Estimator",
        "INFO:tensorflow:Loss for final step: 0.6461505.",
        r"\bLoss for final step: ",
        "Estimator.train() reached its steps",
        b"Loss for final step: ",
    ),
    EndMessage(
        "DeepSpeed launcher",
        "[INFO] [launch.py:351:main] Process 12345 exits successfully.",
        r"\bProcess \d+ exits successfully\.",
        "a training process exited with status 0 (a failure on another rank still wins)",
        anywhere=False,
    ),
    EndMessage(
        "verl",
        "Final validation metrics: {'val-core/openai/gsm8k/reward/mean@1': 0.91}",
        r"\bFinal validation metrics: \{",
        "the PPO trainer's fit() reached its last step",
        anywhere=False,
    ),
    EndMessage(
        "gputui trainers",
        '@gputui {"v":1,"kind":"event","event":"train_finished","epochs":3}',
        r"\btrain_finished\b",
        "Reporter.finish(): the trainer ran to its end (also the line `training finished`)",
        anywhere=False,
    ),
    EndMessage(
        "scripts",
        "End of training",
        r"(?<!the )(?<!at )\bend of training\b(?![ \t]*(?:epoch|step|iter|batch))",
        "a script's own end line (not `at the end of training`)",
        anywhere=False,
    ),
    EndMessage(
        "scripts",
        "Training completed",
        r"\b(?:training|fine-?tuning|finetuning|pre-?training|optimi[sz]ation|the run|experiment)"
        r"(?:\s+(?:is|has|was|successfully|fully|now))*\s+(?:done|complete|completed|finished|over|ended)\b"
        r"|\b(?:finished|completed|done) (?:training|solving|optimi[sz]ing|fine-?tuning)\b"
        r"|\boptimi[sz]ation complete\b"
        r"|\b(?:export|evaluation|inference|prediction|testing)\s+(?:is\s+)?(?:complete|completed|finished|done)\b"
        r"|^\s*Successfully completed\.\s*$",
        "`Training done`, `Finished training.`, `Pretraining completed successfully!`, `Optimization "
        "Finished!`, `done solving` (Caffe), `OPTIMIZATION COMPLETE`",
        anywhere=False,
    ),
    EndMessage(
        "scripts",
        "Total training time: 438.83 seconds (0.12 hours)",
        r"^(?!.*\b(?:step|iter|iteration|epoch|batch)\W{0,3}\d).*"
        r"\btotal (?:training |train |run )?time(?: elapsed| taken| used)?\s*[:=]",
        "a script's summary of the whole run's time, after its last epoch",
        anywhere=False,
    ),
    EndMessage(
        "scripts",
        "DONE",
        r"^\W*(?:done|all done|finished)\W*$",
        "a line that is only `done`, `all done` or `finished`",
        anywhere=False,
    ),
    EndMessage(
        "scripts",
        "Saved final model to: runs/exp/model_final",
        r"\b(?:saved|saving|wrote|writing)\s+(?:the\s+)?final\s+(?:model|checkpoint|weights|policy)\b"
        r"|\bfinal\s+(?:model|checkpoint|weights|policy)\s+(?:is\s+|was\s+)?(?:saved|written|stored)\b",
        "a script saving its final model after its loop (not a checkpoint along the way)",
        anywhere=False,
    ),
    EndMessage(
        "scripts",
        "exit code 0",
        r"\bexit(?:ed)?(?: with)? (?:status|code):? 0\b",
        "a wrapper reporting the program's exit status 0",
        anywhere=False,
    ),
)

#: The framework end messages, found anywhere after the last epoch line (the gate flags their lines).
FINISH = re.compile("|".join(m.pattern for m in END_MESSAGES if m.anywhere), re.MULTILINE)
#: Byte keys of FINISH for the gate (each a plain substring search: ``bytes.find`` is fast on long keys).
FINISH_KEYS: tuple[bytes, ...] = tuple(dict.fromkeys(m.key for m in END_MESSAGES if m.anywhere))
#: Every end message, read among the log's last frames after its last epoch (case-insensitive).
COMPLETION = re.compile("|".join(m.pattern for m in END_MESSAGES), re.IGNORECASE | re.MULTILINE)
