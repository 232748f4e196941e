"""The HTTP face of the skills runtime: JSON-RPC 2.0 at ``POST /rpc``, status at ``/healthz``.

The request body is read with a size cap before it is parsed, so one oversized POST costs
the server at most ``MAX_BODY_BYTES`` of memory.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from core.skills_runtime.errors import INVALID_REQUEST
from core.skills_runtime.jsonrpc import Dispatcher
from core.skills_runtime.service import SkillsRuntime

MAX_BODY_BYTES = 64 * 1024 * 1024


def create_app(runtime: SkillsRuntime) -> Starlette:
    dispatcher = Dispatcher(runtime.methods)

    async def rpc(request: Request) -> Response:
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                return JSONResponse(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": INVALID_REQUEST,
                            "message": "Invalid Request",
                            "data": {"reason": f"request body over {MAX_BODY_BYTES} bytes"},
                        },
                    },
                    status_code=413,
                )
        reply, status = await dispatcher.handle_http(bytes(body))
        if reply is None:
            return Response(status_code=204)
        return Response(reply, status_code=status, media_type="application/json")

    async def healthz(request: Request) -> Response:
        return JSONResponse(
            {
                "ok": runtime.sandbox.unavailable_reason is None,
                "sandbox": runtime.sandbox.describe(),
            }
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await runtime.start()
        try:
            yield
        finally:
            await runtime.close()

    return Starlette(
        routes=[Route("/rpc", rpc, methods=["POST"]), Route("/healthz", healthz, methods=["GET"])],
        lifespan=lifespan,
    )
