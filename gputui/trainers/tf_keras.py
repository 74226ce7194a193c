"""Reference TensorFlow/Keras 3 trainer: no strategy, MirroredStrategy, MultiWorkerMirroredStrategy.

The three steps of the usual course:

- ``--strategy none``: one device, ``model.fit``;
- ``--strategy mirrored``: all GPUs of one node in one process (one Slurm task per node), ``model.fit``;
- ``--strategy multiworker``: one worker per Slurm task across nodes, a custom training loop (see
  :func:`train_custom_loop` for why). ``TF_CONFIG`` is built from the Slurm variables by
  :func:`gputui.trainers.common.tf_config` unless already set; either way each worker's rank comes
  from it. A lost worker makes the others exit with one line (status 3), see :func:`_peer_errors`.

``--cpu-devices N`` (or ``GPUTUI_TF_CPU_DEVICES=N``) splits the CPU into N logical devices so that
MirroredStrategy has N replicas on a GPU-less machine (tests, demos).
"""

from __future__ import annotations

import json
import os
import sys
import time

from gputui import distenv
from gputui.trainers import data as datasets
from gputui.trainers.common import (
    EXIT_USAGE,
    TrainerError,
    batching,
    build_parser,
    fault_hook,
    peer_lost,
    reporter_for,
    run,
    tf_config,
    tf_worker,
)

PROG = "gputui.trainers.tf_keras"


def parser():
    p = build_parser(PROG, ("cnn", "resnet50v2"), 0.05, "TensorFlow/Keras reference trainer")
    p.add_argument("--strategy", choices=("none", "mirrored", "multiworker"), default="none")
    p.add_argument(
        "--cpu-devices",
        type=int,
        default=int(os.environ.get("GPUTUI_TF_CPU_DEVICES", "0") or 0),
        metavar="N",
        help="split the CPU into N logical devices (N replicas for MirroredStrategy without GPUs)",
    )
    p.add_argument("--verbose", type=int, default=0, choices=(0, 1, 2), help="Keras fit() verbosity")
    return p


def _datasets(tf, data, global_batch: int, image_size: int | None, seed: int):
    """(train, val) tf.data pipelines, channels-last, resized per batch when asked."""
    x_train = data.x_train.transpose(0, 2, 3, 1)
    x_val = data.x_val.transpose(0, 2, 3, 1)

    def resize(x, y):
        return tf.image.resize(x, (image_size, image_size)), y

    def pipeline(x, y, shuffle_seed):
        ds = tf.data.Dataset.from_tensor_slices((x, y))
        if shuffle_seed is not None:
            ds = ds.shuffle(len(x), seed=shuffle_seed, reshuffle_each_iteration=True)
        ds = ds.batch(global_batch, drop_remainder=shuffle_seed is not None)
        if image_size and image_size != x.shape[1]:
            ds = ds.map(resize, num_parallel_calls=tf.data.AUTOTUNE)
        return ds.prefetch(tf.data.AUTOTUNE)

    return pipeline(x_train, data.y_train, seed), pipeline(x_val, data.y_val, None)


def train(args) -> int:
    env = distenv.from_environ()
    data = datasets.load(args.dataset, args.data, image_size=args.image_size, samples=args.synthetic_samples)
    size = args.image_size or data.shape[1]
    if args.model == "resnet50v2" and size < 32:
        raise TrainerError(
            "resnet50v2 needs images of at least 32×32; pass --image-size 32 or more", EXIT_USAGE
        )
    rank, workers = 0, 1
    if args.strategy == "multiworker":
        if "TF_CONFIG" not in os.environ:
            os.environ["TF_CONFIG"] = json.dumps(tf_config(env))
        try:
            rank, workers = tf_worker(json.loads(os.environ["TF_CONFIG"]))
        except (ValueError, TypeError, AttributeError) as exc:
            raise TrainerError(f"TF_CONFIG is not a valid cluster spec: {exc}", EXIT_USAGE) from None
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    from gputui.trainers.models_tf import build

    if args.cpu_devices > 1:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * args.cpu_devices
        )
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)
    if args.strategy == "mirrored":
        strategy = tf.distribute.MirroredStrategy()
    elif args.strategy == "multiworker":
        options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=args.timeout)
        strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    else:
        strategy = tf.distribute.get_strategy()
    replicas = strategy.num_replicas_in_sync
    plan = batching(args.batch_size, replicas, args.scaling, args.lr, args.scale_lr)
    tf.keras.utils.set_random_seed(args.seed)  # Python, NumPy and TF: Keras 3 initialisers too
    reporter = reporter_for(args, env, rank)
    if rank == 0:
        print(
            f"{PROG}: strategy {args.strategy}, {replicas} replica(s) in {workers} worker process(es), "
            f"model {args.model}, dataset {data.name} {len(data.x_train)} train / {len(data.x_val)} val, "
            f"batch {plan.per_rank}/replica ({plan.global_} global, {args.scaling} scaling), lr {plan.lr:g}",
            flush=True,
        )
        reporter.start(epochs=args.epochs, world_size=replicas, global_batch=plan.global_)
    reporter.metrics(
        {
            "batch_size": plan.per_rank,
            "global_batch_size": plan.global_,
            "learning_rate": plan.lr,
            "replicas": replicas,
        },
        step=0,
    )
    train_ds, val_ds = _datasets(tf, data, plan.global_, args.image_size, args.seed)
    with strategy.scope():
        model = build(args.model, (size, size, data.shape[0]), data.num_classes)
        optimizer = tf.keras.optimizers.SGD(learning_rate=plan.lr, momentum=0.9)
    if args.strategy == "multiworker":
        train_custom_loop(
            tf, args, strategy, model, optimizer, train_ds, val_ds, plan, rank, workers, reporter
        )
    else:
        train_fit(tf, args, model, optimizer, train_ds, val_ds, plan, reporter)
    if rank == 0:
        reporter.finish(epochs=args.epochs)
    reporter.close()
    return 0


