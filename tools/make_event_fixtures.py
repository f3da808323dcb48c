#!/usr/bin/env python3
"""Generate the TensorBoard event-file fixtures in tests/data/events/ (issue 23).

Maintainer tool, like make_tf_fixtures*.py: neither the project nor its tests
import it, and the project never needs TensorFlow. Two throwaway venvs:

    python3.11 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install \
        tensorflow-cpu==2.15.1 tensorflow-estimator==2.15.0
    python3.11 -m venv /tmp/tfvenv216 && /tmp/tfvenv216/bin/pip install \
        tensorflow-cpu==2.16.2 keras==3.15.1
    /tmp/tfvenv/bin/python    tools/make_event_fixtures.py OUT_DIR v1_filewriter v1_forward_only \
                                                           estimator tf_keras_callback trace_export
    /tmp/tfvenv216/bin/python tools/make_event_fixtures.py OUT_DIR keras3_callback
    /tmp/tfvenv/bin/python    tools/make_event_fixtures.py OUT_DIR --fields   # the README table

OUT_DIR defaults to tests/data/events. Each case is made in its own process
(fresh graph names) into OUT_DIR/<case>/, which is emptied first.

* ``v1_filewriter``: a TF1 graph-mode MLP (placeholders, dense, softmax
  cross-entropy, GradientDescent), ``tf.compat.v1.summary.FileWriter(logdir,
  sess.graph)``, a scalar and two histograms added per step. ``graph.pbtxt``
  is the GraphDef read back from the event file (checked equal to what the
  session's graph gives).
* ``v1_forward_only``: the same without labels, loss or optimizer.
* ``estimator``: ``tf.estimator.Estimator``, ``train`` twice, ``evaluate``
  once. The model_dir's own ``graph.pbtxt`` is kept; checkpoints are removed.
* ``tf_keras_callback``: TF 2.15's ``tf.keras`` (Keras 2.15) TensorBoard
  callback, ``write_graph=True``, ``fit`` with validation data, verbose=1.
  ``train_graph.pbtxt`` is the GraphDef of its graph record.
* ``trace_export``: ``tf.summary.trace_on(graph=True)`` around one call of a
  ``tf.function`` train step, ``trace_export``; ``function_graph_<i>.pbtxt``
  are the RunMetadata's ``function_graphs[i].pre_optimization_graph``.
* ``keras3_callback``: Keras 3's TensorBoard callback (it writes no op graph).

After each case the script reads every event file twice: by walking the
TFRecord framing itself (u64 length, masked CRC-32C of it, data, masked
CRC-32C of the data; both CRCs checked), and with TensorFlow's own
``tf_record_iterator``/``summary_iterator``; the records must agree byte for
byte. It then writes ``<case>/MANIFEST.json``: every record's index, header
offset, data length, the Event field set and what it holds.

Event files are renamed to stable names, ``events.out.tfevents.<T>.fixture.1.0``
(plus the writer's ``.v2`` suffix if it had one), T = 1700000000 + their order in
the folder by original name; the original name (host replaced by ``HOST``) is in
the manifest.
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, os.pardir, "tests", "data", "events")
GRAD_COMPONENT = re.compile(r"^(gradients(_\d+)?|gradient_tape)$")


# --------------------------------------------------------------------------
# TFRecord framing, read by hand
# --------------------------------------------------------------------------
# Kept apart from pbtxt_scan/source/_kinds.py's CRC on purpose: the manifest is
# what the project's event reader is checked against, so it is not made with it.
def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def walk_records(path):
    """[(header_offset, data)] of a TFRecord file, both CRCs checked."""
    with open(path, "rb") as f:
        buf = f.read()
    out, pos = [], 0
    while pos < len(buf):
        if pos + 12 > len(buf):
            raise SystemExit("%s: offset %d: truncated record header" % (path, pos))
        header = buf[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (len_crc,) = struct.unpack("<I", buf[pos + 8:pos + 12])
        if len_crc != masked_crc(header):
            raise SystemExit("%s: offset %d: bad length CRC" % (path, pos))
        data = buf[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack("<I", buf[pos + 12 + length:pos + 16 + length])
        if len(data) != length or data_crc != masked_crc(data):
            raise SystemExit("%s: offset %d: bad data CRC or truncated data" % (path, pos))
        out.append((pos, data))
        pos += 16 + length
    return out


# --------------------------------------------------------------------------
# What a record holds
# --------------------------------------------------------------------------
def _has_grad_scope(name):
    return any(GRAD_COMPONENT.match(part) for part in name.split("/")[:-1])


BESIDE = {}  # beside file name -> GraphDef, filled by write_manifest


def describe_graph(gd):
    same = sorted(name for name, other in BESIDE.items() if other == gd)
    lib_nodes = [(f.signature.name, n.name) for f in gd.library.function for n in f.node_def]
    return {
        "nodes": len(gd.node),
        "library_functions": len(gd.library.function),
        "library_nodes": len(lib_nodes),
        "gradients_scope": any(_has_grad_scope(n.name) for n in gd.node),
        "gradients_scope_in_library": sorted({fn for fn, name in lib_nodes if _has_grad_scope(name)}),
        "producer": gd.versions.producer,
        "same_as": same,
    }


def describe_run_metadata(rm):
    return {
        "partition_graphs": [describe_graph(g) for g in rm.partition_graphs],
        "function_graphs": [
            {"pre_optimization_graph": describe_graph(fg.pre_optimization_graph),
             "post_optimization_graph_nodes": len(fg.post_optimization_graph.node),
             "partition_graphs": len(fg.partition_graphs)}
            for fg in rm.function_graphs],
        "step_stats_devices": len(rm.step_stats.dev_stats),
    }


def describe_event(ev):
    field = ev.WhichOneof("what")
    d = {"field": field}
    if field == "file_version":
        d["file_version"] = ev.file_version
    elif field == "graph_def":
        d.update(describe_graph(v1.GraphDef.FromString(ev.graph_def)))
    elif field == "meta_graph_def":
        mg = v1.MetaGraphDef.FromString(ev.meta_graph_def)
        d["graph_def"] = describe_graph(mg.graph_def)
        d["collections"] = sorted(mg.collection_def.keys())
    elif field == "summary":
        values = []
        for v in ev.summary.value:
            item = {"tag": v.tag, "value": v.WhichOneof("value"),
                    "plugin": v.metadata.plugin_data.plugin_name or None}
            if v.WhichOneof("value") == "tensor":
                item["dtype"] = tf.dtypes.as_dtype(v.tensor.dtype).name
                if v.tensor.string_val:
                    item["string_val_bytes"] = [len(s) for s in v.tensor.string_val]
            if item["plugin"] == "graph_run_metadata_graph":
                rm = v1.RunMetadata.FromString(v.tensor.string_val[0])
                item["run_metadata"] = describe_run_metadata(rm)
            values.append(item)
        d["values"] = values
    elif field == "session_log":
        d["status"] = v1.SessionLog.SessionStatus.Name(ev.session_log.status)
    elif field == "tagged_run_metadata":
        d["tag"] = ev.tagged_run_metadata.tag
        d["run_metadata"] = describe_run_metadata(
            v1.RunMetadata.FromString(ev.tagged_run_metadata.run_metadata))
    return d


def event_files(case_dir):
    found = []
    for root, _dirs, files in os.walk(case_dir):
        for name in files:
            if name.startswith("events.out.tfevents."):
                found.append(os.path.relpath(os.path.join(root, name), case_dir))
    return sorted(found)


def check_and_describe(case_dir, rel):
    path = os.path.join(case_dir, rel)
    mine = walk_records(path)
    theirs = list(v1.io.tf_record_iterator(path))
    events = list(v1.train.summary_iterator(path))
    if [d for _, d in mine] != theirs or len(events) != len(mine):
        raise SystemExit("%s: my framing walk (%d records) disagrees with TensorFlow's (%d, %d)"
                         % (path, len(mine), len(theirs), len(events)))
    records = []
    for i, ((offset, data), ev) in enumerate(zip(mine, events)):
        if ev.SerializeToString() != data and v1.Event.FromString(data) != ev:
            raise SystemExit("%s: record %d: parse mismatch" % (path, i))
        rec = {"index": i, "offset": offset, "length": len(data)}
        rec.update(describe_event(ev))
        records.append(rec)
    return {"path": rel.replace(os.sep, "/"), "bytes": os.path.getsize(path), "records": records}


# --------------------------------------------------------------------------
# Output helpers
# --------------------------------------------------------------------------
def stable_names(case_dir):
    """Rename every event file in each folder; return {new relpath: original (host hidden)}."""
    host = os.uname()[1]
    produced = {}
    by_dir = {}
    for rel in event_files(case_dir):
        by_dir.setdefault(os.path.dirname(rel), []).append(rel)
    for d, rels in by_dir.items():
        for k, rel in enumerate(sorted(rels)):
            base = os.path.basename(rel)
            suffix = ".v2" if base.endswith(".v2") else ""
            new = os.path.join(d, "events.out.tfevents.%d.fixture.1.0%s" % (1700000000 + k, suffix))
            os.rename(os.path.join(case_dir, rel), os.path.join(case_dir, new))
            produced[new.replace(os.sep, "/")] = base.replace(host, "HOST")
    return produced


def write_manifest(case_dir, case, made_with, extra=None):
    from google.protobuf import text_format
    produced = stable_names(case_dir)
    BESIDE.clear()
    for name in sorted(os.listdir(case_dir)):
        if name.endswith(".pbtxt"):
            with open(os.path.join(case_dir, name)) as f:
                BESIDE[name] = text_format.Parse(f.read(), v1.GraphDef())
    files = []
    for rel in event_files(case_dir):
        entry = check_and_describe(case_dir, rel)
        entry["produced_as"] = produced[entry["path"]]
        files.append(entry)
    manifest = {"case": case, "made_with": made_with,
                "tensorflow": tf.__version__, "event_files": files}
    if extra:
        manifest.update(extra)
    with open(os.path.join(case_dir, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=False)
        f.write("\n")
    return manifest


def write_text_graph(gd, case_dir, name):
    tf.io.write_graph(gd, case_dir, name, as_text=True)
    return name


def graph_records(case_dir, rel, field="graph_def"):
    out = []
    for ev in v1.train.summary_iterator(os.path.join(case_dir, rel)):
        if ev.WhichOneof("what") == field:
            out.append(getattr(ev, field))
    return out


def _data(n=64, features=6, classes=3, seed=0):
    rng = np.random.RandomState(seed)
    return (rng.rand(n, features).astype(np.float32),
            rng.randint(0, classes, size=(n,)).astype(np.int32))


# --------------------------------------------------------------------------
# 1. TF1 FileWriter
# --------------------------------------------------------------------------
def _v1_filewriter(case_dir, case, train):
    xs, ys = _data()
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        x = v1.placeholder(tf.float32, [None, 6], name="x")
        h = v1.layers.dense(x, 8, activation=tf.nn.relu, name="hidden")
        logits = v1.layers.dense(h, 3, name="logits")
        v1.summary.histogram("hidden/activations", h)
        v1.summary.histogram("logits", logits)
        if train:
            y = v1.placeholder(tf.int32, [None], name="y")
            loss = v1.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
            v1.summary.scalar("loss", loss)
            step = v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        else:
            probs = tf.nn.softmax(logits, name="probs")
            v1.summary.scalar("mean_max_prob", tf.reduce_mean(tf.reduce_max(probs, axis=1)))
            step = probs
        merged = v1.summary.merge_all()
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        if train:
            # The graph between summaries: FileWriter(logdir) then add_graph after
            # step 0 (FileWriter(logdir, graph) calls the same add_graph at once).
            writer = v1.summary.FileWriter(case_dir)
        else:
            writer = v1.summary.FileWriter(case_dir, sess.graph)
        for i in range(3):
            feed = {x: xs[i * 8:(i + 1) * 8]}
            if train:
                feed[y] = ys[i * 8:(i + 1) * 8]
            s, _ = sess.run([merged, step], feed_dict=feed)
            writer.add_summary(s, i)
            if train and i == 0:
                writer.add_graph(sess.graph)
        writer.close()
        expected = sess.graph.as_graph_def(add_shapes=True)
    rel = event_files(case_dir)
    assert len(rel) == 1, rel
    blobs = graph_records(case_dir, rel[0])
    assert len(blobs) == 1, len(blobs)
    gd = v1.GraphDef.FromString(blobs[0])
    same = gd == expected
    assert same, "the FileWriter's graph is not sess.graph.as_graph_def(add_shapes=True)"
    write_text_graph(gd, case_dir, "graph.pbtxt")
    return write_manifest(case_dir, case, (
        "tf.compat.v1 graph mode: placeholders, layers.dense x2, %s; "
        "%s; merged summaries added per step (3 steps). "
        "graph.pbtxt = tf.io.write_graph of GraphDef.FromString(event.graph_def)"
        % ("sparse_softmax_cross_entropy + GradientDescentOptimizer.minimize" if train
           else "softmax, no loss, no optimizer",
           "summary.FileWriter(logdir), add_graph(sess.graph) after step 0's add_summary" if train
           else "summary.FileWriter(logdir, sess.graph)")),
        {"beside": {"graph.pbtxt": "the graph_def record, parsed and written as text; equal to "
                                   "sess.graph.as_graph_def(add_shapes=True)"}})


def make_v1_filewriter(case_dir):
    v1.disable_eager_execution()
    return _v1_filewriter(case_dir, "v1_filewriter", train=True)


def make_v1_forward_only(case_dir):
    v1.disable_eager_execution()
    return _v1_filewriter(case_dir, "v1_forward_only", train=False)


# --------------------------------------------------------------------------
# 2. Estimator: train twice, evaluate once
# --------------------------------------------------------------------------
def make_estimator(case_dir):
    xs, ys = _data()

    def input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": xs}, ys))
        return ds.repeat().batch(8)

    def model_fn(features, labels, mode):
        h = v1.layers.dense(features["x"], 8, activation=tf.nn.relu, name="hidden")
        logits = v1.layers.dense(h, 3, name="logits")
        loss = v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        train_op = None
        if mode == tf.estimator.ModeKeys.TRAIN:
            opt = v1.train.GradientDescentOptimizer(0.1)
            train_op = opt.minimize(loss, global_step=v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    model_dir = tempfile.mkdtemp(prefix="ev_estimator_")
    try:
        cfg = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=1,
                                     save_checkpoints_steps=1000, save_summary_steps=1,
                                     log_step_count_steps=1, keep_checkpoint_max=1)
        est = tf.estimator.Estimator(model_fn=model_fn, config=cfg)
        est.train(input_fn, steps=3)
        est.train(input_fn, steps=3)
        est.evaluate(input_fn, steps=2)
        removed, kept = [], []
        for root, _dirs, files in os.walk(model_dir):
            for name in sorted(files):
                rel = os.path.relpath(os.path.join(root, name), model_dir)
                size = os.path.getsize(os.path.join(root, name))
                if name.startswith("events.out.tfevents.") or name == "graph.pbtxt":
                    dst = os.path.join(case_dir, rel)
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copyfile(os.path.join(root, name), dst)
                    kept.append(rel)
                else:
                    removed.append({"path": rel.replace(os.sep, "/"), "bytes": size})
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)
    return write_manifest(case_dir, "estimator", (
        "tf.estimator.Estimator (tensorflow-estimator 2.15.0), model_fn: layers.dense x2, "
        "sparse_softmax_cross_entropy, GradientDescentOptimizer.minimize(global_step); "
        "RunConfig(save_summary_steps=1, tf_random_seed=1); train(steps=3) twice, "
        "evaluate(steps=2) once; model_dir copied without its checkpoints"), {
        "beside": {"graph.pbtxt": "model_dir's own graph.pbtxt (written by the Estimator: the "
                                  "last train call's graph)"},
        "removed_from_model_dir": removed,
    })


# --------------------------------------------------------------------------
# 3. tf.keras (Keras 2.15) TensorBoard callback
# --------------------------------------------------------------------------
def make_tf_keras_callback(case_dir):
    import keras

    if int(keras.__version__.split(".")[0]) != 2:
        raise SystemExit("tf_keras_callback needs Keras 2 (tensorflow-cpu 2.15); found %s"
                         % keras.__version__)
    tf.keras.utils.set_random_seed(1)
    xs, ys = _data()
    xv, yv = _data(16, seed=1)
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
        tf.keras.layers.Dense(3),
    ])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    logs = os.path.join(case_dir, "logs")
    tb = tf.keras.callbacks.TensorBoard(log_dir=logs, write_graph=True, histogram_freq=1)
    model.fit(xs, ys, batch_size=16, epochs=2, validation_data=(xv, yv), verbose=1,
              callbacks=[tb])
    beside = {}
    for rel in event_files(case_dir):
        blobs = graph_records(case_dir, rel)
        for k, blob in enumerate(blobs):
            name = "%s_graph%s.pbtxt" % (rel.split(os.sep)[1], "" if k == 0 else "_%d" % k)
            write_text_graph(v1.GraphDef.FromString(blob), case_dir, name)
            beside[name] = ("graph_def record %d of the event file in %s, parsed and written as text"
                            % (k, os.path.dirname(rel).replace(os.sep, "/")))
    return write_manifest(case_dir, "tf_keras_callback", (
        "tf.keras %s (TF 2.15) Sequential Dense(8, relu), Dense(3); SGD; "
        "TensorBoard(log_dir=logs, write_graph=True, histogram_freq=1); "
        "fit(64 samples, batch_size=16, epochs=2, validation_data=16 samples, verbose=1)"
        % keras.__version__), {"beside": beside})


# --------------------------------------------------------------------------
# 4. tf.summary.trace_on / trace_export of a tf.function train step
# --------------------------------------------------------------------------
def make_trace_export(case_dir):
    tf.random.set_seed(1)
    xs, ys = _data()
    init = tf.keras.initializers.GlorotUniform(seed=1)
    with tf.name_scope("dense"):
        w1 = tf.Variable(init((6, 8)), name="kernel")
        b1 = tf.Variable(tf.zeros((8,)), name="bias")
    with tf.name_scope("dense_1"):
        w2 = tf.Variable(init((8, 3)), name="kernel")
        b2 = tf.Variable(tf.zeros((3,)), name="bias")
    params = [w1, b1, w2, b2]
    opt = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            with tf.name_scope("dense"):
                h = tf.nn.relu(tf.matmul(x, w1) + b1)
            with tf.name_scope("dense_1"):
                logits = tf.matmul(h, w2) + b2
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, params)
        opt.apply_gradients(zip(grads, params))
        return loss

    writer = tf.summary.create_file_writer(case_dir)
    with writer.as_default():
        tf.summary.trace_on(graph=True, profiler=False)
        loss = train_step(xs[:8], ys[:8])
        tf.summary.trace_export(name="train_step", step=0)
        tf.summary.scalar("loss", loss, step=0)
        for i in range(1, 3):
            loss = train_step(xs[i * 8:(i + 1) * 8], ys[i * 8:(i + 1) * 8])
            tf.summary.scalar("loss", loss, step=i)
    writer.close()
    beside = {}
    rel = event_files(case_dir)
    assert len(rel) == 1, rel
    for ev in v1.train.summary_iterator(os.path.join(case_dir, rel[0])):
        for v in ev.summary.value:
            if v.metadata.plugin_data.plugin_name == "graph_run_metadata_graph":
                rm = v1.RunMetadata.FromString(v.tensor.string_val[0])
                for i, fg in enumerate(rm.function_graphs):
                    name = "function_graph_%d.pbtxt" % i
                    write_text_graph(fg.pre_optimization_graph, case_dir, name)
                    beside[name] = ("RunMetadata.function_graphs[%d].pre_optimization_graph of the "
                                    "'%s' summary value" % (i, v.tag))
    return write_manifest(case_dir, "trace_export", (
        "TF 2.15 eager: tf.summary.create_file_writer; trace_on(graph=True, profiler=False); "
        "one call of a @tf.function train step (tf.Variables dense/kernel..., GradientTape, "
        "tf.keras.optimizers.SGD.apply_gradients); trace_export(name='train_step', step=0); "
        "scalar 'loss' for 3 steps"), {"beside": beside})


# --------------------------------------------------------------------------
# 5. Keras 3 TensorBoard callback (TF >= 2.16)
# --------------------------------------------------------------------------
def make_keras3_callback(case_dir):
    import keras

    if int(keras.__version__.split(".")[0]) < 3:
        raise SystemExit("keras3_callback needs Keras 3 (tensorflow-cpu >= 2.16); found %s"
                         % keras.__version__)
    keras.utils.set_random_seed(1)
    xs, ys = _data()
    xv, yv = _data(16, seed=1)
    model = keras.Sequential([
        keras.Input((6,)),
        keras.layers.Dense(8, activation="relu"),
        keras.layers.Dense(3),
    ])
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    logs = os.path.join(case_dir, "logs")
    tb = keras.callbacks.TensorBoard(log_dir=logs, write_graph=True, histogram_freq=1)
    model.fit(xs, ys, batch_size=16, epochs=2, validation_data=(xv, yv), verbose=1,
              callbacks=[tb])
    return write_manifest(case_dir, "keras3_callback", (
        "Keras %s on TF %s: Sequential Dense(8, relu), Dense(3); SGD; "
        "keras.callbacks.TensorBoard(log_dir=logs, write_graph=True, histogram_freq=1); "
        "fit(64 samples, batch_size=16, epochs=2, validation_data=16 samples, verbose=1)"
        % (keras.__version__, tf.__version__)), {"beside": {}})


# --------------------------------------------------------------------------
# Field numbers: read from the wheel's .proto files, checked against the
# descriptors of TensorFlow's generated Python classes
# --------------------------------------------------------------------------
FIELDS = [
    # (proto file, message path, field, python class)
    ("tensorflow/core/util/event.proto", "Event", "wall_time", "Event"),
    ("tensorflow/core/util/event.proto", "Event", "step", "Event"),
    ("tensorflow/core/util/event.proto", "Event", "file_version", "Event"),
    ("tensorflow/core/util/event.proto", "Event", "graph_def", "Event"),
    ("tensorflow/core/util/event.proto", "Event", "summary", "Event"),
    ("tensorflow/core/util/event.proto", "Event", "log_message", "Event"),
    ("tensorflow/core/util/event.proto", "Event", "session_log", "Event"),
    ("tensorflow/core/util/event.proto", "Event", "tagged_run_metadata", "Event"),
    ("tensorflow/core/util/event.proto", "Event", "meta_graph_def", "Event"),
    ("tensorflow/core/util/event.proto", "TaggedRunMetadata", "tag", "TaggedRunMetadata"),
    ("tensorflow/core/util/event.proto", "TaggedRunMetadata", "run_metadata", "TaggedRunMetadata"),
    ("tensorflow/core/framework/summary.proto", "Summary", "value", "Summary"),
    ("tensorflow/core/framework/summary.proto", "Summary.Value", "tag", "Summary.Value"),
    ("tensorflow/core/framework/summary.proto", "Summary.Value", "metadata", "Summary.Value"),
    ("tensorflow/core/framework/summary.proto", "Summary.Value", "tensor", "Summary.Value"),
    ("tensorflow/core/framework/summary.proto", "SummaryMetadata", "plugin_data", "SummaryMetadata"),
    ("tensorflow/core/framework/summary.proto", "SummaryMetadata.PluginData", "plugin_name",
     "SummaryMetadata.PluginData"),
    ("tensorflow/core/framework/tensor.proto", "TensorProto", "dtype", "TensorProto"),
    ("tensorflow/core/framework/tensor.proto", "TensorProto", "string_val", "TensorProto"),
    ("tensorflow/core/protobuf/config.proto", "RunMetadata", "partition_graphs", "RunMetadata"),
    ("tensorflow/core/protobuf/config.proto", "RunMetadata", "function_graphs", "RunMetadata"),
    ("tensorflow/core/protobuf/config.proto", "RunMetadata.FunctionGraphs", "partition_graphs",
     "RunMetadata.FunctionGraphs"),
    ("tensorflow/core/protobuf/config.proto", "RunMetadata.FunctionGraphs", "pre_optimization_graph",
     "RunMetadata.FunctionGraphs"),
    ("tensorflow/core/protobuf/config.proto", "RunMetadata.FunctionGraphs", "post_optimization_graph",
     "RunMetadata.FunctionGraphs"),
    ("tensorflow/core/protobuf/meta_graph.proto", "MetaGraphDef", "graph_def", "MetaGraphDef"),
    ("tensorflow/core/framework/graph.proto", "GraphDef", "node", "GraphDef"),
    ("tensorflow/core/framework/graph.proto", "GraphDef", "library", "GraphDef"),
    ("tensorflow/core/framework/graph.proto", "GraphDef", "versions", "GraphDef"),
]


def proto_fields(path):
    """{(message path, field): (number, type, line)} from a .proto file's text."""
    out, stack = {}, []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("//")[0].strip()
            m = re.match(r"(message|enum|oneof)\s+(\w+)\s*\{", line)
            if m:
                stack.append((m.group(1), m.group(2)))
                continue
            if line.startswith("}"):
                stack.pop()
                continue
            m = re.match(r"(?:repeated\s+|optional\s+)?([\w.<>, ]+?)\s+(\w+)\s*=\s*(\d+)", line)
            if m and stack and stack[-1][0] != "enum":
                msg = ".".join(name for kind, name in stack if kind == "message")
                out[(msg, m.group(2))] = (int(m.group(3)), m.group(1), lineno)
    return out


