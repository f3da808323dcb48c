#!/usr/bin/env python3
"""Generate the third set (A) of TensorFlow graph fixtures in tests/data/graphs/ (issue 19).

Maintainer tool, like make_tf_fixtures.py: neither the project nor its tests
import it, and the project never needs TensorFlow. Run it in a throwaway venv:

    python3.11 -m venv /tmp/tfvenv_a
    /tmp/tfvenv_a/bin/pip install tensorflow-cpu==2.15.1
    /tmp/tfvenv_a/bin/python tools/make_tf_fixtures_3a.py [OUT_DIR] [name ...]

OUT_DIR defaults to tests/data/graphs. With names, only those fixtures are
built (names are the function names below without the ``make_`` prefix).

All five are TF1-style graphs (tf.compat.v1, graph mode) whose first op fed by
the data source is NOT the fp an expert picks:

* ``bert_unused_feature``: run_classifier.py's model_fn casts ``is_real_example``
  before building BERT and never uses it in TRAIN mode (its input_fn and
  model_fn, run in a Session without the Estimator to keep the file small).
* ``staging_prefetch``: FIFOQueue -> QueueDequeueManyV2 -> Transpose* -> StagingArea
  put; the step reads the StagingArea get (Unstage).
* ``global_local_copies``: A3C's global/ and local/ copies of one network.
* ``train_eval_copies``: eval and train copies sharing variables, each with its own
  tf.data iterator; the eval copy is built first.
* ``ctc_label_conversion``: the dense -> sparse label conversion (Max, sequence_mask,
  Where, GatherNd) is built before the CTC model.

Fixed seeds and tiny sizes; every fixture runs a few real training steps. The
``*.expected.json`` answers beside the graphs are written by hand after reading
each graph; this script does not produce them.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, os.pardir, "tests", "data", "graphs")


from make_tf_fixtures import _write, fixture_main  # noqa: E402  (the same writer and runner)


# --------------------------------------------------------------------------
# 1. BERT run_classifier.py fine-tune: is_real_example cast and never used in TRAIN
# --------------------------------------------------------------------------
VOCAB, TYPES, SEQ, HID, HEADS, LABELS = 30, 2, 6, 8, 2, 2


def _layer_norm(x, name):
    # modeling.layer_norm: tf.contrib.layers.layer_norm over the last axis.
    with v1.variable_scope(name):
        beta = v1.get_variable("beta", [HID], initializer=v1.zeros_initializer())
        gamma = v1.get_variable("gamma", [HID], initializer=v1.ones_initializer())
        mean, var = tf.nn.moments(x, [-1], keepdims=True)
        return tf.nn.batch_normalization(x, mean, var, beta, gamma, 1e-12)


def _dense(x, units, name, activation=None):
    init = v1.truncated_normal_initializer(stddev=0.02)
    return v1.layers.dense(x, units, activation=activation, name=name, kernel_initializer=init)


def _bert(input_ids, input_mask, segment_ids, batch):
    """modeling.BertModel with one attention layer, in its scopes (embeddings, encoder, pooler)."""
    init = v1.truncated_normal_initializer(stddev=0.02)
    with v1.variable_scope("bert"):
        with v1.variable_scope("embeddings"):
            # modeling.embedding_lookup (use_one_hot_embeddings=False): tf.gather
            ids = tf.expand_dims(input_ids, axis=[-1])
            table = v1.get_variable("word_embeddings", [VOCAB, HID], initializer=init)
            flat = tf.reshape(ids, [-1])
            out = tf.gather(table, flat)
            out = tf.reshape(out, [batch, SEQ, HID])
            # modeling.embedding_postprocessor: token type one_hot matmul + positions
            tt_table = v1.get_variable("token_type_embeddings", [TYPES, HID], initializer=init)
            flat_tt = tf.reshape(segment_ids, [-1])
            one_hot = tf.one_hot(flat_tt, depth=TYPES)
            tt = tf.reshape(tf.matmul(one_hot, tt_table), [batch, SEQ, HID])
            out += tt
            pos_table = v1.get_variable("position_embeddings", [16, HID], initializer=init)
            pos = tf.slice(pos_table, [0, 0], [SEQ, -1])
            out += tf.reshape(pos, [1, SEQ, HID])
            emb = _layer_norm(out, "LayerNorm")
        with v1.variable_scope("encoder"):
            # create_attention_mask_from_input_mask
            to_mask = tf.cast(tf.reshape(input_mask, [batch, 1, SEQ]), tf.float32)
            mask = tf.ones([batch, SEQ, 1], tf.float32) * to_mask
            x2 = tf.reshape(emb, [-1, HID])
            with v1.variable_scope("layer_0"):
                with v1.variable_scope("attention"):
                    with v1.variable_scope("self"):
                        size = HID // HEADS

                        def heads(t):
                            t = tf.reshape(t, [batch, SEQ, HEADS, size])
                            return tf.transpose(t, [0, 2, 1, 3])

                        q = heads(_dense(x2, HID, "query"))
                        k = heads(_dense(x2, HID, "key"))
                        v = heads(_dense(x2, HID, "value"))
                        scores = tf.matmul(q, k, transpose_b=True) * (1.0 / np.sqrt(size))
                        adder = (1.0 - tf.expand_dims(mask, 1)) * -10000.0
                        probs = tf.nn.softmax(scores + adder)
                        ctx = tf.transpose(tf.matmul(probs, v), [0, 2, 1, 3])
                        ctx = tf.reshape(ctx, [-1, HID])
                    with v1.variable_scope("output"):
                        att = _layer_norm(_dense(ctx, HID, "dense") + x2, "LayerNorm")
                # (the intermediate/output feed-forward sublayer is left out: file size)
            seq_out = tf.reshape(att, [batch, SEQ, HID])
        with v1.variable_scope("pooler"):
            first = tf.squeeze(seq_out[:, 0:1, :], axis=1)
            return _dense(first, HID, "dense", activation=tf.tanh)


def make_bert_unused_feature(out_dir):
    rng = np.random.RandomState(0)
    n, batch = 16, 4
    feats = {
        "input_ids": rng.randint(0, VOCAB, size=(n, SEQ)).astype(np.int32),
        "input_mask": np.ones((n, SEQ), np.int32),
        "segment_ids": rng.randint(0, TYPES, size=(n, SEQ)).astype(np.int32),
        "label_ids": rng.randint(0, LABELS, size=(n,)).astype(np.int32),
        "is_real_example": np.ones((n,), np.int32),
    }

    def input_fn(params):
        # run_classifier.input_fn_builder (file_based_input_fn_builder without TFRecords)
        d = tf.data.Dataset.from_tensor_slices(feats)
        d = d.repeat().shuffle(buffer_size=16, seed=3)
        return d.batch(batch, drop_remainder=True)

    def model_fn(features, labels, mode, params):
        input_ids = features["input_ids"]
        input_mask = features["input_mask"]
        segment_ids = features["segment_ids"]
        label_ids = features["label_ids"]
        is_real_example = None
        if "is_real_example" in features:
            is_real_example = tf.cast(features["is_real_example"], dtype=tf.float32)
        else:
            is_real_example = tf.ones(tf.shape(label_ids), dtype=tf.float32)
        # create_model
        pooled = _bert(input_ids, input_mask, segment_ids, batch)
        w = v1.get_variable("output_weights", [LABELS, HID],
                            initializer=v1.truncated_normal_initializer(stddev=0.02))
        b = v1.get_variable("output_bias", [LABELS], initializer=v1.zeros_initializer())
        with v1.variable_scope("loss"):
            logits = tf.nn.bias_add(tf.matmul(pooled, w, transpose_b=True), b)
            log_probs = tf.nn.log_softmax(logits, axis=-1)
            one_hot_labels = tf.one_hot(label_ids, depth=LABELS, dtype=tf.float32)
            per_example_loss = -tf.reduce_sum(one_hot_labels * log_probs, axis=-1)
            loss = tf.reduce_mean(per_example_loss)
        assert mode == tf.estimator.ModeKeys.TRAIN  # is_real_example only feeds eval metrics
        del is_real_example
        # optimization.create_optimizer (Adam instead of AdamWeightDecayOptimizer)
        gs = v1.train.get_or_create_global_step()
        tvars = v1.trainable_variables()
        grads = tf.gradients(loss, tvars)
        grads, _ = tf.clip_by_global_norm(grads, clip_norm=1.0)
        opt = v1.train.AdamOptimizer(learning_rate=1e-3, epsilon=1e-6)
        train_op = opt.apply_gradients(zip(grads, tvars), global_step=gs)
        return v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    # The Estimator's train loop without the Estimator (no saver, summaries or
    # report_uninitialized_variables: the graph stays small): input_fn -> model_fn.
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        v1.disable_resource_variables()  # BERT's TF1 code: ref variables, tf.gather -> GatherV2
        features = v1.data.make_one_shot_iterator(input_fn({})).get_next()
        spec = model_fn(features, None, tf.estimator.ModeKeys.TRAIN, {})
        init = v1.global_variables_initializer()
        v1.enable_resource_variables()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(2):
            sess.run(spec.train_op)
    return _write(g, out_dir, "bert_unused_feature")


# --------------------------------------------------------------------------
# 2. Queue -> Transpose -> StagingArea put; the step reads the StagingArea get
# --------------------------------------------------------------------------
def make_staging_prefetch(out_dir):
    from tensorflow.python.ops import data_flow_ops

    rng = np.random.RandomState(0)
    n, B, T, F, A = 32, 4, 3, 5, 3
    obs = rng.rand(n, T, F).astype(np.float32)
    actions = rng.randint(0, A, size=(n, T)).astype(np.int32)
    rewards = rng.rand(n, T).astype(np.float32)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        with tf.name_scope("input"):
            q = v1.FIFOQueue(64, [tf.float32, tf.int32, tf.float32],
                             shapes=[[T, F], [T], [T]], name="unroll_queue")
            enqueue = q.enqueue_many([obs, actions, rewards])
            b_obs, b_act, b_rew = q.dequeue_many(B)
            # batch-major -> time-major for the learner (IMPALA's nest.map_structure transpose)
            t_obs = tf.transpose(b_obs, [1, 0, 2])
            t_act = tf.transpose(b_act, [1, 0])
            t_rew = tf.transpose(b_rew, [1, 0])
        with tf.device("/cpu:0"):
            area = data_flow_ops.StagingArea([tf.float32, tf.int32, tf.float32],
                                             shapes=[[T, B, F], [T, B], [T, B]])
            stage_op = area.put([t_obs, t_act, t_rew])
            s_obs, s_act, s_rew = area.get()
        with v1.variable_scope("agent"):
            flat = tf.reshape(s_obs, [T * B, F])
            h = v1.layers.dense(flat, 8, activation=tf.nn.relu, name="torso")
            logits = v1.layers.dense(h, A, name="policy_logits")
        xent = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(s_act, [T * B]), logits=logits)
        loss = tf.reduce_mean(xent * tf.reshape(s_rew, [T * B]))
        gs = v1.train.get_or_create_global_step()
        train_op = v1.train.RMSPropOptimizer(0.01).minimize(loss, global_step=gs)
        # tf_cnn_benchmarks: the step also puts the next batch into the staging area
        step = tf.group(train_op, stage_op)
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        sess.run(enqueue)
        sess.run(stage_op)  # warm-up put before the loop
        for _ in range(3):
            sess.run(step)
    return _write(g, out_dir, "staging_prefetch")


# --------------------------------------------------------------------------
# 3. A3C: global/ and local/ copies of one network; only local/ is trained
# --------------------------------------------------------------------------
def _ac_network(scope, n_in, n_act, trainer=None):
    """The worker's AC_Network in the A3C idiom; scope 'global' builds no loss."""
    with v1.variable_scope(scope):
        state = v1.placeholder(tf.float32, [None, n_in])
        hidden = v1.layers.dense(state, 8, activation=tf.nn.elu, name="hidden")
        policy = tf.nn.softmax(v1.layers.dense(hidden, n_act, name="policy"))
        value = v1.layers.dense(hidden, 1, name="value")
        if trainer is None:
            return state, None, None
        actions = v1.placeholder(tf.int32, [None])
        target_v = v1.placeholder(tf.float32, [None])
        advantages = v1.placeholder(tf.float32, [None])
        onehot = tf.one_hot(actions, n_act, dtype=tf.float32)
        resp = tf.reduce_sum(policy * onehot, [1])
        value_loss = 0.5 * tf.reduce_sum(tf.square(target_v - tf.reshape(value, [-1])))
        entropy = -tf.reduce_sum(policy * tf.math.log(policy + 1e-8))
        policy_loss = -tf.reduce_sum(tf.math.log(resp + 1e-8) * advantages)
        loss = 0.5 * value_loss + policy_loss - 0.01 * entropy
        local_vars = v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES, scope)
        grads = tf.gradients(loss, local_vars)
        grads, _ = tf.clip_by_global_norm(grads, 40.0)
        global_vars = v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES, "global")
        apply_grads = trainer.apply_gradients(zip(grads, global_vars))
        return state, (actions, target_v, advantages), apply_grads


