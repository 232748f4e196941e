"""The team hub: flow runs over HTTP (the contract's REST surface), bearer tokens, and the
one ASGI app ``noma serve`` runs (REST + the Skills Protocol ``/rpc``)."""
