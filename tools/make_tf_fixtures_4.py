#!/usr/bin/env python3
"""Generate the fourth set of TensorFlow graph fixtures (issue 34) in tests/data/graphs/.

Maintainer tool, like make_tf_fixtures.py: neither the project nor its tests
import it, and the project never needs TensorFlow. Run it in a throwaway venv:

    python3.11 -m venv /tmp/tfvenv
    /tmp/tfvenv/bin/pip install tensorflow-cpu==2.15.1
    /tmp/tfvenv/bin/python tools/make_tf_fixtures_4.py [OUT_DIR] [name ...]

OUT_DIR defaults to tests/data/graphs. With names, only those fixtures are
built (names are the function names below without the ``make_``). Each
``<stem>.pbtxt`` gets a binary twin ``<OUT_DIR>/../binary/<stem>.pb``: the
committed text parsed back with ``google.protobuf.text_format`` and written
with ``SerializeToString(deterministic=True)`` (the same GraphDef, node for
node, as tools/make_binary_twins.py makes them). The SavedModel fixtures keep
their ``saved_model.pb`` (no ``variables/``) in ``binary/<stem>/`` instead.

The graphs: feature columns in Estimators (wide & deep, DNN) and in Keras
(DenseFeatures), GANs (one tf.group; TF2 two tapes; TF2 split steps), several
optimizers (actor-critic, A3C workers), SavedModels of a tf.Module and of a
Keras model, MirroredStrategy on two logical CPUs (fit, custom loop), Keras
preprocessing layers (StringLookup, Normalization), dropout with a fed
keep_prob. Fixed seeds and tiny sizes; every training fixture runs a few real
steps. The ``*.expected.json`` answers are written by hand after reading each
graph; this script does not produce them.
"""

import contextlib
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402

v1 = tf.compat.v1

from make_tf_fixtures import _run_steps, _write, fixture_main  # noqa: E402  (the same writer and runner)


def _binary_dir(out_dir):
    return os.path.join(out_dir, os.pardir, "binary")


def _twin(path, out_dir, stem):
    """Write ``binary/<stem>.pb``: the text graph at ``path`` parsed back and serialized."""
    gd = v1.GraphDef()
    with open(path) as f:
        text_format.Parse(f.read(), gd)
    bdir = _binary_dir(out_dir)
    os.makedirs(bdir, exist_ok=True)
    with open(os.path.join(bdir, stem + ".pb"), "wb") as f:
        f.write(gd.SerializeToString(deterministic=True))
    return path


def _write_twins(graph_or_def, out_dir, stem):
    return _twin(_write(graph_or_def, out_dir, stem), out_dir, stem)


def _concrete_graph(fn, *specs):
    return fn.get_concrete_function(*specs).graph.as_graph_def()


# --------------------------------------------------------------------------
# Estimators with feature columns: graph.pbtxt copied from model_dir
# --------------------------------------------------------------------------
N = 16


def _fc_data():
    rng = np.random.RandomState(0)
    feats = {
        "age": rng.randint(18, 70, size=(N,)).astype(np.int64),  # as census data: cast by numeric_column
        "color": rng.choice(["red", "green", "blue"], size=(N,)),
        "city": rng.choice(["paris", "rome", "oslo", "lima"], size=(N,)),
    }
    labels = rng.randint(0, 2, size=(N,)).astype(np.int64)
    return feats, labels


def _fc_columns():
    fc = tf.feature_column
    age = fc.numeric_column("age")
    age_buckets = fc.bucketized_column(age, boundaries=[30.0, 50.0])
    color = fc.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"])
    city = fc.categorical_column_with_vocabulary_list("city", ["paris", "rome", "oslo", "lima"])
    return age, age_buckets, color, city


