"""Noma Workbench engine: pure Python, no UI, no printing.

Every surface (CLI, TUI, MCP, JSON-RPC) calls into this package so the same request
produces the same record everywhere.
"""

__version__ = "0.1.0"
