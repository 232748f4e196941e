"""Registers the per-tier sandbox fixtures (see ``sandbox_testlib``)."""

from sandbox_testlib import _module_leaves_nothing, sandbox

__all__ = ["_module_leaves_nothing", "sandbox"]
