"""Dataset loaders: the bundled digits and the on-disk formats, with one-line errors."""

from __future__ import annotations

import gzip
import pickle

import numpy as np
import pytest

from gputui.trainers import data


def test_digits_are_upsampled_real_images() -> None:
    ds = data.load("digits")
    assert ds.x_train.shape == (1500, 1, 28, 28) and ds.x_val.shape == (297, 1, 28, 28)
    assert ds.x_train.dtype == np.float32 and ds.x_train.min() >= 0.0 and ds.x_train.max() <= 1.0
    assert set(np.unique(ds.y_train)) == set(range(10)) and ds.num_classes == 10
    assert data.load_digits(8).x_train.shape[2:] == (8, 8)


def test_resize_matrix_rows_are_convex_weights() -> None:
    weights = data.resize_matrix(8, 28)
    assert np.allclose(weights.sum(1), 1.0) and weights.min() >= 0


def _write_idx(path, array: np.ndarray) -> None:
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def test_mnist_npz_and_idx(tmp_path) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 256, (20, 28, 28)), rng.integers(0, 10, 20)
    np.savez(tmp_path / "mnist.npz", x_train=x[:15], y_train=y[:15], x_test=x[15:], y_test=y[15:])
    ds = data.load("mnist", str(tmp_path))
    assert ds.x_train.shape == (15, 1, 28, 28) and ds.x_val.shape == (5, 1, 28, 28)
    idx = tmp_path / "idx"
    idx.mkdir()
    _write_idx(idx / "train-images-idx3-ubyte.gz", x[:15])
    _write_idx(idx / "train-labels-idx1-ubyte.gz", y[:15])
    _write_idx(idx / "t10k-images-idx3-ubyte.gz", x[15:])
    _write_idx(idx / "t10k-labels-idx1-ubyte.gz", y[15:])
    ds2 = data.load("mnist", str(idx))
    assert np.array_equal(ds.x_train, ds2.x_train) and np.array_equal(ds.y_val, ds2.y_val)


def test_cifar10_pickles(tmp_path) -> None:
    root = tmp_path / "cifar-10-batches-py"
    root.mkdir()
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {b"data": np.full((2, 3072), 255, np.uint8), b"labels": [1, 2]}
        (root / name).write_bytes(pickle.dumps(batch))
    ds = data.load("cifar10", str(tmp_path))
    assert ds.x_train.shape == (10, 3, 32, 32) and ds.x_val.shape == (2, 3, 32, 32)
    assert ds.x_train.max() == 1.0


def test_folder_of_npy_and_pgm(tmp_path) -> None:
    for cls in ("cat", "dog"):
        (tmp_path / cls).mkdir()
        for i in range(5):
            np.save(tmp_path / cls / f"{i}.npy", np.full((8, 8), 200 if cls == "dog" else 10, np.uint8))
    (tmp_path / "cat" / "x.pgm").write_bytes(b"P5\n# c\n8 8\n255\n" + bytes(64))
    ds = data.load("folder", str(tmp_path))
    assert ds.num_classes == 2 and len(ds.x_train) + len(ds.x_val) == 11
    assert ds.shape == (1, 8, 8)


@pytest.mark.parametrize(
    ("name", "path", "words"),
    [
        ("mnist", "/nonexistent/mnist", ["/nonexistent/mnist", "mnist.npz"]),
        ("cifar10", "/nonexistent/c", ["/nonexistent/c", "cifar-10-batches-py"]),
        ("folder", "/nonexistent/f", ["/nonexistent/f", "<class>"]),
        ("mnist", None, ["--data PATH"]),
    ],
)
def test_missing_dataset_is_one_line_naming_path_and_format(name, path, words) -> None:
    with pytest.raises(data.DatasetError) as info:
        data.load(name, path)
    message = str(info.value)
    assert "\n" not in message and all(w in message for w in words)


def test_empty_directory_is_not_mnist(tmp_path) -> None:
    with pytest.raises(data.DatasetError, match="no MNIST data"):
        data.load("mnist", str(tmp_path))


def test_synthetic_shape() -> None:
    ds = data.load("synthetic", image_size=16, samples=50)
    assert ds.x_train.shape == (50, 3, 16, 16) and len(ds.x_val) == 5