def _estimator_graph(make_estimator, out_dir, stem):
    feats, labels = _fc_data()

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((feats, labels)).repeat().batch(4)

    model_dir = tempfile.mkdtemp(prefix=stem + "_")
    try:
        cfg = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1,
                                     save_checkpoints_steps=1000,
                                     save_summary_steps=1, log_step_count_steps=1)
        est = make_estimator(cfg)
        est.train(input_fn, steps=2)
        dst = os.path.join(out_dir, stem + ".pbtxt")
        shutil.copyfile(os.path.join(model_dir, "graph.pbtxt"), dst)
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)
    return _twin(dst, out_dir, stem)


def make_dnn_linear_combined_fc(out_dir):
    fc = tf.feature_column
    age, age_buckets, color, city = _fc_columns()
    crossed = fc.crossed_column([color, age_buckets], hash_bucket_size=7)
    wide = [age_buckets, color, crossed]
    deep = [age, fc.indicator_column(color), fc.embedding_column(city, dimension=2)]

    def make(cfg):
        return tf.estimator.DNNLinearCombinedClassifier(
            linear_feature_columns=wide, dnn_feature_columns=deep, dnn_hidden_units=[4],
            config=cfg)

    return _estimator_graph(make, out_dir, "dnn_linear_combined_fc")


def make_dnn_classifier_fc(out_dir):
    fc = tf.feature_column
    age, age_buckets, color, city = _fc_columns()
    cols = [age, age_buckets, fc.indicator_column(color), fc.embedding_column(city, dimension=2)]

    def make(cfg):
        return tf.estimator.DNNClassifier(feature_columns=cols, hidden_units=[4], config=cfg)

    return _estimator_graph(make, out_dir, "dnn_classifier_fc")


# --------------------------------------------------------------------------
# TF1 GAN (DCGAN-tensorflow style): fed z, uint8 images, sampler copy, one tf.group
# --------------------------------------------------------------------------
def make_gan_one_group(out_dir):
    rng = np.random.RandomState(0)
    real = rng.randint(0, 255, size=(4, 8)).astype(np.uint8)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        images = v1.placeholder(tf.uint8, [None, 8], name="real_images")
        z = v1.placeholder(tf.float32, [None, 2], name="z")
        inputs = tf.cast(images, tf.float32)

        def generator(zz, reuse=False):
            with v1.variable_scope("generator", reuse=reuse):
                h = v1.layers.dense(zz, 6, activation=tf.nn.relu, name="g1")
                return v1.layers.dense(h, 8, activation=tf.tanh, name="g2")

        def discriminator(xx, reuse=False):
            with v1.variable_scope("discriminator", reuse=reuse):
                h = v1.layers.dense(xx, 6, activation=tf.nn.leaky_relu, name="d1")
                return v1.layers.dense(h, 1, name="d2")

        fake = generator(z)
        d_real = discriminator(inputs)
        sampler = tf.identity(generator(z, reuse=True), name="sampler")  # for sample images only
        d_fake = discriminator(fake, reuse=True)
        ce = tf.nn.sigmoid_cross_entropy_with_logits
        d_loss = tf.reduce_mean(ce(logits=d_real, labels=tf.ones_like(d_real))) + \
            tf.reduce_mean(ce(logits=d_fake, labels=tf.zeros_like(d_fake)))
        g_loss = tf.reduce_mean(ce(logits=d_fake, labels=tf.ones_like(d_fake)))
        d_vars = v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES, "discriminator")
        g_vars = v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES, "generator")
        d_optim = v1.train.AdamOptimizer(0.001, beta1=0.5).minimize(d_loss, var_list=d_vars, name="d_optim")
        g_optim = v1.train.AdamOptimizer(0.001, beta1=0.5).minimize(g_loss, var_list=g_vars, name="g_optim")
        train_op = tf.group(d_optim, g_optim, name="train_op")
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(2):
            zs = rng.uniform(-1, 1, size=(4, 2)).astype(np.float32)
            sess.run(train_op, feed_dict={images: real, z: zs})
        sess.run(sampler, feed_dict={z: zs})
    return _write_twins(g, out_dir, "gan_one_group")