def _py_class(name):
    from tensorflow.core.framework import summary_pb2, tensor_pb2, graph_pb2
    from tensorflow.core.protobuf import config_pb2, meta_graph_pb2
    from tensorflow.core.util import event_pb2
    obj = None
    for mod in (event_pb2, summary_pb2, tensor_pb2, graph_pb2, config_pb2, meta_graph_pb2):
        top = name.split(".")[0]
        if hasattr(mod, top):
            obj = mod
            break
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def fields_table():
    include = os.path.join(os.path.dirname(tf.__file__), "include")
    from google.protobuf.descriptor import FieldDescriptor as FD
    wire = {FD.TYPE_DOUBLE: 1, FD.TYPE_FLOAT: 5, FD.TYPE_INT64: 0, FD.TYPE_INT32: 0,
            FD.TYPE_ENUM: 0, FD.TYPE_BOOL: 0, FD.TYPE_STRING: 2, FD.TYPE_BYTES: 2,
            FD.TYPE_MESSAGE: 2}
    rows = ["| message | field | number | wire type | type | source (TF %s wheel) |"
            % tf.__version__, "|---|---|---|---|---|---|"]
    cache = {}
    for proto, msg, field, cls in FIELDS:
        if proto not in cache:
            cache[proto] = proto_fields(os.path.join(include, proto))
        number, ftype, lineno = cache[proto][(msg, field)]
        desc = _py_class(cls).DESCRIPTOR.fields_by_name[field]
        if desc.number != number:
            raise SystemExit("%s %s.%s: .proto says %d, descriptor %d"
                             % (proto, msg, field, number, desc.number))
        rows.append("| `%s` | `%s` | %d | %d | `%s%s` | `%s:%d` |"
                    % (msg, field, number, wire[desc.type],
                       "repeated " if desc.label == FD.LABEL_REPEATED else "", ftype, proto, lineno))
    return "\n".join(rows)


ALL_215 = ["v1_filewriter", "v1_forward_only", "estimator", "tf_keras_callback", "trace_export"]
ALL = ALL_215 + ["keras3_callback"]


def main(argv):
    args = argv[1:]
    if "--fields" in args:
        print(fields_table())
        return 0
    out_dir = os.path.abspath(args[0] if args else DEFAULT_OUT)
    names = args[1:] or ALL_215
    if len(names) == 1:
        case_dir = os.path.join(out_dir, names[0])
        shutil.rmtree(case_dir, ignore_errors=True)
        os.makedirs(case_dir)
        manifest = globals()["make_" + names[0]](case_dir)
        total = sum(os.path.getsize(os.path.join(r, n))
                    for r, _d, fs in os.walk(case_dir) for n in fs)
        print("%s: %d event files, %d bytes in the folder (TF %s)"
              % (names[0], len(manifest["event_files"]), total, tf.__version__))
        return 0
    rc = 0
    for name in names:
        rc |= subprocess.call([sys.executable, os.path.abspath(__file__), out_dir, name])
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
