#!/usr/bin/env python3
"""Generate the second set of TensorFlow graph fixtures in tests/data/graphs/ (issue 10).

Maintainer tool, like make_tf_fixtures.py: neither the project nor its tests
import it, and the project never needs TensorFlow. Two throwaway venvs:

    python3.11 -m venv /tmp/tfvenv    && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.15.1
    python3.11 -m venv /tmp/tfvenv216 && /tmp/tfvenv216/bin/pip install tensorflow-cpu==2.16.2
    /tmp/tfvenv216/bin/python tools/make_tf_fixtures_2.py OUT_DIR keras_fit keras_fit_steps_per_execution
    /tmp/tfvenv/bin/python    tools/make_tf_fixtures_2.py OUT_DIR keras2_fit keras2_fit_steps_per_execution \
                                                          tf10_placeholders npu_geop

(the Keras 3 fixtures need TF >= 2.16, whose pip dependency is Keras 3; the
other two were made with 2.15.1). OUT_DIR defaults to tests/data/graphs.

* ``keras_fit*``: the graph TensorFlow traced for a real ``model.fit`` (Keras 3).
* ``keras2_fit*``: the same with Keras 2 (tf.keras in TF 2.15): ``__inference_train_function_*``.
* ``tf10_placeholders``: a real TF1 feed_dict training graph written with
  ``add_shapes=True``, then rewritten to what TensorFlow 1.0 wrote (placeholder
  ``shape {}``, ``versions { producer: 21 }``, and the few op/attr spellings that
  did not exist in 1.0). No TF that old installs on Python 3.11.
* ``npu_geop``: a real TF1 training graph as the Ascend TF adapter rewrites it
  (the session's ``_Arg``/``_Retval`` feeds and fetch at the top level, one
  ``GeOp`` node, the model moved into the library function ``GeOp1_0``). The
  function is made by TensorFlow's own ``graph_to_function_def``; the top-level
  nodes and the GeOp attrs are written by this script after the adapter's
  sources (see tests/data/README.md).

The ``*.expected.json`` answers are written by hand after reading each graph.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, os.pardir, "tests", "data", "graphs")


def _write(gd, out_dir, stem):
    tf.io.write_graph(gd, out_dir, stem + ".pbtxt", as_text=True)
    return os.path.join(out_dir, stem + ".pbtxt")


# --------------------------------------------------------------------------
# 1. Keras 3 model.fit: the traced train function (needs TF >= 2.16)
# --------------------------------------------------------------------------
def _keras_fit(out_dir, stem, steps_per_execution):
    import keras

    if int(keras.__version__.split(".")[0]) < 3:
        raise SystemExit("%s needs Keras 3 (tensorflow-cpu >= 2.16); found Keras %s"
                         % (stem, keras.__version__))
    keras.utils.set_random_seed(1)
    rng = np.random.RandomState(0)
    xs = rng.rand(32, 6).astype(np.float32)
    ys = rng.randint(0, 3, size=(32,)).astype(np.int32)
    model = keras.Sequential([
        keras.Input((6,)),
        keras.layers.Dense(8, activation="relu"),
        keras.layers.Dense(3),
    ])
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  steps_per_execution=steps_per_execution)
    model.fit(xs, ys, batch_size=8, epochs=1, verbose=0)
    # model.train_function is a Python closure around the tf.function that fit
    # called with the dataset iterator (multi_step_on_iterator in Keras 3.15);
    # take that tf.function's only concrete function, as traced by fit.
    fns = [c.cell_contents for c in model.train_function.__closure__
           if hasattr(c.cell_contents, "_list_all_concrete_functions")]
    assert len(fns) == 1, fns
    cfs = fns[0]._list_all_concrete_functions()
    assert len(cfs) == 1, cfs
    return _write(cfs[0].graph.as_graph_def(), out_dir, stem)


def make_keras_fit(out_dir):
    return _keras_fit(out_dir, "keras_fit", 1)


def make_keras_fit_steps_per_execution(out_dir):
    return _keras_fit(out_dir, "keras_fit_steps_per_execution", 4)


# --------------------------------------------------------------------------
# 1b. Keras 2 (tf.keras in TF 2.15) model.fit: __inference_train_function_*
# --------------------------------------------------------------------------
def _keras2_fit(out_dir, stem, steps_per_execution):
    import keras

    if int(keras.__version__.split(".")[0]) != 2:
        raise SystemExit("%s needs Keras 2 (tensorflow-cpu 2.15); found Keras %s"
                         % (stem, keras.__version__))
    tf.keras.utils.set_random_seed(1)
    rng = np.random.RandomState(0)
    xs = rng.rand(32, 6).astype(np.float32)
    ys = rng.randint(0, 3, size=(32,)).astype(np.int32)
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(8, activation="relu", input_shape=(6,)),
        tf.keras.layers.Dense(3),
    ])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  steps_per_execution=steps_per_execution)
    model.fit(xs, ys, batch_size=8, epochs=1, verbose=0)
    # Keras 2 keeps the tf.function it built and called as model.train_tf_function.
    cfs = model.train_tf_function._list_all_concrete_functions()
    for cf in cfs:
        print(stem, cf.name, len(cf.graph.as_graph_def().node))
    return _write(cfs[0].graph.as_graph_def(), out_dir, stem)


def make_keras2_fit(out_dir):
    return _keras2_fit(out_dir, "keras2_fit", 1)


def make_keras2_fit_steps_per_execution(out_dir):
    return _keras2_fit(out_dir, "keras2_fit_steps_per_execution", 4)


# --------------------------------------------------------------------------
# 2. TF 1.0-era feed_dict MLP (MNIST tutorial shape), rewritten to TF 1.0's spelling
# --------------------------------------------------------------------------
def _tf1_mlp_graph(dropout=True):
    """A TF1 feed_dict MLP in the style of the TF 1.0 MNIST tutorials."""
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1)
        v1.disable_resource_variables()  # TF 1.0 had only ref variables (VariableV2)
        x = v1.placeholder(tf.float32, [None, 784], name="x")
        y_ = v1.placeholder(tf.float32, [None, 10], name="y_")
        W1 = v1.Variable(v1.truncated_normal([784, 32], stddev=0.1), name="W1")
        b1 = v1.Variable(tf.constant(0.1, shape=[32]), name="b1")
        W2 = v1.Variable(v1.truncated_normal([32, 10], stddev=0.1), name="W2")
        b2 = v1.Variable(tf.constant(0.1, shape=[10]), name="b2")
        h1 = tf.nn.relu(tf.matmul(x, W1) + b1)
        keep_prob = v1.placeholder(tf.float32, name="keep_prob")  # no shape: unknown
        if dropout:
            # tf.nn.dropout as TF 1.0 built it (keep_prob + uniform, floor, div, mul).
            # TF 1.0 ended with ret.set_shape(x.get_shape()), so the unknown shape of
            # keep_prob does not spread into the rest of the model.
            with tf.name_scope("dropout"):
                random_tensor = keep_prob + v1.random_uniform(tf.shape(h1), dtype=tf.float32)
                binary_tensor = tf.floor(random_tensor)
                ret = tf.realdiv(h1, keep_prob, name="div") * binary_tensor
                ret.set_shape(h1.get_shape())
                h1 = ret
        y = tf.matmul(h1, W2) + b2
        # The kernel itself, as TF 1.0's 2-D softmax_cross_entropy_with_logits produced
        # it (no "_sg" scope, no StopGradient on the labels: those came in TF 1.5).
        xent, _ = tf.raw_ops.SoftmaxCrossEntropyWithLogits(
            features=y, labels=y_, name="SoftmaxCrossEntropyWithLogits")
        cross_entropy = tf.reduce_mean(xent)
        train_step = v1.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)
        init = v1.global_variables_initializer()
        v1.enable_resource_variables()
    return g, init, train_step, cross_entropy, (x, y_, keep_prob)


def make_tf10_placeholders(out_dir):
    rng = np.random.RandomState(0)
    xs = rng.rand(8, 784).astype(np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.randint(0, 10, size=8)]
    g, init, train_step, _, (x, y_, keep_prob) = _tf1_mlp_graph()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        for _ in range(2):
            sess.run(train_step, feed_dict={x: xs, y_: ys, keep_prob: 0.5})
    gd = g.as_graph_def(add_shapes=True)
    return _write(_as_tf10(gd), out_dir, "tf10_placeholders")


def _as_tf10(gd):
    """Rewrite a TF 2.15 GraphDef to what TensorFlow 1.0 wrote for the same program.

    * Placeholder ``shape``: TF 1.0's ``tf.placeholder`` passed ``shape=[]`` to the
      op unless the shape was fully defined (``dim_list = []`` in
      ``array_ops.placeholder``), and a fully defined scalar is also ``[]``; so every
      placeholder here is written ``shape { }``. ``_output_shapes`` (from
      ``add_shapes=True``, set by ``ret.set_shape(shape)``) keeps the Python shape:
      ``[-1, 784]``, ``[-1, 10]``, and ``unknown_rank: true`` for ``keep_prob``.
    * ``versions { producer: 21 }`` (TF 1.0's TF_GRAPH_DEF_VERSION; min_consumer 0,
      so it is not written).
    * Spellings TF 1.0 did not have: ``AddV2`` (2019) was ``Add``; the MatMul
      attrs ``grad_a``/``grad_b``, the Cast attr ``Truncate``, the Fill attr
      ``index_type`` and TF 2's ``_has_manual_control_dependencies`` did not exist;
      ``GatherV2`` (axis 0, in Mean's gradient) was ``Gather``, so its ``axis``
      Const is dropped.
    """
    out = v1.GraphDef()
    out.CopyFrom(gd)
    dropped = set()
    for n in out.node:
        if n.op == "Placeholder":
            n.attr["shape"].shape.Clear()
        if n.op == "AddV2":
            n.op = "Add"
        if n.op == "MatMul":
            for k in ("grad_a", "grad_b"):
                if k in n.attr:
                    del n.attr[k]
        if n.op == "Cast" and "Truncate" in n.attr:
            del n.attr["Truncate"]
        if n.op == "Fill" and "index_type" in n.attr:
            del n.attr["index_type"]
        if "_has_manual_control_dependencies" in n.attr:  # a TF 2.x graph-building mark
            del n.attr["_has_manual_control_dependencies"]
        if n.op == "GatherV2":
            # Mean's gradient gathers with axis 0: TF 1.0 used Gather (no axis input).
            axis = n.input[2]
            assert axis.endswith("/axis"), n.name
            del n.input[2]
            n.op = "Gather"
            for k in ("Taxis", "batch_dims"):
                if k in n.attr:
                    del n.attr[k]
            n.attr["validate_indices"].b = True
            dropped.add(axis)
    for name in dropped:  # the GatherV2 axis Consts, now unused
        assert not any(name in (i.lstrip("^") for i in m.input) for m in out.node), name
        out.node.remove(next(m for m in out.node if m.name == name))
    out.versions.Clear()
    out.versions.producer = 21
    assert not out.library.function, "a TF 1.0 graph has no function library here"
    return out


# --------------------------------------------------------------------------
# 3. The same kind of training graph after the Ascend TF adapter's partition pass
# --------------------------------------------------------------------------
DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def make_npu_geop(out_dir):
    from tensorflow.python.framework import graph_to_function_def

    rng = np.random.RandomState(0)
    xs = rng.rand(8, 784).astype(np.float32)
    ys = np.eye(10, dtype=np.float32)[rng.randint(0, 10, size=8)]
    g, init, train_step, loss, (x, y_, keep_prob) = _tf1_mlp_graph(dropout=False)
    with v1.Session(graph=g) as sess:  # a real run, as on the host before the rewrite
        sess.run(init)
        for _ in range(2):
            sess.run(train_step, feed_dict={x: xs, y_: ys})
    gd = g.as_graph_def()

    # DirectSession prunes the graph to what the fetch (loss) and the target
    # (train_step) need, and replaces the fed placeholders by _Arg nodes
    # "_arg_<feed>_<port>_<index>" and the fetch by "_retval_<fetch>_<port>_<index>"
    # (tensorflow/core/graph/subgraph.cc, ArgFeedRewrite / RetvalFetchRewrite).
    feeds = [x, y_]
    keep = v1.graph_util.extract_sub_graph(gd, [loss.op.name, train_step.name])
    kept = {n.name for n in keep.node}
    ops = [g.get_operation_by_name(n.name) for n in gd.node  # graph order = node id order
           if n.name in kept and n.name not in {f.op.name for f in feeds}]

    # OMPartitionSubgraphsPass: every remaining node is NPU-supported, so they form
    # one cluster, turned into the FunctionDef "GeOp1_0" (OMSubGraphToFunctionDef):
    # an _Arg per crossing input edge named "<src>_<slot>_arg" (the src being the
    # session's _Arg node), a _Retval per crossing output named "<src>_<slot>_retval",
    # node inputs as "node:out_arg:index", devices set to the assigned CPU device.
    arg_src = ["_arg_%s_0_%d" % (f.op.name, i) for i, f in enumerate(feeds)]
    arg_names = ["%s_0_arg" % s for s in arg_src]
    ret_names = ["%s_0_retval" % loss.op.name]
    fdef = graph_to_function_def.graph_to_function_def(
        g, ops, feeds, [loss], out_names=ret_names)
    fdef.signature.name = "GeOp1_0"
    rename = {f.op.name: a for f, a in zip(feeds, arg_names)}
    for arg in fdef.signature.input_arg:
        arg.name = rename[arg.name]
    for nd in fdef.node_def:
        nd.device = DEVICE
        for i, inp in enumerate(nd.input):
            if inp in rename:
                nd.input[i] = rename[inp]

    out = v1.GraphDef()
    # Non-cluster nodes are copied to the output graph first, then the GeOp node.
    for i, f in enumerate(feeds):
        a = out.node.add(name=arg_src[i], op="_Arg", device=DEVICE)
        a.attr["T"].type = f.dtype.as_datatype_enum
        a.attr["index"].i = i
    r = out.node.add(name="_retval_%s_0_0" % loss.op.name, op="_Retval", device=DEVICE,
                     input=["GeOp1_0"])
    r.attr["T"].type = loss.dtype.as_datatype_enum
    r.attr["index"].i = 0
    geop = out.node.add(name="GeOp1_0", op="GeOp", device=DEVICE, input=arg_src)
    geop.attr["function"].func.name = "GeOp1_0"
    geop.attr["Tin"].list.type.extend([f.dtype.as_datatype_enum for f in feeds])
    geop.attr["Tout"].list.type.extend([loss.dtype.as_datatype_enum])
    geop.attr["data_format"].s = b"NHWC"
    geop.attr["_NpuOptimizer"].s = b"NpuOptimizer"
    # "_" + each NpuOptimizer session option (npu_attrs.cc GetAllAttrOptions); a
    # representative subset, values as the adapter writes them (bools as "1"/"0").
    options = {
        "_do_npu_optimizer": "1", "_enable_data_pre_proc": "0", "_use_off_line": "1",
        "_mix_compile_mode": "0", "_iterations_per_loop": "1", "_lower_functional_ops": "0",
        "_job": "localhost", "_task_index": "0", "_precision_mode": "allow_fp32_to_fp16",
        "_variable_format_optimize": "1", "_hcom_parallel": "0", "_enable_dump": "0",
        "_profiling_mode": "1",
        "_profiling_options": '{"output":"/tmp/profiling","training_trace":"on",'
                              '"fp_point":"","bp_point":""}',
        "_placeholder_index": "",
    }
    for k, v in options.items():
        geop.attr[k].s = v.encode()
    out.library.function.add().CopyFrom(fdef)
    out.versions.CopyFrom(gd.versions)
    return _write(out, out_dir, "npu_geop")


ALL = ["keras_fit", "keras_fit_steps_per_execution", "keras2_fit", "keras2_fit_steps_per_execution",
       "tf10_placeholders", "npu_geop"]


def main(argv):
    out_dir = os.path.abspath(argv[1] if len(argv) > 1 else DEFAULT_OUT)
    names = argv[2:] or ALL
    os.makedirs(out_dir, exist_ok=True)
    if len(names) == 1:
        path = globals()["make_" + names[0]](out_dir)
        print("%s %d bytes (TF %s)" % (os.path.relpath(path), os.path.getsize(path), tf.__version__))
        return 0
    import subprocess
    rc = 0
    for name in names:
        rc |= subprocess.call([sys.executable, os.path.abspath(__file__), out_dir, name])
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
