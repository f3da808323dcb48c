"""Opening bytes: a path, ``-`` for stdin, gzip (``_source``); byte-range views with their own
position (``_views``); the lane protocol a graph file reads through (``_lane``: text or wire format).
"""
