"""The service (docs/architecture.md): the :class:`~local2.service.agent.Agent` façade and its
one-job parts, built in one place (:mod:`.wiring`). The surfaces (CLI, HTTP API, app) talk
to the agent and nothing below it.
"""
