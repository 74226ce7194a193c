"""Keras 3 models for the TensorFlow trainer (channels-last images).

``cnn`` matches the PyTorch trainer's small net; ``resnet50v2`` is ``keras.applications.ResNet50V2``
with random weights (nothing is downloaded), as in the BSC MirroredStrategy course example.
"""

from __future__ import annotations

from gputui.trainers.common import EXIT_USAGE, TrainerError

MODELS = ("cnn", "resnet50v2")


def build(name: str, shape: tuple[int, int, int], classes: int):
    """``shape`` is (height, width, channels). Logits out (no softmax)."""
    import keras
    from keras import layers

    if name == "cnn":
        return keras.Sequential(
            [
                keras.Input(shape=shape),
                layers.Conv2D(16, 3, padding="same", activation="relu"),
                layers.MaxPooling2D(2),
                layers.Conv2D(32, 3, padding="same", activation="relu"),
                layers.GlobalAveragePooling2D() if shape[0] < 14 else layers.MaxPooling2D(2),
                layers.Flatten(),
                layers.Dense(64, activation="relu"),
                layers.Dense(classes),
            ],
            name="cnn",
        )
    if name == "resnet50v2":
        if min(shape[:2]) < 32:
            raise TrainerError(
                f"resnet50v2 needs images of at least 32×32 (got {shape[0]}×{shape[1]}); "
                "pass --image-size 32 or more",
                EXIT_USAGE,
            )
        return keras.applications.ResNet50V2(
            weights=None, input_shape=shape, classes=classes, classifier_activation=None
        )
    raise ValueError(f"unknown model {name!r}")
