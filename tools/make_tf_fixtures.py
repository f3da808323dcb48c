#!/usr/bin/env python3
"""Generate the real TensorFlow graph.pbtxt fixtures in tests/data/graphs/.

This script is a maintainer tool. Neither the project nor its tests import it,
and the project never needs TensorFlow. Run it in a throwaway venv:

    python3.11 -m venv /tmp/tfvenv
    /tmp/tfvenv/bin/pip install tensorflow-cpu==2.15.1
    /tmp/tfvenv/bin/python tools/make_tf_fixtures.py [OUT_DIR] [name ...]

OUT_DIR defaults to tests/data/graphs. With names, only those fixtures are
built (names are the function names below without the ``make_`` prefix).

Every fixture is built in a fresh process-level state (a new tf.Graph, fixed
seeds, tiny layer sizes), so the files stay small and reruns give the same
structure. The ``*.expected.json`` answers beside the graphs are written by
hand after reading each graph; this script does not produce them.
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


def _write(graph_or_def, out_dir, stem):
    gd = graph_or_def.as_graph_def() if hasattr(graph_or_def, "as_graph_def") else graph_or_def
    tf.io.write_graph(gd, out_dir, stem + ".pbtxt", as_text=True)
    return os.path.join(out_dir, stem + ".pbtxt")


def _run_steps(graph, init_ops, train_op, steps=2, feed=None):
    with v1.Session(graph=graph) as sess:
        sess.run(init_ops)
        for _ in range(steps):
            sess.run(train_op, feed_dict=feed)


# --------------------------------------------------------------------------
# 1. TF1 tf.data initializable iterator, ref variables, conv + dense, Momentum
# --------------------------------------------------------------------------
def make_tf1_iterator(out_dir):
    rng = np.random.RandomState(0)
    images = rng.randint(0, 255, size=(16, 8, 8, 1)).astype(np.uint8)
    labels = rng.randint(0, 4, size=(16,)).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        v1.disable_resource_variables()
        ds = tf.data.Dataset.from_tensor_slices((images, labels)).repeat().batch(4)
        it = v1.data.make_initializable_iterator(ds)
        x, y = it.get_next()
        # uint8 -> float in the model graph (not in the dataset): runs on the device.
        x = tf.cast(x, tf.float32) / 255.0
        net = v1.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu, name="conv1")
        net = v1.layers.max_pooling2d(net, 2, 2, name="pool1")
        net = v1.layers.flatten(net, name="flatten")
        logits = v1.layers.dense(net, 4, name="logits")
        loss = v1.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        gs = v1.train.get_or_create_global_step()
        train_op = v1.train.MomentumOptimizer(0.01, 0.9).minimize(loss, global_step=gs)
        init = [v1.global_variables_initializer(), it.initializer]
        v1.enable_resource_variables()
    _run_steps(g, init, train_op)
    return _write(g, out_dir, "tf1_iterator")


# --------------------------------------------------------------------------
# 2. Estimator with a queue-based input_fn; graph.pbtxt taken from model_dir
# --------------------------------------------------------------------------
def make_estimator_queue(out_dir):
    rng = np.random.RandomState(0)
    feats = rng.rand(32, 6).astype(np.float32)
    labels = rng.randint(0, 3, size=(32,)).astype(np.int32)

    def input_fn():
        x_in, y_in = v1.train.slice_input_producer(
            [tf.constant(feats), tf.constant(labels)], shuffle=True, seed=3)
        xb, yb = v1.train.batch([x_in, y_in], batch_size=4, capacity=16)
        return {"x": xb}, yb

    def model_fn(features, labels, mode):
        h = v1.layers.dense(features["x"], 8, activation=tf.nn.relu, name="hidden")
        logits = v1.layers.dense(h, 3, name="logits")
        loss = v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        opt = v1.train.GradientDescentOptimizer(0.1)
        train_op = opt.minimize(loss, global_step=v1.train.get_global_step())
        return v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    model_dir = tempfile.mkdtemp(prefix="est_queue_")
    try:
        cfg = v1.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1,
                                     save_checkpoints_steps=1000,
                                     save_summary_steps=1, log_step_count_steps=1)
        est = v1.estimator.Estimator(model_fn=model_fn, config=cfg)
        est.train(input_fn, steps=2)
        dst = os.path.join(out_dir, "estimator_queue.pbtxt")
        shutil.copyfile(os.path.join(model_dir, "graph.pbtxt"), dst)
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)
    return dst


# --------------------------------------------------------------------------
# 3. Resource variables not named kernel, embedding lookup, Adam
# --------------------------------------------------------------------------
def make_resource_vars(out_dir):
    rng = np.random.RandomState(0)
    ids = rng.randint(0, 20, size=(32, 5)).astype(np.int32)
    target = rng.rand(32, 1).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        ds = tf.data.Dataset.from_tensor_slices((ids, target)).repeat().batch(8)
        it = v1.data.make_one_shot_iterator(ds)
        tok, y = it.get_next()
        emb_table = v1.get_variable("emb_table", [20, 4], use_resource=True,
                                    initializer=v1.random_normal_initializer(stddev=0.1))
        W = v1.get_variable("W", [4, 6], use_resource=True,
                            initializer=v1.glorot_uniform_initializer())
        with v1.variable_scope("out"):
            weights = v1.get_variable("weights", [6, 1], use_resource=True,
                                      initializer=v1.truncated_normal_initializer(stddev=0.1))
            biases = v1.get_variable("biases", [1], use_resource=True,
                                     initializer=v1.zeros_initializer())
        e = tf.nn.embedding_lookup(emb_table, tok)
        pooled = tf.reduce_mean(e, axis=1)
        h = tf.nn.tanh(tf.matmul(pooled, W))
        pred = tf.matmul(h, weights) + biases
        loss = tf.reduce_mean(tf.square(pred - y))
        train_op = v1.train.AdamOptimizer(0.01).minimize(loss)
        init = v1.global_variables_initializer()
    _run_steps(g, init, train_op)
    return _write(g, out_dir, "resource_vars")


# --------------------------------------------------------------------------
# 4. tf.compat.v1 Keras in graph mode (eager disabled), compile + train_on_batch
# --------------------------------------------------------------------------
def make_keras_style(out_dir):
    # disable_eager_execution is process wide; run this fixture in its own process.
    v1.disable_eager_execution()
    v1.set_random_seed(1)
    rng = np.random.RandomState(0)
    xs = rng.rand(16, 6).astype(np.float32)
    ys = rng.randint(0, 3, size=(16,)).astype(np.int32)
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
        tf.keras.layers.Dense(3),
    ])
    # The string "adam" resolves to keras' legacy (OptimizerV2) Adam in graph mode, which
    # names its gradients training/Adam/gradients/gradients/... like TF 1.15-2.x Keras did.
    model.compile(optimizer="adam",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.train_on_batch(xs, ys)
    model.train_on_batch(xs, ys)
    g = v1.keras.backend.get_session().graph
    return _write(g, out_dir, "keras_style")


# --------------------------------------------------------------------------
# 5. dynamic_rnn (LSTM) with TF1 control flow (v1 while loop)
# --------------------------------------------------------------------------
def make_rnn_while(out_dir):
    v1.disable_control_flow_v2()
    rng = np.random.RandomState(0)
    seqs = rng.rand(16, 5, 3).astype(np.float32)
    labels = rng.randint(0, 2, size=(16,)).astype(np.int32)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        ds = tf.data.Dataset.from_tensor_slices((seqs, labels)).repeat().batch(4)
        it = v1.data.make_one_shot_iterator(ds)
        x, y = it.get_next()
        cell = v1.nn.rnn_cell.LSTMCell(6)
        outputs, state = v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        logits = v1.layers.dense(state.h, 2, name="logits")
        loss = v1.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = v1.global_variables_initializer()
    _run_steps(g, init, train_op)
    v1.enable_control_flow_v2()
    return _write(g, out_dir, "rnn_while")


# --------------------------------------------------------------------------
# 6. GAN: two optimizers => gradients/ and gradients_1/, grad histograms, tf.tuple
# --------------------------------------------------------------------------
def make_gan_two_optimizers(out_dir):
    rng = np.random.RandomState(0)
    real = rng.rand(32, 8).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        ds = tf.data.Dataset.from_tensor_slices(real).repeat().batch(4)
        it = v1.data.make_one_shot_iterator(ds)
        x_real = it.get_next()
        z = v1.random_normal([4, 2], name="noise")

        def generator(zz):
            with v1.variable_scope("generator"):
                h = v1.layers.dense(zz, 6, activation=tf.nn.relu, name="g1")
                return v1.layers.dense(h, 8, name="g2")

        def discriminator(xx, reuse):
            with v1.variable_scope("discriminator", reuse=reuse):
                h = v1.layers.dense(xx, 6, activation=tf.nn.leaky_relu, name="d1")
                return v1.layers.dense(h, 1, name="d2")

        fake = generator(z)
        d_real = discriminator(x_real, reuse=False)
        d_fake = discriminator(fake, reuse=True)
        ce = tf.nn.sigmoid_cross_entropy_with_logits
        d_loss = tf.reduce_mean(ce(labels=tf.ones_like(d_real), logits=d_real)) + \
            tf.reduce_mean(ce(labels=tf.zeros_like(d_fake), logits=d_fake))
        g_loss = tf.reduce_mean(ce(labels=tf.ones_like(d_fake), logits=d_fake))
        d_vars = v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES, "discriminator")
        g_vars = v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES, "generator")
        gs = v1.train.get_or_create_global_step()

        def train(loss, var_list, name):
            opt = v1.train.AdamOptimizer(0.001, beta1=0.5, name=name)
            gv = opt.compute_gradients(loss, var_list=var_list)
            grads = [gr for gr, _ in gv]
            clipped, _ = tf.clip_by_global_norm(grads, 5.0)
            clipped = tf.tuple(clipped)
            for gr, var in zip(clipped, var_list):
                v1.summary.histogram(var.op.name + "/gradients", gr)
            return opt.apply_gradients(list(zip(clipped, var_list)), global_step=gs)

        d_train = train(d_loss, d_vars, "d_adam")
        g_train = train(g_loss, g_vars, "g_adam")
        v1.summary.scalar("d_loss", d_loss)
        v1.summary.scalar("g_loss", g_loss)
        merged = v1.summary.merge_all()
        train_op = tf.group(d_train, g_train, name="train_op")
        init = v1.global_variables_initializer()
    _run_steps(g, init, [train_op, merged])
    return _write(g, out_dir, "gan_two_optimizers")


# --------------------------------------------------------------------------
# 7. gradients inside a name scope: train_op/gradients/..., clipping, global_step
# --------------------------------------------------------------------------
def make_nested_train_op(out_dir):
    rng = np.random.RandomState(0)
    feats = rng.rand(32, 5).astype(np.float32)
    target = rng.rand(32, 1).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        gs = v1.train.get_or_create_global_step()
        ds = tf.data.Dataset.from_tensor_slices((feats, target)).shuffle(32, seed=2).repeat().batch(8)
        it = v1.data.make_one_shot_iterator(ds)
        x, y = it.get_next()
        with v1.variable_scope("model"):
            h = v1.layers.dense(x, 8, activation=tf.nn.relu, name="fc1")
            pred = v1.layers.dense(h, 1, name="fc2")
        loss = v1.losses.mean_squared_error(y, pred)
        with tf.name_scope("train_op"):
            lr = v1.train.exponential_decay(0.1, gs, 100, 0.9)
            opt = v1.train.MomentumOptimizer(lr, 0.9)
            gv = opt.compute_gradients(loss)
            grads, tvars = zip(*gv)
            grads, _ = tf.clip_by_global_norm(grads, 1.0)
            train_op = opt.apply_gradients(zip(grads, tvars), global_step=gs)
        init = v1.global_variables_initializer()
    _run_steps(g, init, train_op)
    return _write(g, out_dir, "nested_train_op")


# --------------------------------------------------------------------------
# 8. TF2 tf.function + GradientTape; forward/backward live in library.function
# --------------------------------------------------------------------------
def make_tf2_gradient_tape(out_dir):
    tf.random.set_seed(1)
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
        tf.keras.layers.Dense(3),
    ])
    opt = tf.keras.optimizers.SGD(0.1)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def outer(x, y):
        # A wrapper so the written graph's top level is a call node and the step
        # itself lives in library { function { ... } }.
        return train_step(x, y)

    rng = np.random.RandomState(0)
    xs = tf.constant(rng.rand(4, 6).astype(np.float32))
    ys = tf.constant(rng.randint(0, 3, size=(4,)).astype(np.int32))
    outer(xs, ys)
    outer(xs, ys)
    cf = outer.get_concrete_function(
        tf.TensorSpec([None, 6], tf.float32, name="x"), tf.TensorSpec([None], tf.int32, name="y"))
    return _write(cf.graph.as_graph_def(), out_dir, "tf2_gradient_tape")


# --------------------------------------------------------------------------
# Extra A: conv net with BatchNorm (FusedBatchNormV3 / FusedBatchNormGradV3)
# --------------------------------------------------------------------------
def make_batchnorm_conv(out_dir):
    rng = np.random.RandomState(0)
    images = rng.rand(16, 8, 8, 3).astype(np.float32)
    labels = rng.randint(0, 4, size=(16,)).astype(np.int32)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        ds = tf.data.Dataset.from_tensor_slices((images, labels)).repeat().batch(4)
        it = v1.data.make_one_shot_iterator(ds)
        x, y = it.get_next()
        net = v1.layers.conv2d(x, 4, 3, padding="same", use_bias=False, name="conv1")
        net = v1.layers.batch_normalization(net, training=True, fused=True, name="bn1")
        net = tf.nn.relu(net)
        net = v1.layers.conv2d(net, 4, 3, strides=2, padding="same", use_bias=False, name="conv2")
        net = v1.layers.batch_normalization(net, training=True, fused=True, name="bn2")
        net = tf.nn.relu(net)
        net = tf.reduce_mean(net, axis=[1, 2])
        logits = v1.layers.dense(net, 4, name="fc")
        loss = v1.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        gs = v1.train.get_or_create_global_step()
        update_ops = v1.get_collection(v1.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = v1.train.MomentumOptimizer(0.01, 0.9).minimize(loss, global_step=gs)
        init = v1.global_variables_initializer()
    _run_steps(g, init, train_op)
    return _write(g, out_dir, "batchnorm_conv")


# --------------------------------------------------------------------------
# Extra B: Placeholder-fed graph (feed_dict, no dataset), dropout keep_prob
# --------------------------------------------------------------------------
def make_placeholder_feed(out_dir):
    rng = np.random.RandomState(0)
    xs = rng.rand(8, 6).astype(np.float32)
    ys = rng.randint(0, 3, size=(8,)).astype(np.int64)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        lr = v1.placeholder_with_default(0.05, [], name="learning_rate")
        keep_prob = v1.placeholder(tf.float32, [], name="keep_prob")
        x = v1.placeholder(tf.float32, [None, 6], name="x")
        y = v1.placeholder(tf.int64, [None], name="y")
        w1 = v1.Variable(v1.truncated_normal([6, 8], stddev=0.1), name="w1")
        b1 = v1.Variable(tf.zeros([8]), name="b1")
        w2 = v1.Variable(v1.truncated_normal([8, 3], stddev=0.1), name="w2")
        b2 = v1.Variable(tf.zeros([3]), name="b2")
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        h = v1.nn.dropout(h, keep_prob=keep_prob)
        logits = tf.matmul(h, w2) + b2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train_op = v1.train.GradientDescentOptimizer(lr).minimize(loss)
        init = v1.global_variables_initializer()
    _run_steps(g, init, train_op, feed={x: xs, y: ys, keep_prob: 0.9})
    return _write(g, out_dir, "placeholder_feed")


# Fixtures that change process-wide TF state run in a child process each.
ALL = [
    "tf1_iterator", "estimator_queue", "resource_vars", "keras_style", "rnn_while",
    "gan_two_optimizers", "nested_train_op", "tf2_gradient_tape", "batchnorm_conv",
    "placeholder_feed",
]


def fixture_main(argv, all_names, makers, script):
    """Build the fixtures named in ``argv`` (``OUT_DIR [name ...]``; default: ``all_names``) with
    the ``make_<name>`` functions in ``makers``. Several names: one child process of ``script``
    each, since eager, control-flow and resource-variable switches are process-wide."""
    out_dir = os.path.abspath(argv[1] if len(argv) > 1 else DEFAULT_OUT)
    names = argv[2:] or all_names
    os.makedirs(out_dir, exist_ok=True)
    if len(names) == 1:
        path = makers["make_" + names[0]](out_dir)
        print("%s %d bytes" % (os.path.relpath(path), os.path.getsize(path)))
        return 0
    import subprocess
    rc = 0
    for name in names:
        rc |= subprocess.call([sys.executable, os.path.abspath(script), out_dir, name])
    return rc


def main(argv):
    return fixture_main(argv, ALL, globals(), __file__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
