"""Datasets for the reference trainers, read from disk with numpy only (no torch, no TensorFlow).

Every loader returns a :class:`Dataset`: float32 images ``(N, C, H, W)`` scaled to 0..1, int64 labels,
and a validation split. Nothing downloads; a missing or malformed dataset raises :class:`DatasetError`
with one line naming the path and the expected format.

- ``digits``: scikit-learn's ``load_digits`` (1 797 8×8 images, shipped in ``data/digits.csv.gz``),
  upsampled to 28×28 — a real dataset that trains in seconds on a CPU.
- ``mnist``: ``mnist.npz`` (Keras layout) or the IDX files (``train-images-idx3-ubyte[.gz]`` ...).
- ``cifar10``: the ``cifar-10-batches-py`` pickles.
- ``folder``: ``PATH/[train|val]/<class>/*.npy|.pgm|.ppm`` (PNG/JPEG when Pillow is installed).
- ``synthetic``: random images and labels, for throughput runs.
"""

from __future__ import annotations

import gzip
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATASETS = ("digits", "mnist", "cifar10", "folder", "synthetic")
DIGITS_FILE = Path(__file__).with_name("data") / "digits.csv.gz"
_IMAGE_SUFFIXES = (".npy", ".pgm", ".ppm", ".png", ".jpg", ".jpeg")


class DatasetError(ValueError):
    """A dataset that is missing or unreadable; the message is one line with the path and format."""


@dataclass(frozen=True)
class Dataset:
    name: str
    x_train: np.ndarray  # float32 (N, C, H, W), 0..1
    y_train: np.ndarray  # int64 (N,)
    x_val: np.ndarray
    y_val: np.ndarray
    num_classes: int

    @property
    def shape(self) -> tuple[int, int, int]:
        """(channels, height, width) of one image."""
        return tuple(self.x_train.shape[1:])  # type: ignore[return-value]


def resize_matrix(n_in: int, n_out: int) -> np.ndarray:
    """Bilinear interpolation weights ``(n_out, n_in)`` (half-pixel centres, like align_corners=False)."""
    centres = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
    centres = np.clip(centres, 0, n_in - 1)
    low = np.floor(centres).astype(int)
    high = np.minimum(low + 1, n_in - 1)
    frac = centres - low
    weights = np.zeros((n_out, n_in), dtype=np.float32)
    weights[np.arange(n_out), low] += 1 - frac
    weights[np.arange(n_out), high] += frac
    return weights


def resize(images: np.ndarray, size: int) -> np.ndarray:
    """Bilinear resize of ``(N, C, H, W)`` images to ``size``×``size`` (small arrays only: in memory)."""
    rows, cols = resize_matrix(images.shape[2], size), resize_matrix(images.shape[3], size)
    return np.einsum("oh,nchw,pw->ncop", rows, images, cols, optimize=True).astype(np.float32)


def _split(name: str, x: np.ndarray, y: np.ndarray, n_val: int, classes: int) -> Dataset:
    return Dataset(name, x[:-n_val], y[:-n_val], x[-n_val:], y[-n_val:], classes)


def load_digits(size: int = 28) -> Dataset:
    """scikit-learn's digits (UCI optical digits test set, CC BY 4.0), upsampled; last 297 for validation."""
    try:
        with gzip.open(DIGITS_FILE, "rt") as f:
            table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{DIGITS_FILE}: cannot read the bundled digits CSV ({exc})") from None
    x = (table[:, :64] / 16.0).reshape(-1, 1, 8, 8)
    y = table[:, 64].astype(np.int64)
    if size != 8:
        x = resize(x, size)
    return _split("digits", x, y, 297, 10)


def _need(path: str | None, dataset: str, expected: str) -> Path:
    if not path:
        raise DatasetError(f"--dataset {dataset} needs --data PATH ({expected})")
    p = Path(path).expanduser()
    if not p.exists():
        raise DatasetError(f"{p}: no such file or directory (expected {dataset}: {expected})")
    return p


def _read_idx(path: Path) -> np.ndarray:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise DatasetError(f"{path}: not an unsigned-byte IDX file")
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims))
    array = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims)
    if array.size != int(np.prod(shape)):
        raise DatasetError(f"{path}: IDX header says {shape} but the file holds {array.size} values")
    return array.reshape(shape)


def _idx_file(directory: Path, stem: str) -> Path | None:
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx")):
        if (directory / name).is_file():
            return directory / name
    return None


def load_mnist(path: str | None) -> Dataset:
    expected = "mnist.npz with x_train/y_train/x_test/y_test, or a directory with the IDX files"
    p = _need(path, "mnist", expected)
    if p.is_dir() and (p / "mnist.npz").is_file():
        p = p / "mnist.npz"
    try:
        if p.is_file():
            with np.load(p) as npz:
                xt, yt, xv, yv = (npz[k] for k in ("x_train", "y_train", "x_test", "y_test"))
        else:
            stems = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte")
            stems += ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
            files = [_idx_file(p, s) for s in stems]
            if any(f is None for f in files):
                raise DatasetError(f"{p}: no MNIST data (expected {expected})")
            xt, yt, xv, yv = (_read_idx(f) for f in files)  # type: ignore[arg-type]
    except (OSError, KeyError, ValueError, EOFError) as exc:
        if isinstance(exc, DatasetError):
            raise
        raise DatasetError(f"{p}: not a readable MNIST file (expected {expected}): {exc}") from None

    def prep(x: np.ndarray) -> np.ndarray:
        return (x.astype(np.float32) / 255.0).reshape(len(x), 1, 28, 28)

    return Dataset("mnist", prep(xt), yt.astype(np.int64), prep(xv), yv.astype(np.int64), 10)


