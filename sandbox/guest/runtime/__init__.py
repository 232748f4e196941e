"""The in-sandbox helper library every run can import: ``from runtime import blobs, log``.

It lives only inside the sandbox (mounted read-only at ``/opt/noma/runtime``) and talks to
the server over the run's control channel, so skill code never handles file paths of the
host, ids of other runs' blobs, or the server's credentials.
"""

from runtime import blobs, log

__all__ = ["blobs", "log"]
