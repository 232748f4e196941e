"""Code that runs inside the sandbox, under the system interpreter, stdlib only.

``launcher.py`` is the entry script of every run and ``runtime`` is the helper package
skill code imports. Nothing here may import ``sandbox`` or ``core``: inside a run, this
directory is all there is of the project.
"""
