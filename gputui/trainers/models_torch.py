"""Models for the PyTorch trainer, in plain torch (no torchvision: it has no CPU build everywhere).

``cnn`` is a small two-convolution net for digits/MNIST; ``resnet18`` and ``resnet50`` follow He et al.
(torchvision's layout: 7×7 stem, BasicBlock [2, 2, 2, 2] / Bottleneck [3, 4, 6, 3]) and take any
channel count and image size (adaptive average pooling).
"""

from __future__ import annotations

from torch import Tensor, nn

MODELS = ("cnn", "resnet18", "resnet50")


class SmallCNN(nn.Module):
    def __init__(self, channels: int = 1, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(channels, 16, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(7),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 7 * 7, 64), nn.ReLU(inplace=True))
        self.fc = nn.Linear(64, classes)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(self.head(self.features(x)))


def _conv_bn(cin: int, cout: int, kernel: int, stride: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False), nn.BatchNorm2d(cout)]


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin: int, width: int, stride: int = 1) -> None:
        super().__init__()
        cout = width * self.expansion
        self.body = nn.Sequential(
            *_conv_bn(cin, width, 3, stride), nn.ReLU(inplace=True), *_conv_bn(width, cout, 3)
        )
        self.short = (
            nn.Identity() if stride == 1 and cin == cout else nn.Sequential(*_conv_bn(cin, cout, 1, stride))
        )
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: Tensor) -> Tensor:
        return self.relu(self.body(x) + self.short(x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin: int, width: int, stride: int = 1) -> None:
        super().__init__()
        cout = width * self.expansion
        self.body = nn.Sequential(
            *_conv_bn(cin, width, 1),
            nn.ReLU(inplace=True),
            *_conv_bn(width, width, 3, stride),
            nn.ReLU(inplace=True),
            *_conv_bn(width, cout, 1),
        )
        self.short = (
            nn.Identity() if stride == 1 and cin == cout else nn.Sequential(*_conv_bn(cin, cout, 1, stride))
        )
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: Tensor) -> Tensor:
        return self.relu(self.body(x) + self.short(x))


class ResNet(nn.Module):
    def __init__(self, block: type, layers: list[int], channels: int = 3, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(*_conv_bn(channels, 64, 7, 2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        stages, cin = [], 64
        for i, (width, blocks) in enumerate(zip((64, 128, 256, 512), layers, strict=True)):
            for j in range(blocks):
                stages.append(block(cin, width, 2 if i > 0 and j == 0 else 1))
                cin = width * block.expansion
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(self.pool(self.stages(self.stem(x))).flatten(1))


def build(name: str, channels: int, classes: int) -> nn.Module:
    if name == "cnn":
        return SmallCNN(channels, classes)
    if name == "resnet18":
        return ResNet(BasicBlock, [2, 2, 2, 2], channels, classes)
    if name == "resnet50":
        return ResNet(Bottleneck, [3, 4, 6, 3], channels, classes)
    raise ValueError(f"unknown model {name!r}")
