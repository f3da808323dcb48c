"""Hand-made graph nodes in text (test_fp_ahead, test_fp_step)."""
from __future__ import annotations


def _node(name, op, inputs=(), shape=None):
    lines = ["node {", '  name: "%s"' % name, "  op: %s" % op]
    lines += ['  input: "%s"' % i for i in inputs]
    if shape is not None:
        dims = "".join("\n        dim {\n          size: %d\n        }" % d for d in shape)
        lines += ["  attr {", '    key: "shape"', "    value {", "      shape {%s" % dims, "      }", "    }", "  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"
