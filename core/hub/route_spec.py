"""One row of the hub's REST route table: its method and path, the handler-family action
it calls, the sub-gate in front of it and its request and response models.

A module of its own so that every file contributing rows (`routes.py`,
`candidate_routes.py`) imports it from below instead of from each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

Gate = Literal["none", "writes", "automatable"]


@dataclass(frozen=True, slots=True)
class RouteSpec:
    method: Literal["GET", "POST"]
    path: str
    action: str
    gate: Gate
    summary: str
    request: type[BaseModel] | None
    response: type[BaseModel]
    success: int = 200
    query: tuple[tuple[str, str], ...] = ()  # (name, JSON type) of optional query parameters
