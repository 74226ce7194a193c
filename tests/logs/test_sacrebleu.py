"""A BLEU score as sacreBLEU and fairseq print it (``gputui.logs.formats.sacrebleu``)."""

from __future__ import annotations

from gputui.logs import parse_bytes


def metrics(text: str) -> list[tuple]:
    records = parse_bytes(text.encode())
    return [
        (r.get("name"), r.get("value"), r.get("epoch"), r.get("scope")) for r in records if r.kind == "metric"
    ]


def test_an_epochs_dev_score_gives_its_parts_as_val_values_of_that_epoch() -> None:
    line = (
        "[INFO] 2021-12-25 21:44:38,457 : Epoch:  1 Dev Bleu Score: BLEU = 0.01 14.9/1.0/0.0/0.0 "
        "(BP = 0.044 ratio = 0.242 hyp_len = 137316 ref_len = 567172)\n"
    )
    assert metrics(line) == [
        ("val_bleu", 0.01, 1, "epoch"),
        ("val_bleu_p1", 14.9, 1, "epoch"),
        ("val_bleu_p2", 1.0, 1, "epoch"),
        ("val_bleu_p3", 0.0, 1, "epoch"),
        ("val_bleu_p4", 0.0, 1, "epoch"),
        ("val_bp", 0.044, 1, "epoch"),
        ("val_ratio", 0.242, 1, "epoch"),
        ("val_hyp_len", 137316.0, 1, "epoch"),
        ("val_ref_len", 567172.0, 1, "epoch"),
    ]


def test_fairseq_generate_gives_the_runs_test_score() -> None:
    line = (
        "Generate test with beam=5: BLEU4 = 40.83, 67.5/46.8/34.4/25.5 "
        "(BP=1.000, ratio=1.006, syslen=3912, reflen=3889)\n"
    )
    got = metrics(line)
    assert got[0] == ("test_bleu", 40.83, None, "summary")
    assert [n for n, *_ in got] == [
        "test_bleu",
        "test_bleu_p1",
        "test_bleu_p2",
        "test_bleu_p3",
        "test_bleu_p4",
        "test_bp",
        "test_ratio",
        "test_hyp_len",
        "test_ref_len",
    ]
