"""Process isolation for skill code, and the in-sandbox ``runtime`` helper package.

``Sandbox`` runs a ``Job`` in a fresh process tree per call on the strongest isolation tier
this host supports (bubblewrap, namespaces, or an explicitly allowed degraded tier) and
returns an ``Outcome``. This package imports neither ``core`` nor ``noma_tui``.
"""

from sandbox.bridge import BlobBridge, BlobQuotaError, BlobWriter
from sandbox.config import Limits, SandboxConfig, TierName
from sandbox.job import Job, Outcome, RunError, SkillMount
from sandbox.runner import Sandbox, SandboxUnavailable

__all__ = [
    "BlobBridge",
    "BlobQuotaError",
    "BlobWriter",
    "Job",
    "Limits",
    "Outcome",
    "RunError",
    "Sandbox",
    "SandboxConfig",
    "SandboxUnavailable",
    "SkillMount",
    "TierName",
]
