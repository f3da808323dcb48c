"""Helpers shared by the test modules: no test module imports another one, they all import from here.

- ``cli``: typer's CliRunner with stderr kept apart on every click version, the app's click command built once;
- ``wire_encoder``: a tiny protobuf wire-format encoder (binary graphs without protobuf);
- ``hostile``: the table of bad inputs and their messages, the inputs that nest deep or hold huge
  numbers, the command list of the general guard, and a real process measured for time and memory;
- ``layouts``: a graph written again one top-level field per line (a non-canonical layout);
- ``messages``: random canonical messages (a Hypothesis strategy), their printer, and disturbances;
- ``lines``: lines of the fixture graphs, edited, for the regex agreement tests;
- ``graphs``: hand-made graph nodes in text;
- ``copies``: a real graph's node blocks repeated under renamed scopes (many input pipelines);
- ``pipes``: a pipe fed from a thread;
- ``examples``: a test's Hypothesis example count scaled from the profile's (conftest.py).
"""