# --------------------------------------------------------------------------
# TF1 actor-critic: actor/ and critic/ scopes, one Adam each, two train ops
# --------------------------------------------------------------------------
def _mlp(x, units, name):
    with v1.variable_scope(name):
        h = v1.layers.dense(x, 8, activation=tf.nn.relu, name="l1")
        return v1.layers.dense(h, units, name="out")


@contextlib.contextmanager
def _reenter(scope):
    """Back into ``scope``'s variable scope AND its name scope (``actor/``, not ``actor_1/``)."""
    with v1.variable_scope(scope, auxiliary_name_scope=False), tf.name_scope(scope + "/"):
        yield


def make_actor_critic_two_optimizers(out_dir):
    rng = np.random.RandomState(0)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        s = v1.placeholder(tf.float32, [None, 4], name="state")
        a = v1.placeholder(tf.int32, [None], name="action")
        r = v1.placeholder(tf.float32, [None], name="reward")
        v_next = v1.placeholder(tf.float32, [None], name="v_next")
        logits = _mlp(s, 2, "actor")
        value = tf.squeeze(_mlp(s, 1, "critic"), axis=1)
        with _reenter("critic"):
            td_error = r + 0.9 * v_next - value
            critic_loss = tf.reduce_mean(tf.square(td_error))
            critic_train = v1.train.AdamOptimizer(0.01).minimize(
                critic_loss, var_list=v1.trainable_variables("critic"), name="train")
        with _reenter("actor"):
            log_prob = -tf.nn.sparse_softmax_cross_entropy_with_logits(labels=a, logits=logits)
            actor_loss = -tf.reduce_mean(log_prob * tf.stop_gradient(td_error))
            actor_train = v1.train.AdamOptimizer(0.001).minimize(
                actor_loss, var_list=v1.trainable_variables("actor"), name="train")
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(2):
            feed = {s: rng.rand(4, 4), a: rng.randint(0, 2, size=4), r: rng.rand(4), v_next: rng.rand(4)}
            sess.run(critic_train, feed_dict=feed)
            sess.run(actor_train, feed_dict=feed)
    return _write_twins(g, out_dir, "actor_critic_two_optimizers")


# --------------------------------------------------------------------------
# TF1 A3C: global/ network, worker_0/ and worker_1/ copies, each applying its grads to global/
# --------------------------------------------------------------------------
def _ac_network(scope, trainer=None):
    with v1.variable_scope(scope):
        s = v1.placeholder(tf.float32, [None, 4], name="state")
        h = v1.layers.dense(s, 8, activation=tf.nn.relu, name="hidden")
        policy = tf.nn.softmax(v1.layers.dense(h, 2, name="policy"))
        value = tf.squeeze(v1.layers.dense(h, 1, name="value"), axis=1)
        if trainer is None:
            return s, None
        actions = v1.placeholder(tf.int32, [None], name="actions")
        target_v = v1.placeholder(tf.float32, [None], name="target_v")
        advantages = v1.placeholder(tf.float32, [None], name="advantages")
        picked = tf.reduce_sum(policy * tf.one_hot(actions, 2), axis=1)
        loss = 0.5 * tf.reduce_sum(tf.square(target_v - value)) - \
            tf.reduce_sum(tf.math.log(picked + 1e-8) * advantages)
        local_vars = v1.trainable_variables(scope)
        grads = tf.gradients(loss, local_vars)
        grads, _ = tf.clip_by_global_norm(grads, 40.0)
        global_vars = v1.trainable_variables("global")
        apply = trainer.apply_gradients(zip(grads, global_vars), name="apply_grads")
        sync = tf.group(*[lv.assign(gv) for lv, gv in zip(local_vars, global_vars)], name="update_local")
        return (s, actions, target_v, advantages), (apply, sync)


def make_a3c_workers(out_dir):
    rng = np.random.RandomState(0)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        _ac_network("global")
        trainer = v1.train.AdamOptimizer(1e-3)
        workers = [_ac_network("worker_%d" % i, trainer) for i in range(2)]
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(2):
            for phs, (apply, sync) in workers:
                sess.run(sync)
                vals = [rng.rand(4, 4), rng.randint(0, 2, size=4), rng.rand(4), rng.rand(4)]
                sess.run(apply, feed_dict=dict(zip(phs, vals)))
    return _write_twins(g, out_dir, "a3c_workers")


