"""Children that must feel Ctrl-C: ``Popen(..., preexec_fn=default_sigint)``.

A test run started in the background of a non-interactive shell (``cmd &``, ``nohup``, as CI
scripts do) has SIGINT ignored; a child inherits an ignored signal across exec, and Python then
leaves it ignored instead of raising KeyboardInterrupt, so the child would finish its work and
exit 0 whatever the test sends it."""
import signal


def default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
