"""parallel: work on several processes, knowing nothing of what the work is.

``_cores`` (how many cores this process may use), ``_pool`` (the one module that starts worker
processes and programs), ``_plan`` (where to cut a file into chunks, at split points a caller's
finder gives). A low layer: it imports no ``text``, ``graph``, ``ge`` or ``fpbp``; their task
functions are handed to it.
"""
