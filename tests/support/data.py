"""Where the test fixtures are (tests/data, described in tests/data/README.md)."""
from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
GRAPHS = DATA / "graphs"

# The graphs (stems under graphs/, and their binary twins) that stand for all 42 where a test runs
# every fixture the same way: each a kind of its own. A test that takes them
# (``support.marks.quick_graphs``) runs these in the quick set and every fixture in CI's slow run.
QUICK_GRAPHS = frozenset({
    "mlp_sgd",  # TF1 SGD, the README's example (and the GE dump's graph)
    "inference_no_gradients",  # no gradients: no bp
    "tf2_gradient_tape",  # TF2: both points in a function body
    "gan_two_optimizers",  # two optimizers, two gradients scopes
    "rnn_while",  # a while loop (frames, Enter/Exit)
    "estimator_queue",  # an Estimator fed by a queue
    "keras_fit",  # Keras 3's fit (its steps in functions)
    "tf10_placeholders",  # TensorFlow 1.0's graph, fed by placeholders
    "npu_geop",  # the Ascend adapter's rewritten graph
    "actor_critic_two_optimizers",  # two defensible answers each: fp and bp ambiguous
})

# Answers the tool still gets wrong on a fixture (none now; issue 34 emptied it): the tests of that answer are
# expected to fail (strict: once the tool is right they fail, and the entry goes).
KNOWN_WRONG = {
}


def expect_known_wrong(request, stem: str, kinds=("fp", "bp"), *, confidence: bool = False) -> None:  # type: ignore[no-untyped-def]
    """Mark the running test as an expected failure when ``stem``'s answer of one of ``kinds`` is
    in :data:`KNOWN_WRONG`: its name (the test checks names), or also its confidence."""
    import pytest

    for kind in kinds:
        why = KNOWN_WRONG.get((stem, kind, "name")) or (KNOWN_WRONG.get((stem, kind, "confidence")) if confidence else None)
        if why is not None:
            request.node.add_marker(pytest.mark.xfail(strict=True, reason="issue 34: " + why))
