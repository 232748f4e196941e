"""One row of the REST route table (`routes.ROUTES`): its own module, so the families that
contribute rows (`candidate_routes`) and the table that joins them both import it and
neither imports the other back.
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
