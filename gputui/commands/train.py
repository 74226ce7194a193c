"""``gputui train torch|tf|lightning ARGS...``: run a reference trainer in this process.

Same as ``python -m gputui.trainers.torch_ddp ARGS`` / ``tf_keras`` / ``lightning_ddp``;
launch it once per task under ``srun`` (see ``docs/trainers.md``). torch/TensorFlow are imported
only here, when the command runs; a missing one is one line naming the extra that brings it.
"""

from __future__ import annotations

import argparse
import importlib

from gputui.cli import CommandError
from gputui.extras import MissingExtra, require

_MODULES = {
    "torch": "gputui.trainers.torch_ddp",
    "tf": "gputui.trainers.tf_keras",
    "lightning": "gputui.trainers.lightning_ddp",
}


def main(args: argparse.Namespace) -> int:
    rest = list(args.args)
    if rest[:1] == ["--"]:
        rest = rest[1:]
    try:
        require(args.framework, f"gputui train {args.framework}")
    except MissingExtra as exc:
        raise CommandError(str(exc)) from None
    trainer = importlib.import_module(_MODULES[args.framework])
    return trainer.main(rest)
