"""Reference distributed trainers (PyTorch DDP, TensorFlow tf.distribute) that report gputui metrics."""
