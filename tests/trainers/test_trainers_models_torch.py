"""The plain-torch models build and run forward/backward on small inputs."""

from __future__ import annotations

import pytest
from ci_helpers import require_module

torch = require_module("torch", "pip install torch==2.13.0")

from gputui.trainers.models_torch import build  # noqa: E402


@pytest.mark.parametrize(
    ("name", "channels", "size"), [("cnn", 1, 28), ("resnet18", 3, 32), ("resnet50", 3, 32)]
)
def test_forward_backward(name, channels, size) -> None:
    torch.manual_seed(0)
    model = build(name, channels, 10)
    out = model(torch.randn(2, channels, size, size))
    assert out.shape == (2, 10)
    out.sum().backward()


def test_parameter_counts_match_the_reference_architectures() -> None:
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(build("resnet18", 3, 1000)) == 11_689_512  # torchvision resnet18
    assert count(build("resnet50", 3, 1000)) == 25_557_032  # torchvision resnet50
