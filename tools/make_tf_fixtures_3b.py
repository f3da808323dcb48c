#!/usr/bin/env python3
"""Generate the third set (B) of TensorFlow graph fixtures in tests/data/graphs/ (issue 19).

Maintainer tool, like make_tf_fixtures.py: neither the project nor its tests
import it, and the project never needs TensorFlow. Run it in a throwaway venv:

    python3.11 -m venv /tmp/tfvenv_b
    /tmp/tfvenv_b/bin/pip install tensorflow-cpu==2.15.1
    /tmp/tfvenv_b/bin/python tools/make_tf_fixtures_3b.py [OUT_DIR] [name ...]

OUT_DIR defaults to tests/data/graphs. With names, only those fixtures are
built (names are the function names below without the ``make_`` prefix).

Each graph has a wrong fp or bp pick just before (or after) the right one:

* ``label_cast_one_hot``: Horovod's tensorflow_mnist.py style: feed_dict
  Placeholders, and ``tf.one_hot(tf.cast(label, tf.int32), 10)`` built before
  the model (label side, not the feature path).
* ``image_convert_cast``: queue input pipeline (slice_input_producer +
  train.batch) of uint8 images, then ``tf.image.convert_image_dtype`` (a Cast
  and a Mul by 1/255: input preprocessing) before conv -> dense.
* ``tf2_called_function``: TF2 ``@tf.function train_step`` with a GradientTape
  whose forward pass is itself a ``tf.function``: a call node at the top level
  of the step, the model in ``library``; a label one_hot and an image Cast at
  the top level before the call.
* ``const_data_lstm``: Estimator with an input_fn whose data is a ``Const``
  (no Placeholder, no iterator); dynamic_rnn LSTM with v1 control flow.
* ``unused_gradients``: a normal tf.data training graph plus, after the
  optimizer, ``tf.gradients(loss, x)`` (``gradients_1/``, a saliency map) that
  nothing consumes and the loop never fetches.

Fixed seeds and tiny sizes; every fixture runs a few real training steps. The
``*.expected.json`` answers beside the graphs are written by hand after reading
each graph; this script does not produce them.
"""

import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, os.pardir, "tests", "data", "graphs")


from make_tf_fixtures import _write, fixture_main  # noqa: E402  (the same writer and runner)


# --------------------------------------------------------------------------
# 1. Horovod tensorflow_mnist.py style: label Cast -> one_hot before the model
# --------------------------------------------------------------------------
def make_label_cast_one_hot(out_dir):
    rng = np.random.RandomState(0)
    side = 8  # 8x8 "MNIST" images, flattened like the example's [None, 784]
    xs = rng.rand(8, side * side).astype(np.float32)
    ys = rng.randint(0, 10, size=(8,)).astype(np.float32)  # the example feeds float labels
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        with tf.name_scope("input"):
            image = v1.placeholder(tf.float32, [None, side * side], name="image")
            label = v1.placeholder(tf.float32, [None], name="label")

        def conv_model(feature, target, mode):
            # As the example's conv_model: the one_hot of the labels comes first.
            target = tf.one_hot(tf.cast(target, tf.int32), 10, 1, 0)
            feature = tf.reshape(feature, [-1, side, side, 1])
            with v1.variable_scope("conv_layer1"):
                h = v1.layers.conv2d(feature, 4, [3, 3], activation=tf.nn.relu, padding="SAME")
                h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="SAME")
            h = tf.reshape(h, [-1, (side // 2) * (side // 2) * 4])
            h = v1.layers.dense(h, 8, activation=tf.nn.relu)
            logits = v1.layers.dense(h, 10, activation=None)
            loss = v1.losses.softmax_cross_entropy(target, logits)
            return logits, loss

        _, loss = conv_model(image, label, "TRAIN")
        gs = v1.train.get_or_create_global_step()
        train_op = v1.train.RMSPropOptimizer(0.001).minimize(loss, global_step=gs)
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(2):
            sess.run(train_op, feed_dict={image: xs, label: ys})
    return _write(g, out_dir, "label_cast_one_hot")


# --------------------------------------------------------------------------
# 2. Queue input pipeline of uint8 images, convert_image_dtype, conv -> dense
# --------------------------------------------------------------------------
def make_image_convert_cast(out_dir):
    rng = np.random.RandomState(0)
    images = rng.randint(0, 255, size=(16, 8, 8, 1)).astype(np.uint8)
    labels = rng.randint(0, 4, size=(16,)).astype(np.int32)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        # input_fn
        img, lab = v1.train.slice_input_producer(
            [tf.constant(images), tf.constant(labels)], shuffle=True, seed=3)
        img_b, lab_b = v1.train.batch([img, lab], batch_size=4, capacity=16)
        # model_fn
        x = tf.image.convert_image_dtype(img_b, tf.float32)
        net = v1.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu, name="conv1")
        net = v1.layers.flatten(net, name="flatten")
        logits = v1.layers.dense(net, 4, name="logits")
        loss = v1.losses.sparse_softmax_cross_entropy(labels=lab_b, logits=logits)
        gs = v1.train.get_or_create_global_step()
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        coord = v1.train.Coordinator()
        threads = v1.train.start_queue_runners(sess=sess, coord=coord)
        for _ in range(2):
            sess.run(train_op)
        coord.request_stop()
        coord.join(threads)
    return _write(g, out_dir, "image_convert_cast")


# --------------------------------------------------------------------------
# 3. TF2: the forward pass is a called tf.function inside train_step
# --------------------------------------------------------------------------
def make_tf2_called_function(out_dir):
    tf.random.set_seed(1)
    init = tf.random.stateless_normal
    w1 = tf.Variable(init([6, 8], seed=[1, 2], stddev=0.1), name="dense/kernel")
    b1 = tf.Variable(tf.zeros([8]), name="dense/bias")
    w2 = tf.Variable(init([8, 3], seed=[3, 4], stddev=0.1), name="dense_1/kernel")
    b2 = tf.Variable(tf.zeros([3]), name="dense_1/bias")
    params = [w1, b1, w2, b2]
    opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def forward(x):
        h = tf.nn.relu(tf.matmul(x, w1, name="dense/MatMul") + b1)
        return tf.matmul(h, w2, name="dense_1/MatMul") + b2

    @tf.function
    def train_step(x, y):
        # Top-level ops on the batch, before the call: the label one_hot and the
        # uint8 -> float Cast of the images.
        y1 = tf.one_hot(y, 3)
        xf = tf.cast(x, tf.float32) / 255.0
        with tf.GradientTape() as tape:
            logits = forward(xf)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y1, logits=logits))
        grads = tape.gradient(loss, params)
        opt.apply_gradients(zip(grads, params))
        return loss

    rng = np.random.RandomState(0)
    xs = tf.constant(rng.randint(0, 255, size=(4, 6)).astype(np.uint8))
    ys = tf.constant(rng.randint(0, 3, size=(4,)).astype(np.int32))
    train_step(xs, ys)
    train_step(xs, ys)
    cf = train_step.get_concrete_function(
        tf.TensorSpec([None, 6], tf.uint8, name="x"), tf.TensorSpec([None], tf.int32, name="y"))
    return _write(cf.graph.as_graph_def(), out_dir, "tf2_called_function")