def make_global_local_copies(out_dir):
    rng = np.random.RandomState(0)
    n_in, n_act, B = 4, 3, 5
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        trainer = v1.train.AdamOptimizer(1e-3)
        _ac_network("global", n_in, n_act)  # master copy, built first, never fed in the step
        state, (act, tv, adv), apply_grads = _ac_network("local", n_in, n_act, trainer)
        # update_target_graph("global", "local")
        sync = tf.group(*[l.assign(gv) for gv, l in zip(
            v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES, "global"),
            v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES, "local"))], name="update_local_ops")
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(sync)
            feed = {state: rng.rand(B, n_in).astype(np.float32),
                    act: rng.randint(0, n_act, size=B), tv: rng.rand(B).astype(np.float32),
                    adv: rng.rand(B).astype(np.float32)}
            sess.run(apply_grads, feed_dict=feed)
    return _write(g, out_dir, "global_local_copies")


# --------------------------------------------------------------------------
# 4. Eval and train copies sharing variables, each with its own iterator; eval first
# --------------------------------------------------------------------------
def _classifier(x):
    net = v1.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu, name="conv1")
    net = v1.layers.flatten(net, name="flatten")
    return v1.layers.dense(net, 3, name="logits")


def make_train_eval_copies(out_dir):
    rng = np.random.RandomState(0)
    tr_x = rng.rand(16, 6, 6, 1).astype(np.float32)
    tr_y = rng.randint(0, 3, size=(16,)).astype(np.int32)
    ev_x = rng.rand(8, 6, 6, 1).astype(np.float32)
    ev_y = rng.randint(0, 3, size=(8,)).astype(np.int32)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        # ptb_word_lm style: name_scope per copy, one variable_scope shared by reuse
        with tf.name_scope("Eval"):
            ds = tf.data.Dataset.from_tensor_slices((ev_x, ev_y)).repeat().batch(4)
            ex, ey = v1.data.make_one_shot_iterator(ds).get_next()
            with v1.variable_scope("Model", reuse=None):
                elogits = _classifier(ex)
            eacc = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(elogits, 1, output_type=tf.int32), ey),
                                          tf.float32))
        with tf.name_scope("Train"):
            ds = tf.data.Dataset.from_tensor_slices((tr_x, tr_y)).repeat().shuffle(16, seed=3).batch(4)
            tx, ty = v1.data.make_one_shot_iterator(ds).get_next()
            with v1.variable_scope("Model", reuse=True):
                tlogits = _classifier(tx)
            loss = v1.losses.sparse_softmax_cross_entropy(labels=ty, logits=tlogits)
            gs = v1.train.get_or_create_global_step()
            train_op = v1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(train_op)
        sess.run(eacc)
    return _write(g, out_dir, "train_eval_copies")