# --------------------------------------------------------------------------
# TF1 MLP with dropout on the input (fed keep_prob) and on the hidden layer (fed rate)
# --------------------------------------------------------------------------
def make_dropout_rate_placeholder(out_dir):
    xs, ys = _xy(8)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        x = v1.placeholder(tf.float32, [None, 6], name="x")
        y = v1.placeholder(tf.float32, [None, 1], name="y")
        kp = v1.placeholder(tf.float32, [], name="keep_prob")
        rate = v1.placeholder_with_default(0.0, [], name="hidden_rate")
        h = v1.nn.dropout(x, keep_prob=kp)
        h = v1.layers.dense(h, 8, activation=tf.nn.relu, name="fc1")
        h = v1.nn.dropout(h, rate=rate)
        logits = v1.layers.dense(h, 1, name="fc2")
        loss = v1.losses.sigmoid_cross_entropy(y, logits)
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = v1.global_variables_initializer()
    _run_steps(g, init, train_op, feed={x: xs, y: ys, kp: 0.8, rate: 0.5})
    return _write_twins(g, out_dir, "dropout_rate_placeholder")


def _xy(n=16):
    rng = np.random.RandomState(0)
    return rng.rand(n, 6).astype(np.float32), rng.randint(0, 2, size=(n, 1)).astype(np.float32)


# --------------------------------------------------------------------------
# TF2 DCGAN-tutorial train step: two GradientTapes, two Keras optimizers
# --------------------------------------------------------------------------
BATCH, NOISE = 4, 2


def _gan_models():
    tf.keras.utils.set_random_seed(1)
    gen = tf.keras.Sequential([
        tf.keras.layers.Dense(6, activation="relu", input_shape=(NOISE,)),
        tf.keras.layers.Dense(8, activation="tanh"),
    ], name="generator")
    disc = tf.keras.Sequential([
        tf.keras.layers.Dense(6, input_shape=(8,)),
        tf.keras.layers.LeakyReLU(),
        tf.keras.layers.Dense(1),
    ], name="discriminator")
    bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)

    def disc_loss_fn(real_out, fake_out):
        return bce(tf.ones_like(real_out), real_out) + bce(tf.zeros_like(fake_out), fake_out)

    def gen_loss_fn(fake_out):
        return bce(tf.ones_like(fake_out), fake_out)

    opts = tf.keras.optimizers.Adam(1e-4), tf.keras.optimizers.Adam(1e-4)
    return gen, disc, gen_loss_fn, disc_loss_fn, opts


def _gan_write(step, out_dir, stem):
    """Run ``step`` twice on a batch of images; write its concrete function's graph."""
    images = tf.constant(np.random.RandomState(0).rand(BATCH, 8).astype(np.float32))
    step(images)
    step(images)
    spec = tf.TensorSpec([BATCH, 8], tf.float32, name="images")
    return _write_twins(_concrete_graph(step, spec), out_dir, stem)


def make_tf2_gan_two_tapes(out_dir):
    gen, disc, gen_loss_fn, disc_loss_fn, (gen_opt, disc_opt) = _gan_models()

    @tf.function
    def train_step(images):
        noise = tf.random.normal([BATCH, NOISE])
        with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
            generated = gen(noise, training=True)
            real_out = disc(images, training=True)
            fake_out = disc(generated, training=True)
            gen_loss = gen_loss_fn(fake_out)
            disc_loss = disc_loss_fn(real_out, fake_out)
        g_grads = gen_tape.gradient(gen_loss, gen.trainable_variables)
        d_grads = disc_tape.gradient(disc_loss, disc.trainable_variables)
        gen_opt.apply_gradients(zip(g_grads, gen.trainable_variables))
        disc_opt.apply_gradients(zip(d_grads, disc.trainable_variables))

    @tf.function
    def outer(images):
        # as tf2_gradient_tape: the top level is a call, the step a library function
        return train_step(images)

    return _gan_write(outer, out_dir, "tf2_gan_two_tapes")