# --------------------------------------------------------------------------
# 4. Estimator, LSTM (v1 while), training data embedded as a Const
# --------------------------------------------------------------------------
def make_const_data_lstm(out_dir):
    v1.disable_control_flow_v2()
    rng = np.random.RandomState(0)
    seqs = rng.rand(4, 5, 3).astype(np.float32)
    labels = rng.randint(0, 2, size=(4,)).astype(np.int32)

    def input_fn():
        # The whole (tiny) training set is one Const: no Placeholder, no iterator.
        x = tf.reshape(tf.constant(seqs.reshape(-1)), [4, 5, 3])
        y = tf.constant(labels)
        return {"x": x}, y

    def model_fn(features, labels, mode):
        cell = v1.nn.rnn_cell.LSTMCell(6)
        _, state = v1.nn.dynamic_rnn(cell, features["x"], dtype=tf.float32)
        logits = v1.layers.dense(state.h, 2, name="logits")
        loss = v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        opt = v1.train.GradientDescentOptimizer(0.1)
        train_op = opt.minimize(loss, global_step=v1.train.get_global_step())
        return v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    model_dir = tempfile.mkdtemp(prefix="est_const_lstm_")
    try:
        cfg = v1.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1,
                                     save_checkpoints_steps=1000,
                                     save_summary_steps=1000, log_step_count_steps=1)
        est = v1.estimator.Estimator(model_fn=model_fn, config=cfg)
        est.train(input_fn, steps=2)
        dst = os.path.join(out_dir, "const_data_lstm.pbtxt")
        shutil.copyfile(os.path.join(model_dir, "graph.pbtxt"), dst)
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)
    v1.enable_control_flow_v2()
    return dst


# --------------------------------------------------------------------------
# 5. A saliency tf.gradients after the optimizer that nothing uses
# --------------------------------------------------------------------------
def make_unused_gradients(out_dir):
    rng = np.random.RandomState(0)
    feats = rng.rand(32, 6).astype(np.float32)
    labels = rng.randint(0, 3, size=(32,)).astype(np.int32)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        ds = tf.data.Dataset.from_tensor_slices((feats, labels)).repeat().batch(4)
        it = v1.data.make_one_shot_iterator(ds)
        x, y = it.get_next()
        h = v1.layers.dense(x, 8, activation=tf.nn.relu, name="dense")
        logits = v1.layers.dense(h, 3, name="dense_1")
        loss = v1.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        # A saliency map d(loss)/d(x), built for a later visualisation and never fetched.
        saliency = tf.gradients(loss, x)[0]
        del saliency
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(2):
            sess.run(train_op)
    return _write(g, out_dir, "unused_gradients")


# Fixtures that change process-wide TF state run in a child process each.
ALL = [
    "label_cast_one_hot", "image_convert_cast", "tf2_called_function", "const_data_lstm",
    "unused_gradients",
]


def main(argv):
    return fixture_main(argv, ALL, globals(), __file__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
