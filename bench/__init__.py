"""Benchmarks: ``python -m bench`` runs them; each module is also runnable alone."""
