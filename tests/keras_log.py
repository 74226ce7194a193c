"""A Keras ``verbose=2`` training log with known values, shared by the tests that replay one.

Three epochs of 100 steps; each epoch line prints its time (``12s``, ``11s``, ``11s``: 34 s in all),
its loss (0.9, 0.7, 0.5) and its accuracy (0.6, 0.7, 0.8).
"""

from __future__ import annotations

LINES = (
    "Epoch 1/3",
    "100/100 - 12s - loss: 0.9000 - accuracy: 0.6000 - 12s/epoch - 120ms/step",
    "Epoch 2/3",
    "100/100 - 11s - loss: 0.7000 - accuracy: 0.7000 - 11s/epoch - 110ms/step",
    "Epoch 3/3",
    "100/100 - 11s - loss: 0.5000 - accuracy: 0.8000 - 11s/epoch - 110ms/step",
)
