import sys

try:  # Ctrl-C while the modules load (a second on a busy machine) exits 130 too, without a traceback
    from .cli import main
except KeyboardInterrupt:
    sys.stderr.write("interrupted\n")
    sys.exit(130)

main()
