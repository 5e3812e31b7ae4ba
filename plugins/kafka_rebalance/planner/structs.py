"""Numba structs for the planner's kernels: records of arrays that compiled functions take as one object.

A tuple of arrays passed to a compiled function has every array's reference count raised and lowered at each call:
the dispatcher's helpers, called millions of times with two tuples of fifty arrays, spent 58 % of its time there at 400
brokers. A struct is one object; a field read touches that field alone. Each record is declared as a namedtuple (its
fields, and the type the kernels' annotations name) and registered here as a struct type with a proxy class, whose
constructor the kernels call (a struct Python hands the kernels is built in a cached kernel too: the constructor
called from Python compiles anew in every process). ``register_positional`` also lets kernels read a
struct's fields by position, as the tuple it replaces (the state's board, vetoes and log dirs:
``compiled_state.kernel_records``).
"""

from __future__ import annotations

import operator
from typing import Any

from numba.core import types
from numba.core.extending import overload
from numba.experimental import structref


class Fields(types.StructRef):
    """A struct type whose fields take the types of the values first stored in them (literals as their plain types)."""

    def preprocess_fields(self, fields: tuple) -> tuple:
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


def register(record: Any, typeclass: type[Fields], proxy: type[structref.StructRefProxy]) -> None:
    """Register ``typeclass`` as a struct type with ``record``'s fields (a namedtuple class), built by ``proxy``."""
    structref.register(typeclass)
    structref.define_proxy(proxy, typeclass, list(record._fields))


def _field_reader(name: str) -> Any:
    """A function returning the field ``name`` of a struct (numba reads no attribute named by a variable)."""
    space: dict[str, Any] = {}
    # (numba matches the reader's signature to the overload's, annotations included: strings here as there)
    exec(f"def read(value: Any, k: Any) -> Any:\n    return value.{name}\n", space)
    return space["read"]


def register_positional(record: Any, typeclass: type[Fields], proxy: type[structref.StructRefProxy]) -> None:
    """``register``, and the struct's fields read by position (``board[0]``, a literal index) as the tuple's were: the
    kernels written for a tuple take the struct unchanged, and the Python that builds and reads the tuple stays as it
    is (it hands the kernels ``proxy(*the_tuple)``)."""
    register(record, typeclass, proxy)
    readers = [_field_reader(name) for name in record._fields]

    @overload(operator.getitem)
    def _by_position(value: Any, k: Any) -> Any:
        if isinstance(value, typeclass) and isinstance(k, types.IntegerLiteral):
            return readers[k.literal_value]
        return None
