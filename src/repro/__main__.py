import sys

from repro import jobserver

if jobserver.enabled():  # the workflow asked for it: a warm process runs the command
    raise SystemExit(jobserver.run(sys.argv[1:]))

from repro.cli import main

raise SystemExit(main())