# --------------------------------------------------------------------------
# 5. CTC: dense labels -> SparseTensor built before the model
# --------------------------------------------------------------------------
def make_ctc_label_conversion(out_dir):
    rng = np.random.RandomState(0)
    B, T, F, L, C = 4, 8, 5, 3, 4  # C classes incl. the blank (last)
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        feats = v1.placeholder(tf.float32, [None, T, F], name="features")
        feat_len = v1.placeholder(tf.int32, [None], name="feature_lengths")
        labels = v1.placeholder(tf.int32, [None, L], name="labels")
        label_len = v1.placeholder(tf.int32, [None], name="label_lengths")
        with tf.name_scope("dense_to_sparse"):
            max_len = tf.reduce_max(label_len)
            mask = tf.sequence_mask(label_len, max_len)
            idx = tf.where(mask)
            vals = tf.gather_nd(labels[:, :max_len], idx)
            shape = tf.cast(tf.stack([tf.shape(labels)[0], max_len]), tf.int64)
            sparse_labels = tf.SparseTensor(idx, vals, shape)
        net = v1.layers.conv1d(feats, 8, 3, padding="same", activation=tf.nn.relu, name="conv1d")
        net = v1.layers.conv1d(net, C, 1, name="logits")  # per-frame dense projection
        logits_tm = tf.transpose(net, [1, 0, 2])  # time-major for ctc_loss
        loss = tf.reduce_mean(v1.nn.ctc_loss(sparse_labels, logits_tm, feat_len))
        train_op = v1.train.AdamOptimizer(1e-2).minimize(loss)
        init = v1.global_variables_initializer()
    feed = {feats: rng.rand(B, T, F).astype(np.float32),
            feat_len: np.full((B,), T, np.int32),
            labels: rng.randint(0, C - 1, size=(B, L)).astype(np.int32),
            label_len: np.array([3, 2, 3, 1], np.int32)}
    with v1.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(2):
            sess.run(train_op, feed_dict=feed)
    return _write(g, out_dir, "ctc_label_conversion")


# Fixtures that change process-wide TF state run in a child process each.
ALL = [
    "bert_unused_feature", "staging_prefetch", "global_local_copies", "train_eval_copies",
    "ctc_label_conversion",
]


def main(argv):
    return fixture_main(argv, ALL, globals(), __file__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
