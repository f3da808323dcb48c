"""The language: the Lark grammar (``grammar/pbtxt.lark``, parsed on demand by ``_grammar``), its
terminals as regex text (``_terminals``, generated), the writer layout's line built from them (``_lines``:
the one classifier, and the pieces each reader of that layout composes), the regex forms every Python reads
(``_atomic``), the string-literal skip at C speed (``_skip``) and a scalar's value (``_values``: a string
literal's bytes, a number). Imports nothing but plain data.
"""
