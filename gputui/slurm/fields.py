"""Rows of ``squeue -O`` and ``sacct -p`` output that no job name can break.

Slurm takes any byte but NUL in a job name (measured on 22.05.8: ``\\x1f``, ``|``, ``,``, newlines, ESC,
bidi overrides), and work folders and output paths are free text too, so no single character can separate
fields. Every field is therefore followed by :data:`FIELD_END`: a unit separator and 16 random hex digits
drawn when gputui starts, which no name written before can contain. The output is read as one stream
split on it (never on lines): a newline inside a name stays in the name, and the newline that ends a row
is the start of the next row's first field (a job id), where it is dropped.

Text without :data:`FIELD_END` (captures from before it, and the test fakes that replay them) is read the
old way: one row per line, fields ended or separated by a bare ``\\x1f``.
"""

from __future__ import annotations

import secrets

UNIT_SEP = "\x1f"
FIELD_END = UNIT_SEP + secrets.token_hex(8)


def split_rows(text: str, count: int, *, old_lines_ended: bool = True) -> list[list[str]]:
    """The rows of ``count`` fields in ``text`` (each field followed by :data:`FIELD_END`); an incomplete
    last row (output cut short) is left out. ``old_lines_ended``: in the old line format every field is
    ended by ``\\x1f`` (``squeue -O``), else separated (``sacct -P``)."""
    if FIELD_END not in text:
        return _split_lines(text, count, old_lines_ended)
    tokens = text.split(FIELD_END)[:-1]  # the text after the last FIELD_END is the final newline
    rows = []
    for start in range(0, len(tokens) - count + 1, count):
        row = tokens[start : start + count]
        row[0] = row[0].rsplit("\n", 1)[-1]  # the row's first field follows the previous row's newline
        rows.append(row)
    return rows


def stray_lines(text: str, count: int, *, old_lines_ended: bool = True) -> list[str]:
    """The non-blank lines of ``text`` that are part of no row (a header, an error, a row cut short), for
    counting what :func:`split_rows` left out; a name's newline is inside its row, never stray."""
    if FIELD_END not in text:
        return [ln for ln in text.split("\n") if ln.strip() and not _split_lines(ln, count, old_lines_ended)]
    tokens = text.split(FIELD_END)
    whole = (len(tokens) - 1) // count * count
    stray = [token.rsplit("\n", 1)[0] for token in tokens[0:whole:count] if "\n" in token]
    stray.append(FIELD_END.join(tokens[whole:]))  # a row cut short, and what follows the last row
    return [line for chunk in stray for line in chunk.split("\n") if line.strip()]


def _split_lines(text: str, count: int, ended: bool) -> list[list[str]]:
    """Rows of the old line format; lines that do not split exactly are left out."""
    rows = []
    for line in text.split("\n"):
        parts = line.split(UNIT_SEP)
        if ended and parts[-1:] == [""]:
            parts.pop()
        elif ended:
            continue
        if len(parts) == count:
            rows.append(parts)
    return rows
