"""The skills shipped with Noma Workbench, as package data (one directory per skill).

Not imported for code: ``core.skills_runtime.shipped`` locates this folder through
``importlib.resources``; skill code runs only inside the sandbox.
"""
