#!/usr/bin/env python3
"""Make the binary twins in tests/data/binary/ from the committed text graphs.

Maintainer tool, like make_tf_fixtures.py: neither the project nor its tests
import it, and the project never needs TensorFlow. Run it in the throwaway venv:

    /tmp/tfvenv/bin/python tools/make_binary_twins.py

For each stem below, the committed ``tests/data/graphs/<stem>.pbtxt`` is parsed
with ``google.protobuf.text_format`` into a ``tf.compat.v1.GraphDef`` (so the
graph is *the same* GraphDef, node for node, and every answer in
``<stem>.expected.json`` holds for the twins too), then written as

* ``<stem>.pb``    ``GraphDef.SerializeToString()``;
* ``<stem>.meta``  ``tf.compat.v1.train.export_meta_graph(graph_def=..., saver_def=...)``
  on the imported graph: ``meta_info_def``, ``graph_def`` (the text twin's, unchanged),
  ``collection_def``, and a ``saver_def`` naming the graph's own ``save/*`` ops when it
  has them (estimator_queue), else one from a real ``Saver`` built on the imported graph
  (none for tf2_gradient_tape, which has no top-level variable);
* ``<stem>.pb.gz`` gzip of the ``.pb`` (only for ``GZ_STEMS``, mtime 0 so reruns are byte-identical);
* ``<stem>_saved_model/saved_model.pb`` (only for ``SAVED_MODEL_STEMS``):
  ``tf.compat.v1.saved_model.Builder`` with two MetaGraphs, ``serve`` first (the
  inference subgraph) and ``train`` second (the training graph); the
  ``variables/`` folder is not kept.

Serialization is deterministic (``deterministic=True``), so reruns are
byte-identical except for fields TensorFlow fills from the environment
(``meta_info_def.tensorflow_version``/``tensorflow_git_version``).
"""

import gzip
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402

v1 = tf.compat.v1

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHS = os.path.join(HERE, os.pardir, "tests", "data", "graphs")
OUT = os.path.join(HERE, os.pardir, "tests", "data", "binary")

STEMS = ["mlp_sgd", "tf2_gradient_tape", "estimator_queue", "gan_two_optimizers"]
GZ_STEMS = ["mlp_sgd"]
SAVED_MODEL_STEMS = {"mlp_sgd": "dense_1/BiasAdd"}


def load_text(stem):
    gd = v1.GraphDef()
    with open(os.path.join(GRAPHS, stem + ".pbtxt")) as f:
        text_format.Parse(f.read(), gd)
    return gd


def ser(msg):
    return msg.SerializeToString(deterministic=True)


def import_graph(gd):
    """The graph as a tf.Graph (for the Saver and the collections)."""
    g = tf.Graph()
    with g.as_default():
        v1.import_graph_def(gd, name="")
    return g


def saver_def_for(g):
    """The SaverDef a training run would have written for this graph, or None.

    If the graph already holds a Saver's ops (Estimator graphs do: ``save/...``),
    the SaverDef names those ops, as the Estimator's own ``.meta`` does. Otherwise
    a real ``tf.compat.v1.train.Saver`` is built on the imported graph; its
    ``save/*`` ops are added to ``g`` but not to the GraphDef written into the
    ``.meta`` (that one stays identical to the text twin).
    """
    names = {op.name for op in g.get_operations()}
    if "save/restore_all" in names:
        sharded = "save/MergeV2Checkpoints" in names
        return v1.train.SaverDef(
            filename_tensor_name="save/Const:0",
            save_tensor_name=("save/Identity:0" if sharded else "save/control_dependency:0"),
            restore_op_name="save/restore_all",
            max_to_keep=5, sharded=sharded, keep_checkpoint_every_n_hours=10000.0,
            version=v1.train.SaverDef.V2)
    saver = make_saver(g)
    return saver.as_saver_def() if saver else None


def make_saver(g, name="save"):
    """A real Saver over the graph's top-level variables (VariableV2 / VarHandleOp)."""
    with g.as_default():
        names = {op.name for op in g.get_operations()}
        var_list = {}
        for op in g.get_operations():
            if op.type == "VariableV2":
                var_list[op.name] = op.outputs[0]
            elif op.type == "VarHandleOp":
                # A resource variable is saved through a read of its handle: the
                # graph's own "<var>/Read/ReadVariableOp" (TF1 layers write one).
                read = op.name + "/Read/ReadVariableOp"
                if read in names:
                    var_list[op.name] = g.get_tensor_by_name(read + ":0")
                else:
                    var_list[op.name] = tf.raw_ops.ReadVariableOp(
                        resource=op.outputs[0], dtype=op.get_attr("dtype"), name=read)
        if not var_list:
            return None
        return v1.train.Saver(var_list=var_list, name=name, sharded=False)


