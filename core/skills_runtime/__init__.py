"""Skills runtime: skill and blob stores, run orchestration, JSON-RPC 2.0 over HTTP.

Implements the Skills Protocol v0.1. Runs execute in ``sandbox``; this package only
resolves skills and blobs, shapes run records and speaks the protocol.
"""
