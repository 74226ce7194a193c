"""The frameworks' end messages (gputui.logs.end_messages): one table, each message read as completion,
the framework ones also far before the end of the log, and the table documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from gputui.logs import parse_bytes
from gputui.logs.end_messages import END_MESSAGES, FINISH_KEYS
from gputui.logs.outcome import gate

EPOCHS = "".join(f"epoch {e} loss={1 / e:.3f} acc={0.5 + e / 100:.2f}\n" for e in range(1, 4))
# prose printed after the end message by a long final evaluation: more frames than the tail that is read
AFTER = "".join(f"saved predictions for image {i:05d}.png\n" for i in range(200))
DOC = Path(__file__).resolve().parents[2] / "docs" / "log-formats.md"
IDS = [f"{m.framework}: {m.example[:30]}" for m in END_MESSAGES]


def outcome(text: str) -> tuple[str, str]:
    events = [r for r in parse_bytes(text.encode()) if r.kind == "event" and r.get("event") == "outcome"]
    assert len(events) == 1
    return events[0]["outcome"], events[0].get("evidence") or ""


@pytest.mark.parametrize("message", END_MESSAGES, ids=IDS)
def test_each_end_message_after_the_last_epoch_is_completion(message) -> None:
    assert outcome(EPOCHS + message.example + "\n") == ("completed", message.example)


@pytest.mark.parametrize("message", END_MESSAGES, ids=IDS)
def test_an_end_message_before_the_last_epoch_is_not(message) -> None:
    # (a message that states a plan makes the three epochs after it short of it, or reach it: gputui's
    # train_finished names 3 epochs; issue 30: a run that reached its planned total completed)
    expected = ("unknown", "truncated") + (("completed",) if '"epochs":3' in message.example else ())
    assert outcome(message.example + "\n" + EPOCHS)[0] in expected


@pytest.mark.parametrize("message", [m for m in END_MESSAGES if m.anywhere], ids=lambda m: m.example[:30])
def test_a_framework_end_message_is_found_before_a_long_final_evaluation(message) -> None:
    assert message.key in FINISH_KEYS and message.key in message.example.encode()
    assert gate(f"x\n{message.example}\ny\n".encode())  # the gate flags its line
    assert outcome(EPOCHS + message.example + "\n" + AFTER) == ("completed", message.example)


def test_prose_about_the_end_of_training_is_not_an_end_message() -> None:
    for line in (
        "Checkpoints will be saved at the end of training",
        "~~~~ End of Training Epoch. Model was Saved. ~~~~",
        "*** Best metric: 79.45",
        "Training time: 12.3s",
    ):
        assert outcome(EPOCHS + line + "\n")[0] == "unknown", line


def test_the_table_is_in_the_docs() -> None:
    outcome_section = DOC.read_text().split("## Outcome", 1)[1].split("\n## ", 1)[0]
    for message in END_MESSAGES:
        assert message.framework in outcome_section, message.framework
        assert message.meaning.split(" (")[0].replace("`", "") in outcome_section.replace("`", ""), message
