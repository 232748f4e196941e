"""Acceptance: 200 concurrent execute_skill calls on loopback.

All answer, none is lost or mixed up, at most ``slots`` sandboxes run at once (the rest
wait in a queue that costs a few hundred bytes each), and the server's memory stays
bounded. Only counts and memory are asserted, never wall-clock time.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from skills_testlib import Server

CALLS = 200


async def _fire(server: Server) -> list[dict]:
    limits = httpx.Limits(max_connections=CALLS, max_keepalive_connections=CALLS)
    auth = {"Authorization": server.client.headers["Authorization"]}
    async with httpx.AsyncClient(timeout=300, limits=limits, headers=auth) as client:

        async def one(i: int) -> dict:
            body = {
                "jsonrpc": "2.0",
                "id": i,
                "method": "execute_skill",
                "params": {"name": "acme.echo", "args": {"i": i}},
            }
            return (await client.post(f"{server.base}/rpc", json=body)).json()

        return await asyncio.gather(*(one(i) for i in range(CALLS)))


@pytest.mark.long(10)
def test_200_concurrent_execute_skill_calls(server: Server) -> None:
    server.assert_serving()
    rss_before = server.rss_kib()
    replies = asyncio.run(_fire(server))
    rss_after = server.rss_kib()

    assert len(replies) == CALLS
    assert sorted(r["id"] for r in replies) == list(range(CALLS))
    for reply in replies:
        result = reply["result"]
        assert result["status"] == "completed", result
        assert result["output"] == {"echo": {"i": reply["id"]}}
    assert len({r["result"]["run_id"] for r in replies}) == CALLS

    health = server.health()["sandbox"]
    assert health["peak_active"] <= health["slots"]
    assert health["runs"] >= CALLS
    assert rss_after - rss_before < 48 * 1024, (rss_before, rss_after)
    server.assert_serving()
