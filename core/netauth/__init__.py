"""One authentication layer for every HTTP surface (the hub's REST routes, the Skills
``/rpc``, under ``noma serve`` and ``noma skills serve`` alike).

`local_token` keeps the per-user server token (a 0600 file the CLI, the app and tests find
on their own); `gate` is the one ASGI middleware that checks the Host, the bearer token and
the content type of every request; `bind` says which addresses a server may listen on.
"""
