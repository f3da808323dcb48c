"""The committed schema tables are what tools/gen_schema.py makes of the vendored .proto files, and
the small .proto reader reads what those files use."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if not (ROOT / "tools" / "protos").is_dir():  # (an sdist carries tests/, not the maintainer's tools/)
    pytest.skip("tools/protos is not here", allow_module_level=True)
sys.path.insert(0, str(ROOT))

from tools import gen_ge_fields, gen_schema, proto_reader  # noqa: E402

from pbtxt_scan.schema import _ge_seen, _onnx, _tensorflow, default_schema  # noqa: E402

TABLES = {"_tensorflow.py": _tensorflow, "_onnx.py": _onnx}


@pytest.mark.parametrize("module", [m[0] for m in gen_schema.MODULES])
def test_the_committed_tables_are_the_protos(module: str) -> None:
    committed = (ROOT / "pbtxt_scan" / "schema" / module).read_text(encoding="utf-8")
    assert gen_schema.render(*gen_schema.MODULES[[m[0] for m in gen_schema.MODULES].index(module)]) == committed, (
        "run python -m tools.gen_schema --write"
    )


def test_one_field_changed_in_a_proto_is_caught(tmp_path: Path) -> None:
    protos = tmp_path / "protos"
    shutil.copytree(gen_schema.PROTOS, str(protos))
    node_def = protos / "tensorflow" / "core" / "framework" / "node_def.proto"
    text = node_def.read_text(encoding="utf-8")
    assert "string op = 2;" in text
    node_def.write_text(text.replace("string op = 2;", "string op = 9;"), encoding="utf-8")
    module = gen_schema.MODULES[0]
    assert gen_schema.render(*module) != gen_schema.render(*module, protos=str(protos))


def test_the_committed_ge_table_is_what_the_dumps_hold() -> None:
    """GE's ge_proto fields (no ge_ir.proto vendored): the names seen in tests/data/ge's dumps."""
    committed = (ROOT / "pbtxt_scan" / "schema" / "_ge_seen.py").read_text(encoding="utf-8")
    assert gen_ge_fields.render() == committed, "run python -m tools.gen_ge_fields --write"
    t = _ge_seen.MESSAGES
    assert {"name", "type", "input", "attr", "id", "stream_id", "input_desc", "output_desc", "subgraph_name"} <= set(t["ge.proto.OpDef"])
    assert t["ge.proto.GraphDef"]["op"] == "ge.proto.OpDef" and t["ge.proto.AttrEntry"] == {"key": "", "value": "ge.proto.AttrDef"}
    assert gen_ge_fields.messages_held(t) <= set(t)  # (every message a field holds is seen, its fields listed)


def test_a_field_added_to_a_dump_is_caught(tmp_path: Path) -> None:
    dumps = tmp_path / "ge"
    shutil.copytree(gen_ge_fields.DUMPS, str(dumps))
    dump = dumps / "mlp_sgd" / "ge_proto_00000003_graph_1_Build.txt"
    text = dump.read_text(encoding="utf-8")
    dump.write_text(text.replace("    id: 1\n", "    id: 1\n    workspace: 16\n", 1), encoding="utf-8")
    assert "workspace" not in gen_ge_fields.render() and "'workspace': ''" in gen_ge_fields.render(str(dumps))


def test_the_tables_cover_what_a_graph_file_holds() -> None:
    s = default_schema()
    for msg in ("GraphDef", "NodeDef", "AttrValue", "AttrValue.ListValue", "NameAttrList", "TensorProto",
                "TensorShapeProto", "ResourceHandleProto", "VersionDef", "FunctionDefLibrary", "FunctionDef",
                "OpDef", "GradientDef", "RegisteredGradient", "GraphDebugInfo", "FullTypeDef", "MetaGraphDef",
                "MetaGraphDef.MetaInfoDef", "CollectionDef", "SignatureDef", "TensorInfo", "SaverDef",
                "AssetFileDef", "SavedObjectGraph", "SavedModel"):
        assert s.has_message("tensorflow." + msg), msg
    assert s.has_message("onnx.ModelProto") and s.has_message("onnx.NodeProto")
    assert s.enums["tensorflow.DataType"]["DT_FLOAT"] == 1 and s.enums["tensorflow.DataType"]["DT_BFLOAT16"] == 14
    node = s.fields("tensorflow.NodeDef")
    assert (node["name"].number, node["op"].number, node["input"].repeated, node["attr"].type) == (
        1, 2, True, "tensorflow.NodeDef.AttrEntry")
    assert s.fields("tensorflow.AttrValue")["list"].oneof == "value"
    assert "tensorflow.NodeDef.AttrEntry" in s.map_entries
    assert "onnx.TensorProto.DataType" in s.closed and "tensorflow.DataType" not in s.closed
    assert s.source("tensorflow.NodeDef") == "TensorFlow 2.21.0" and s.source("onnx.NodeProto").startswith("ONNX ")


def test_the_reader_reads_the_forms_the_protos_use(tmp_path: Path) -> None:
    (tmp_path / "dep.proto").write_text('syntax = "proto3";\npackage d;\nenum Color { RED = 0; BLUE = 1; }\n', encoding="utf-8")
    (tmp_path / "main.proto").write_text(
        '// a comment\n/* a block\n comment */\nsyntax = "proto2";\npackage p.q;\nimport "dep.proto";\n'
        'option java_package = "x";\n'
        "message Outer {\n  reserved 4, 9 to 11;\n  reserved \"old\";\n  extensions 100 to max;\n"
        "  message Inner { optional int32 n = 1 [default = 5]; }\n"
        "  enum Kind { option allow_alias = true; A = 0; B = 1; C = 1 [deprecated = true]; }\n"
        "  required string name = 1;\n  repeated Inner inner = 2 [packed = false];\n"
        "  oneof choice { Kind kind = 3; .d.Color color = 5; }\n  map<string, Inner> by_name = 6;\n"
        "  optional d.Color tint = 7;\n}\nservice S { rpc M(Outer) returns (Outer); }\n",
        encoding="utf-8",
    )
    s = proto_reader.read(str(tmp_path), ["main.proto"])
    fields = {f.name: f for f in s.messages["p.q.Outer"].fields}
    assert fields["name"] == proto_reader.FieldDef("name", 1, "string", "required", "", "")
    assert fields["inner"].type == "p.q.Outer.Inner" and fields["inner"].label == "repeated"
    assert (fields["kind"].type, fields["kind"].oneof, fields["color"].type) == ("p.q.Outer.Kind", "choice", "d.Color")
    assert fields["by_name"].type == "p.q.Outer.ByNameEntry" and s.messages["p.q.Outer.ByNameEntry"].is_map_entry
    assert [f.type for f in s.messages["p.q.Outer.ByNameEntry"].fields] == ["string", "p.q.Outer.Inner"]
    assert fields["tint"].type == "d.Color"
    assert s.enums["p.q.Outer.Kind"].values == [("A", 0), ("B", 1), ("C", 1)] and s.enums["d.Color"].syntax == "proto3"


def test_the_graph_fields_written_out_are_the_tables() -> None:
    from pbtxt_scan._model import GRAPH_FIELDS
    from pbtxt_scan.text._strict import GRAPH, TopFields

    assert GRAPH_FIELDS == frozenset(_tensorflow.MESSAGES["tensorflow.GraphDef"])
    assert TopFields(GRAPH, None, None).names is GRAPH_FIELDS  # (what every text graph's top is checked against)
