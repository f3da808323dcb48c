"""The peers ``benchmarks.run`` times beside pbtxt-scan, one module each, each run as
``python -m benchmarks.peers.NAME FILE`` in its own subprocess: ``naive`` (whole file in memory +
regex), ``lark_parse`` (a full Lark parse), ``protobuf_text`` (protobuf's ``text_format``)."""
