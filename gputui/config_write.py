"""Writing the settings file: a taught log pattern appended as text, the rest of the file kept.

Reading and validating the file is :mod:`gputui.config`'s; this module only adds to it, and puts the file
back as it was when the result would no longer load.
"""

from __future__ import annotations

import json
from pathlib import Path

from gputui.config import ConfigError, _shown, config_path, load_config


def append_pattern(pattern: str, where: str | None = None, env: dict[str, str] | None = None) -> Path:
    """Append a ``[[patterns]]`` table to the settings file as text (the rest of the file kept as it is);
    the file is read back and, if it no longer loads, put back as it was (:class:`ConfigError`)."""
    from gputui.logs.formats.taught import compile_pattern

    try:
        compile_pattern(pattern)
    except ValueError as exc:
        raise ConfigError(f"pattern {_shown(pattern)}: {exc}") from None
    path = config_path(env)
    try:
        before = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    entry = f"[[patterns]]\npattern = {json.dumps(pattern)}\n"
    if where is not None:
        entry += f"where = {json.dumps(where)}\n"
    text = (before or "").rstrip("\n")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{text}\n\n{entry}" if text else entry, encoding="utf-8")
        load_config(env)
    except ConfigError:
        _put_back(path, before)
        raise
    except OSError as exc:
        _put_back(path, before)
        raise ConfigError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return path


def _put_back(path: Path, text: str | None) -> None:
    try:
        if text is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(text, encoding="utf-8")
    except OSError:
        pass
