"""The log formats: one module per family (its ``PARSER`` with a ``claims`` pre-test and ``parse``),
registered once in :data:`gputui.logs.parser.FAMILIES`; ``generic`` and ``extract`` are the fallback
of every log, ``taught`` the user's own patterns (tried first). See ``docs/log-formats.md``."""
