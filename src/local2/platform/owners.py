"""Whose each run and each store item is on LangGraph Server.

The platform's custom auth (:mod:`local2.platform.auth`) names the person behind every
request; the server puts that name in each run's config (``langgraph_auth_user_id``), so the
graph knows whose turn it is (:func:`run_owner`). In the platform's store each person has a
part of their own: local's items stay where they always were (``("local2", "turns")``, so a
one-person install keeps its store as it was), everyone else's are under
``("people", <name>, ...)`` (:func:`owned`; a ``.`` in a name is ``%2E`` there). The graph
writes through :class:`OwnedStore` and the HTTP store API is rewritten the same way by the
auth, so a person reading ``["local2", "turns"]`` sees exactly the turns the graph kept for
them, and no one else's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from local2.contracts import LOCAL_NAME

AUTH_USER_ID = "langgraph_auth_user_id"  # set by LangGraph Server in every run's config
PEOPLE = "people"  # the first label of every namespace that is a person's (not local's)
DOT = "%2E"


def run_owner(config: Mapping[str, Any] | None) -> str:
    """Whose run this is: the person the platform authenticated (local when the server
    names nobody, or outside the server)."""
    configurable = (config or {}).get("configurable") or {}
    return str(configurable.get(AUTH_USER_ID) or LOCAL_NAME)


def label_of(owner: str) -> str:
    """``owner`` as a namespace label: a store label may not hold a ``.``, a name may
    (an e-mail address from a proxy), and no name holds a ``%``."""
    return owner.replace(".", DOT)


def owner_of(label: str) -> str:
    """The person a label of :func:`label_of` names."""
    return label.replace(DOT, ".")


def scope_of(owner: str) -> tuple[str, ...]:
    """The labels before each of ``owner``'s namespaces (none for local)."""
    return () if owner == LOCAL_NAME else (PEOPLE, label_of(owner))


def owned(owner: str, namespace: Iterable[str]) -> tuple[str, ...]:
    """Where ``owner``'s ``namespace`` is kept in the platform's store."""
    return (*scope_of(owner), *namespace)


class OwnedStore(BaseStore):
    """One person's part of a store: every namespace is theirs (:func:`owned`), and items
    come back with the namespace they were asked by."""

    def __init__(self, inner: BaseStore, owner: str) -> None:
        self.inner = inner
        self.scope = scope_of(owner)
        self.supports_ttl = inner.supports_ttl
        self.ttl_config = inner.ttl_config

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        asked = list(ops)
        return [self._out(r) for r in self.inner.batch([self._in(op) for op in asked])]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        asked = list(ops)
        return [self._out(r) for r in await self.inner.abatch([self._in(op) for op in asked])]

    def _in(self, op: Op) -> Op:
        if isinstance(op, GetOp | PutOp):
            return op._replace(namespace=(*self.scope, *op.namespace))
        if isinstance(op, SearchOp):
            return op._replace(namespace_prefix=(*self.scope, *op.namespace_prefix))
        if isinstance(op, ListNamespacesOp):
            conditions = [
                c._replace(path=(*self.scope, *c.path)) if c.match_type == "prefix" else c
                for c in op.match_conditions or ()
            ]
            if not any(c.match_type == "prefix" for c in conditions):
                conditions.insert(0, MatchCondition("prefix", self.scope))
            depth = op.max_depth + len(self.scope) if op.max_depth is not None else None
            return op._replace(match_conditions=tuple(conditions), max_depth=depth)
        return op

    def _out(self, result: Result) -> Result:
        cut = len(self.scope)
        if not cut:
            return result
        if isinstance(result, Item):
            return self._unscoped(result)
        if isinstance(result, list):
            return [  # type: ignore[return-value]  # items, or namespaces: never both
                self._unscoped(r) if isinstance(r, Item) else tuple(r[cut:]) for r in result
            ]
        return result

    def _unscoped(self, item: Item) -> Item:
        namespace = item.namespace[len(self.scope) :]
        if isinstance(item, SearchItem):
            return SearchItem(
                namespace, item.key, item.value, item.created_at, item.updated_at, item.score
            )
        return Item(
            value=item.value,
            key=item.key,
            namespace=namespace,
            created_at=item.created_at,
            updated_at=item.updated_at,
        )
