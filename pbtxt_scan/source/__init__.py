"""Opening bytes: a path, ``-`` for stdin, gzip (``_source``); what a file is when it is no graph,
told by its first bytes (``_kinds``: an event file, a checkpoint's files, an image, UTF-16, empty,
prose); the byte stores (``_store``); byte-range views with their own
position (``_views``); the lane protocol a graph file reads through (``_lane``: text or wire format); CRC-32C (``_crc32c``).
"""