def make_tf2_gan_split_steps(out_dir):
    gen, disc, gen_loss_fn, disc_loss_fn, (gen_opt, disc_opt) = _gan_models()

    @tf.function
    def disc_step(images):
        noise = tf.random.normal([tf.shape(images)[0], NOISE])
        with tf.GradientTape() as tape:
            fake_out = disc(gen(noise, training=True), training=True)
            real_out = disc(images, training=True)
            loss = disc_loss_fn(real_out, fake_out)
        grads = tape.gradient(loss, disc.trainable_variables)
        disc_opt.apply_gradients(zip(grads, disc.trainable_variables))
        return loss

    @tf.function
    def gen_step(batch_size):
        noise = tf.random.normal([batch_size, NOISE])
        with tf.GradientTape() as tape:
            loss = gen_loss_fn(disc(gen(noise, training=True), training=True))
        grads = tape.gradient(loss, gen.trainable_variables)
        gen_opt.apply_gradients(zip(grads, gen.trainable_variables))
        return loss

    @tf.function
    def train(images):
        d_loss = disc_step(images)
        g_loss = gen_step(tf.shape(images)[0])
        return d_loss, g_loss

    return _gan_write(train, out_dir, "tf2_gan_split_steps")


# --------------------------------------------------------------------------
# SavedModels (TF2 tf.saved_model.save): saved_model.pb kept, its graph_def as text
# --------------------------------------------------------------------------
def _saved_model(obj, out_dir, stem, signatures=None):
    """Save ``obj``; keep ``binary/<stem>/saved_model.pb`` (no variables/) and write
    MetaGraph 0's graph_def (top-level nodes + library) as ``<stem>.pbtxt``."""
    from tensorflow.core.protobuf import saved_model_pb2

    tmp = tempfile.mkdtemp(prefix=stem + "_")
    try:
        export = os.path.join(tmp, "export")
        tf.saved_model.save(obj, export, signatures=signatures)
        src = os.path.join(export, "saved_model.pb")
        sm = saved_model_pb2.SavedModel()
        with open(src, "rb") as f:
            sm.ParseFromString(f.read())
        dst_dir = os.path.join(_binary_dir(out_dir), stem)
        os.makedirs(dst_dir, exist_ok=True)
        shutil.copyfile(src, os.path.join(dst_dir, "saved_model.pb"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _write(sm.meta_graphs[0].graph_def, out_dir, stem)


class _TwoDense(tf.Module):
    def __init__(self):
        super().__init__(name="two_dense")
        init = tf.random.stateless_normal
        self.w1 = tf.Variable(init([6, 8], seed=[1, 2], stddev=0.1), name="w1")
        self.b1 = tf.Variable(tf.zeros([8]), name="b1")
        self.w2 = tf.Variable(init([8, 3], seed=[3, 4], stddev=0.1), name="w2")
        self.b2 = tf.Variable(tf.zeros([3]), name="b2")

    @tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
        return tf.matmul(h, self.w2) + self.b2


def make_saved_model_module(out_dir):
    return _saved_model(_TwoDense(), out_dir, "saved_model_module")


def _small_sequential(units=3):
    tf.keras.utils.set_random_seed(1)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
        tf.keras.layers.Dense(units),
    ])


def make_saved_model_keras(out_dir):
    return _saved_model(_small_sequential(), out_dir, "saved_model_keras")


# --------------------------------------------------------------------------
# Keras 2 model.fit graphs (train_tf_function's concrete function, as keras2_fit)
# --------------------------------------------------------------------------
def _fit_graph(model, data, out_dir, stem, **compile_kw):
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                  loss=tf.keras.losses.BinaryCrossentropy(from_logits=True), **compile_kw)
    model.fit(data, epochs=1, steps_per_epoch=2, verbose=0)
    cfs = model.train_tf_function._list_all_concrete_functions()
    return _write_twins(cfs[0].graph.as_graph_def(), out_dir, stem)


