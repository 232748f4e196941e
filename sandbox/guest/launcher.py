"""Entry script of every sandbox run: ``/usr/bin/python3 -I -S launcher.py``.

A script given on the command line is compiled on every start; a module is loaded from
its cached bytecode. So this stub only puts its own directory on ``sys.path`` and hands
over to ``isolate`` (see there for what a run's setup does).
"""

import sys

sys.path.insert(0, __file__.rpartition("/")[0])
import isolate

sys.exit(isolate.main())
