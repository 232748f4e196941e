"""Acceptance: the spec's Python client example, run unchanged, completes every step.

The code is taken byte for byte from the spec (shared/spec/skills-protocol-v0.1.txt) and
executed as is. Its client posts to the spec's default endpoint ``localhost:8080``; the
test gives it a ``requests`` module whose ``post`` sends that endpoint to the test server's
free port (real ``requests`` when installed, else an httpx-backed stand-in with the same
``post(url, json=...)`` / ``.json()`` surface), so nothing in the example is edited.
"""

from __future__ import annotations

import io
import re
import sys
import types
from contextlib import redirect_stdout
from typing import Any

import httpx
from skills_testlib import Server, spec_text

SPEC_ENDPOINT = "http://localhost:8080/rpc"


def example_code() -> str:
    text = spec_text()
    start = text.index("import requests\n")
    end = text.index("This example demonstrates:")
    return text[start:end]


def requests_for(server: Server) -> types.ModuleType:
    try:
        import requests as real  # type: ignore[import-untyped]
    except ImportError:
        real = None
    module = types.ModuleType("requests")

    def post(url: str, json: Any = None, **kwargs: Any) -> Any:
        assert url == SPEC_ENDPOINT, url
        target = f"{server.base}/rpc"
        if real is not None:
            return real.post(target, json=json, timeout=120, **kwargs)
        return httpx.post(target, json=json, timeout=120)

    module.post = post  # type: ignore[attr-defined]
    return module


def test_spec_client_example_completes_every_step(server: Server, monkeypatch: Any) -> None:
    code = example_code()
    assert "client = SkillsRuntimeClient()" in code  # the spec's default endpoint, unchanged
    monkeypatch.setitem(sys.modules, "requests", requests_for(server))
    out = io.StringIO()
    with redirect_stdout(out):
        exec(compile(code, "skills-protocol-v0.1-client-example", "exec"), {"__name__": "__main__"})
    printed = out.getvalue()
    # 1. the guide; 2. discovery; 3. describe; 4. docs; 5. blob; 6. execute; 7. run_code
    assert "# Skills Protocol Overview" in printed
    assert "Found 1 Salesforce skills" in printed
    assert "Skill: Sync leads from a sheet blob into Salesforce." in printed
    assert "# Salesforce Lead Sync" in printed
    assert re.search(r"Created blob: blob:[0-9a-f]{32}", printed)
    assert "Success: Synced 1 leads (1 failed)." in printed
    assert "'updated_count': 1" in printed
    assert "Failed:" not in printed
    assert "Custom workflow result: {'synced': 4, 'errors': [{'row': 6," in printed