def _fc_dataset(keys):
    feats, labels = _fc_data()
    feats = {k: feats[k] for k in keys}
    return tf.data.Dataset.from_tensor_slices((feats, labels.astype(np.float32))).repeat().batch(4)


def make_keras_dense_features(out_dir):
    fc = tf.feature_column
    age, _, _, city = _fc_columns()
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([
        tf.keras.layers.DenseFeatures([age, fc.embedding_column(city, dimension=2)]),
        tf.keras.layers.Dense(4, activation="relu"),
        tf.keras.layers.Dense(1),
    ])
    return _fit_graph(model, _fc_dataset(["age", "city"]), out_dir, "keras_dense_features")


def make_keras_string_lookup(out_dir):
    feats, _ = _fc_data()
    tf.keras.utils.set_random_seed(1)
    city = tf.keras.Input(shape=(1,), dtype=tf.string, name="city")
    num = tf.keras.Input(shape=(1,), dtype=tf.float32, name="age")
    lookup = tf.keras.layers.StringLookup(vocabulary=["paris", "rome", "oslo", "lima"], name="city_lookup")
    emb = tf.keras.layers.Embedding(lookup.vocabulary_size(), 2, name="city_embedding")(lookup(city))
    norm = tf.keras.layers.Normalization(name="age_norm")
    norm.adapt(feats["age"].astype(np.float32).reshape(-1, 1))
    x = tf.keras.layers.Concatenate()([tf.keras.layers.Flatten()(emb), norm(num)])
    x = tf.keras.layers.Dense(4, activation="relu")(x)
    model = tf.keras.Model({"city": city, "age": num}, tf.keras.layers.Dense(1)(x))
    data = _fc_dataset(["age", "city"]).map(
        lambda f, y: ({"city": tf.expand_dims(f["city"], -1),
                       "age": tf.expand_dims(tf.cast(f["age"], tf.float32), -1)}, y))
    return _fit_graph(model, data, out_dir, "keras_string_lookup")


# --------------------------------------------------------------------------
# MirroredStrategy on two logical CPUs
# --------------------------------------------------------------------------
def _mirrored():
    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
    return tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])


def make_mirrored_keras_fit(out_dir):
    strategy = _mirrored()
    xs, ys = _xy()
    with strategy.scope():
        model = _small_sequential(1)
    data = tf.data.Dataset.from_tensor_slices((xs, ys)).repeat().batch(8)
    with strategy.scope():
        return _fit_graph(model, data, out_dir, "mirrored_keras_fit")


def make_mirrored_custom_loop(out_dir):
    strategy = _mirrored()
    xs, ys = _xy()
    with strategy.scope():
        model = _small_sequential(1)
        opt = tf.keras.optimizers.SGD(0.1)
    bce = tf.keras.losses.BinaryCrossentropy(from_logits=True, reduction=tf.keras.losses.Reduction.NONE)
    ds = tf.data.Dataset.from_tensor_slices((xs, ys)).repeat().batch(8)
    it = iter(strategy.experimental_distribute_dataset(ds))

    def step_fn(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = tf.nn.compute_average_loss(bce(y, logits), global_batch_size=8)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def train_step(iterator):
        x, y = next(iterator)
        per_replica = strategy.run(step_fn, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    train_step(it)
    train_step(it)
    cf = train_step._list_all_concrete_functions()[0]
    return _write_twins(cf.graph.as_graph_def(), out_dir, "mirrored_custom_loop")


ALL = [
    "dnn_linear_combined_fc", "dnn_classifier_fc", "gan_one_group", "actor_critic_two_optimizers",
    "a3c_workers", "dropout_rate_placeholder", "tf2_gan_two_tapes", "tf2_gan_split_steps",
    "saved_model_module", "saved_model_keras", "keras_dense_features", "keras_string_lookup",
    "mirrored_keras_fit", "mirrored_custom_loop",
]


def main(argv):
    return fixture_main(argv, ALL, globals(), __file__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
