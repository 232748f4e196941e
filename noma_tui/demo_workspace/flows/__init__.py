"""Demo flow bundles (data). A package only so setuptools ships the ``*.flow.yaml`` files;
the flow catalog reads bundle files only, and the demo copy skips this file."""
