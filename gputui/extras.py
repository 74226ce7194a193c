"""Optional extras: the modules each feature needs, and one line naming the extra that brings them.

``pip install gputui`` alone gives the jobs screen, attach, replay, parse, report and the probes' sysfs
backend; everything else is an extra declared in ``pyproject.toml``. This table is the one place that
says which importable modules stand for which extra, so a missing one is a single line such as
``gputui train torch needs numpy: pip install 'gputui[torch]'`` instead of a traceback.
"""

from __future__ import annotations

import importlib.util

#: extra → the top-level modules it must make importable (any of a tuple's alternatives will do).
EXTRA_MODULES: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "demo": ("torch", "numpy"),
    "torch": ("torch", "numpy"),
    "tf": ("tensorflow", "numpy"),
    "lightning": ("torch", "numpy", ("lightning", "pytorch_lightning")),
    "serve": ("textual_serve", "aiohttp", "aiohttp_jinja2"),
}


class MissingExtra(Exception):
    """A feature's optional modules are not installed; ``str()`` is one line naming the extra."""


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a broken parent package, or a module without a spec
        return False


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (alternatives named with ``or``)."""
    missing = []
    for wanted in EXTRA_MODULES[extra]:
        options = (wanted,) if isinstance(wanted, str) else wanted
        if not any(_importable(name) for name in options):
            missing.append(" or ".join(options))
    return missing


def require(extra: str, feature: str) -> None:
    """Raise :class:`MissingExtra` when ``feature`` cannot run for lack of ``extra``'s modules."""
    missing = missing_modules(extra)
    if missing:
        raise MissingExtra(f"{feature} needs {', '.join(missing)}: pip install 'gputui[{extra}]'")