def initialize(sess, g):
    """Run each variable's own initializer (``<var>/Assign``), as the init op would."""
    inits = [op for op in g.get_operations()
             if op.type in ("Assign", "AssignVariableOp") and op.name.endswith("/Assign")
             and not op.name.startswith("save")]
    sess.run(inits)


def make_meta(stem, gd):
    g = import_graph(gd)
    saver_def = saver_def_for(g)
    with g.as_default():
        # import_graph_def does not restore collections; add back the ones a
        # training script's graph carries (as bytes lists / node lists).
        for op in g.get_operations():
            if op.type in ("VariableV2", "VarHandleOp"):
                g.add_to_collection("variable_names", op.name)
        for op in g.get_operations():
            if op.name in ("train_op", "GradientDescent", "Adam", "Momentum", "StatefulPartitionedCall"):
                g.add_to_collection(v1.GraphKeys.TRAIN_OP, op)
        mg = v1.train.export_meta_graph(
            graph_def=gd,  # exactly the committed graph
            saver_def=saver_def,
            graph=g,
            clear_devices=False,
            strip_default_attrs=False)
    # export_meta_graph(graph_def=gd) copies gd into mg.graph_def unchanged.
    assert ser(mg.graph_def) == ser(gd), stem
    return mg


def make_saved_model(stem, gd, out_dir, logits_node):
    """saved_model.pb with MetaGraph 0 tagged ``serve`` and MetaGraph 1 tagged ``train``.

    ``serve`` is the inference subgraph (``extract_sub_graph`` to the logits: no
    gradients, no optimizer), written first so a reader must choose by tag.
    ``train`` is the full training graph plus the Saver's ``save/*`` ops appended
    after the last node of the text twin.
    """
    sm_dir = os.path.join(out_dir, stem + "_saved_model")
    if os.path.exists(sm_dir):
        shutil.rmtree(sm_dir)
    tmp = tempfile.mkdtemp(prefix="sm_")
    try:
        export_dir = os.path.join(tmp, "export")
        builder = v1.saved_model.Builder(export_dir)
        # The inference subgraph: logits and the variables' initializers (as a TF1
        # inference graph has them), none of the gradient or optimizer nodes.
        inits = [n.name for n in gd.node
                 if n.op in ("Assign", "AssignVariableOp") and n.name.endswith("/Assign")]
        serve_gd = v1.graph_util.extract_sub_graph(gd, [logits_node] + inits)
        serve_g = import_graph(serve_gd)
        with serve_g.as_default(), v1.Session(graph=serve_g) as sess:
            saver = make_saver(serve_g)
            initialize(sess, serve_g)
            x = serve_g.get_tensor_by_name("IteratorGetNext:0")
            logits = serve_g.get_tensor_by_name(logits_node + ":0")
            sig = {"serving_default": v1.saved_model.signature_def_utils.predict_signature_def(
                inputs={"x": x}, outputs={"logits": logits})}
            builder.add_meta_graph_and_variables(
                sess, [v1.saved_model.tag_constants.SERVING], signature_def_map=sig, saver=saver,
                strip_default_attrs=False, clear_devices=False)
        train_g = import_graph(gd)
        with train_g.as_default():
            saver = make_saver(train_g)
            builder.add_meta_graph([v1.saved_model.tag_constants.TRAINING], saver=saver,
                                   strip_default_attrs=False, clear_devices=False)
        builder.save(as_text=False)
        os.makedirs(sm_dir)
        shutil.copyfile(os.path.join(export_dir, "saved_model.pb"),
                        os.path.join(sm_dir, "saved_model.pb"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return os.path.join(sm_dir, "saved_model.pb")


def main(argv):
    out_dir = os.path.abspath(argv[1] if len(argv) > 1 else OUT)
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for stem in STEMS:
        gd = load_text(stem)
        pb = os.path.join(out_dir, stem + ".pb")
        with open(pb, "wb") as f:
            f.write(ser(gd))
        written.append(pb)
        meta = os.path.join(out_dir, stem + ".meta")
        with open(meta, "wb") as f:
            f.write(ser(make_meta(stem, gd)))
        written.append(meta)
        if stem in GZ_STEMS:
            gz = pb + ".gz"
            with open(pb, "rb") as src, open(gz, "wb") as raw:
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as dst:
                    dst.write(src.read())
            written.append(gz)
        if stem in SAVED_MODEL_STEMS:
            written.append(make_saved_model(stem, gd, out_dir, SAVED_MODEL_STEMS[stem]))
    for p in written:
        print("%s %d bytes" % (os.path.relpath(p), os.path.getsize(p)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