def load_cifar10(path: str | None) -> Dataset:
    expected = "the cifar-10-batches-py directory (data_batch_1..5, test_batch pickles)"
    p = _need(path, "cifar10", expected)
    if (p / "cifar-10-batches-py").is_dir():
        p = p / "cifar-10-batches-py"
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    if not p.is_dir() or not all((p / n).is_file() for n in names):
        raise DatasetError(f"{p}: no CIFAR-10 data (expected {expected})")
    xs, ys = [], []
    for name in names:
        try:
            with open(p / name, "rb") as f:
                batch = pickle.load(f, encoding="bytes")
            xs.append(np.asarray(batch[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
            ys.append(np.asarray(batch[b"labels"], dtype=np.int64))
        except (OSError, KeyError, ValueError, EOFError, pickle.UnpicklingError) as exc:
            raise DatasetError(f"{p / name}: not a CIFAR-10 python pickle ({exc})") from None
    x = np.concatenate(xs).astype(np.float32) / 255.0
    return _split("cifar10", x, np.concatenate(ys), len(ys[-1]), 10)  # test_batch is the validation set


def _read_netpbm(path: Path) -> np.ndarray:
    data = path.read_bytes()
    tokens, pos = [], 0
    while len(tokens) < 4:
        while pos < len(data) and data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while end < len(data) and not data[end : end + 1].isspace():
            end += 1
        tokens.append(data[pos:end])
        pos = end
    magic, width, height, maxval = tokens[0], int(tokens[1]), int(tokens[2]), int(tokens[3])
    channels = {b"P5": 1, b"P6": 3}.get(magic)
    if channels is None or maxval > 255:
        raise ValueError("only binary 8-bit PGM (P5) / PPM (P6) are supported")
    pixels = np.frombuffer(data, dtype=np.uint8, offset=pos + 1, count=width * height * channels)
    return pixels.reshape(height, width, channels).transpose(2, 0, 1) / np.float32(maxval)


def _read_image(path: Path) -> np.ndarray:
    suffix = path.suffix.lower()
    if suffix == ".npy":
        image = np.load(path).astype(np.float32)
        image = image[None] if image.ndim == 2 else image
        return image / 255.0 if image.max() > 1.0 else image
    if suffix in (".pgm", ".ppm"):
        return _read_netpbm(path).astype(np.float32)
    try:
        from PIL import Image  # optional
    except ImportError:
        raise DatasetError(f"{path}: reading {suffix} images needs Pillow (pip install pillow)") from None
    with Image.open(path) as img:
        array = np.asarray(img.convert("RGB"), dtype=np.float32) / 255.0
    return array.transpose(2, 0, 1)


def _read_class_tree(root: Path, classes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    images, labels = [], []
    for label, name in enumerate(classes):
        for file in sorted((root / name).iterdir()) if (root / name).is_dir() else ():
            if file.suffix.lower() in _IMAGE_SUFFIXES:
                try:
                    images.append(_read_image(file))
                except (OSError, ValueError) as exc:
                    raise DatasetError(f"{file}: unreadable image ({exc})") from None
                labels.append(label)
    if not images:
        return np.zeros((0, 1, 1, 1), np.float32), np.zeros(0, np.int64)
    if len({im.shape for im in images}) > 1:
        raise DatasetError(f"{root}: images have different shapes; resize them to one size first")
    return np.stack(images).astype(np.float32), np.asarray(labels, dtype=np.int64)


def load_folder(path: str | None) -> Dataset:
    expected = "PATH/<class>/*.npy|.pgm|.ppm|.png|.jpg, optionally under PATH/train and PATH/val"
    p = _need(path, "folder", expected)
    train_root = p / "train" if (p / "train").is_dir() else p
    classes = sorted(d.name for d in train_root.iterdir() if d.is_dir()) if train_root.is_dir() else []
    if not classes:
        raise DatasetError(f"{p}: no class directories (expected {expected})")
    x, y = _read_class_tree(train_root, classes)
    if len(x) == 0:
        raise DatasetError(f"{train_root}: no images in the class directories (expected {expected})")
    if (p / "val").is_dir():
        xv, yv = _read_class_tree(p / "val", classes)
    else:  # hold out every 10th image
        order = np.random.default_rng(0).permutation(len(x))
        n_val = max(1, len(x) // 10)
        xv, yv, x, y = x[order[:n_val]], y[order[:n_val]], x[order[n_val:]], y[order[n_val:]]
    return Dataset("folder", x, y, xv, yv, len(classes))


def load_synthetic(samples: int = 6000, size: int = 32, channels: int = 3, classes: int = 10) -> Dataset:
    rng = np.random.default_rng(0)
    n_val = max(1, samples // 10)
    x = rng.random((samples + n_val, channels, size, size), dtype=np.float32)
    y = rng.integers(0, classes, samples + n_val).astype(np.int64)
    return _split("synthetic", x, y, n_val, classes)


def load(
    name: str,
    path: str | None = None,
    *,
    image_size: int | None = None,
    samples: int = 6000,
    channels: int = 3,
) -> Dataset:
    """Load dataset ``name``; ``image_size`` sets the digits/synthetic size (others resize per batch)."""
    if name == "digits":
        return load_digits(image_size or 28)
    if name == "mnist":
        return load_mnist(path)
    if name == "cifar10":
        return load_cifar10(path)
    if name == "folder":
        return load_folder(path)
    if name == "synthetic":
        return load_synthetic(samples, image_size or 32, channels)
    raise DatasetError(f"unknown dataset {name!r} (choose from {', '.join(DATASETS)})")