def train_fit(tf, args, model, optimizer, train_ds, val_ds, plan, reporter) -> None:
    """``model.fit`` (no strategy and MirroredStrategy), reporting through the Keras callback."""
    from gputui.reporter_callbacks import KerasReporter

    model.compile(
        optimizer=optimizer,
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    callbacks = [KerasReporter(reporter, batch_size=plan.global_, world_size=1)]
    if args.checkpoint:
        callbacks.append(tf.keras.callbacks.ModelCheckpoint(args.checkpoint, save_weights_only=True))
    model.fit(
        train_ds,
        epochs=args.epochs,
        steps_per_epoch=args.max_steps,
        validation_data=val_ds,
        shuffle=False,  # the tf.data pipeline shuffles
        callbacks=callbacks,
        verbose=args.verbose,
    )


def train_custom_loop(tf, args, strategy, model, optimizer, train_ds, val_ds, plan, rank, workers, reporter):
    """MultiWorkerMirroredStrategy with a custom loop.

    Keras 3's ``model.fit`` fails under MultiWorkerMirroredStrategy ("Attempt to convert a value
    (PerReplica:{...}) with an unsupported type ... to a Tensor", keras-team/keras#20585,
    tensorflow/tensorflow#72388), so the step is written out: ``strategy.run`` per replica, the loss
    averaged over the *global* batch (``tf.nn.compute_average_loss``), gradients all-reduced by the
    optimizer, and the loss/accuracy summed across workers with ``strategy.reduce`` — every worker sees
    the same numbers. MirroredStrategy and no strategy keep ``fit()`` (:func:`train_fit`).
    """
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    dist_ds = strategy.experimental_distribute_dataset(train_ds.with_options(options))
    steps = int(train_ds.cardinality())  # drop_remainder: the same count on every worker
    if args.max_steps:
        steps = min(steps, args.max_steps)

    def step_fn(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.nn.compute_average_loss(loss_fn(y, logits), global_batch_size=plan.global_)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=y.dtype), y), tf.float32))
        return loss, correct

    @tf.function
    def train_step(batch):
        loss, correct = strategy.run(step_fn, args=batch)
        sum_ = tf.distribute.ReduceOp.SUM
        return strategy.reduce(sum_, loss, axis=None), strategy.reduce(sum_, correct, axis=None)

    global_step = 0
    try:
        for epoch in range(1, args.epochs + 1):
            iterator = iter(dist_ds)
            loss_sum = correct_sum = 0.0
            start = time.perf_counter()
            for i in range(steps):
                fault_hook(args, rank, global_step + 1)
                loss, correct = train_step(next(iterator))
                loss_sum += float(loss)
                correct_sum += float(correct)
                global_step += 1
                if args.log_every and global_step % args.log_every == 0:
                    reporter.metric("loss", float(loss), step=global_step, epoch=epoch - 1 + (i + 1) / steps)
            elapsed = time.perf_counter() - start
            metrics = {"loss": loss_sum / steps, "accuracy": correct_sum / (steps * plan.global_)}
            if rank == 0:  # evaluation and checkpoint on the chief only (local reads, no collectives)
                metrics.update(_evaluate(tf, model, val_ds, loss_fn))
                if args.checkpoint:
                    model.save_weights(args.checkpoint)
            reporter.epoch_end(
                epoch,
                metrics,
                epoch_time_s=elapsed,
                images=steps * plan.global_ // workers,
                steps=steps,
                step=global_step,
                world_size=workers,
            )
    except _peer_errors(tf) as exc:
        peer_lost(PROG, rank, global_step, args.timeout, exc, peers="workers")


def _peer_errors(tf) -> tuple[type[BaseException], ...]:
    """What a collective raises when a peer is lost.

    A crashed worker stops sending heartbeats to the coordination service, which aborts every
    collective with UnavailableError (~10 s later); a hung one makes them hit ``--timeout``
    (``CommunicationOptions``: DeadlineExceededError); Cancelled/Aborted follow either.
    """
    e = tf.errors
    return (e.UnavailableError, e.DeadlineExceededError, e.CancelledError, e.AbortedError)


def _evaluate(tf, model, val_ds, loss_fn) -> dict[str, float]:
    total = correct = n = 0.0
    for x, y in val_ds:
        logits = model(x, training=False)
        total += float(tf.reduce_sum(loss_fn(y, logits)))
        correct += float(
            tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1, output_type=y.dtype), y), tf.float32))
        )
        n += int(y.shape[0])
    return {"val_loss": total / max(n, 1), "val_accuracy": correct / max(n, 1)}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return run(PROG, lambda: train(args))


if __name__ == "__main__":
    sys.exit(main())
