"""Protocol buffers wire format (binary ``.pb``, ``.meta``, ``saved_model.pb``), streamed without
protobuf: the reader (``_wire_read``), the walk to the nodes (``_wire_walk``) and its sparse
backward index (``_wire_index``), where a byte offset lies by the length prefixes (``_wire_seek``),
a NodeDef printed as text format (``_wire_text``), the wire lane (``_lane``), whole-file folds and
split points (``_wire_whole``, with ``_wire_check``: a node's validity without rendering it) and
telling the kinds apart (``_binary``).
"""
