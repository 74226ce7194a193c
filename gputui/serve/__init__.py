"""``gputui serve``: gputui's screens in a browser, one app process per viewer, behind a per-start token.

:mod:`gputui.serve.mode` (no dependency) tells an app process that it is served; the server itself
(:mod:`gputui.serve.server`, :mod:`gputui.serve.auth`) needs the ``serve`` extra (textual-serve, aiohttp).
"""
