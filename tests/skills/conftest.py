"""Registers the shared server fixture (see ``skills_testlib``)."""

from skills_testlib import server

__all__ = ["server"]
