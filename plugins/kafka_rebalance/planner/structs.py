"""Numba structs for the planner's kernels: records of arrays that compiled functions take as one object.

A tuple of arrays passed to a compiled function has every array's reference count raised and lowered at each call:
the dispatcher's helpers, called millions of times with two tuples of fifty arrays, spent 58 % of its time there at 400
brokers. A struct is one object; a field read touches that field alone. (Topic spread's kernel, whose helpers take
tuples of about ten arrays, ran no faster on structs: its time is its searches'.) Each record is declared as a
namedtuple (its fields, and the type the kernels' annotations name) and registered here as a struct type with a proxy
class, whose constructor the kernels call.
"""

from __future__ import annotations

from typing import Any

from numba.core import types
from numba.experimental import structref


class Fields(types.StructRef):
    """A struct type whose fields take the types of the values first stored in them (literals as their plain types)."""

    def preprocess_fields(self, fields: tuple) -> tuple:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


def register(record: Any, typeclass: type[Fields], proxy: type[structref.StructRefProxy]) -> None:
    """Register ``typeclass`` as a struct type with ``record``'s fields (a namedtuple class), built by ``proxy``."""
    structref.register(typeclass)
    structref.define_proxy(proxy, typeclass, list(record._fields))
