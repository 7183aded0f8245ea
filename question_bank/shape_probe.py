"""A stand-in array that carries only a shape.

Shape questions use realistic sizes (V = 50,257, T = 1,024, ...) whose real
tensors would take gigabytes. Passing :class:`ShapeProbe` objects through the
reference functions in ``solutions/`` (which use only ``@``, ``+``,
``.reshape``, ``.T``, ``.sum`` and ``.shape``) yields the result shapes those
functions produce, without allocating anything. A test runs the same
functions on small real arrays and compares.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def _shape_of(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, ShapeProbe) else np.shape(x)


def matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """Result shape of ``a @ b`` under NumPy's matmul rules.

    Raises:
        ValueError: when the contracted axes differ, as NumPy would.
    """
    if not a or not b:
        raise ValueError("matmul: input operand does not have enough dimensions")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: mismatch in core dimension ({a2[-1]} vs {b2[-2]}) for {a} @ {b}")
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    core = (() if len(a) == 1 else (a2[-2],)) + (() if len(b) == 1 else (b2[-1],))
    return tuple(batch) + core


class ShapeProbe:
    """An array-like with a shape and no data."""

    # NumPy must defer to our operators instead of trying to convert us.
    __array_ufunc__ = None

    def __init__(self, shape: tuple[int, ...] | list[int]):
        self.shape = tuple(int(s) for s in shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def T(self) -> "ShapeProbe":  # noqa: N802 - mirrors ndarray.T
        return ShapeProbe(self.shape[::-1])

    def reshape(self, *shape: Any) -> "ShapeProbe":
        """Reshape with NumPy's rules, including one ``-1`` axis."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        dims = [int(s) for s in shape]
        if dims.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        known = math.prod(d for d in dims if d != -1)
        if -1 in dims:
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape {self.shape} into {tuple(dims)}")
            dims[dims.index(-1)] = self.size // known
        if math.prod(dims) != self.size:
            raise ValueError(f"cannot reshape {self.shape} into {tuple(dims)}")
        return ShapeProbe(dims)

    def sum(self, axis: int | None = None, keepdims: bool = False) -> "ShapeProbe":
        if axis is None:
            return ShapeProbe((1,) * self.ndim if keepdims else ())
        axis = axis % self.ndim
        if keepdims:
            return ShapeProbe(self.shape[:axis] + (1,) + self.shape[axis + 1:])
        return ShapeProbe(self.shape[:axis] + self.shape[axis + 1:])

    def __matmul__(self, other: Any) -> "ShapeProbe":
        return ShapeProbe(matmul_shape(self.shape, _shape_of(other)))

    def __rmatmul__(self, other: Any) -> "ShapeProbe":
        return ShapeProbe(matmul_shape(_shape_of(other), self.shape))

    def __add__(self, other: Any) -> "ShapeProbe":
        return ShapeProbe(np.broadcast_shapes(self.shape, _shape_of(other)))

    __radd__ = __add__

    def __repr__(self) -> str:
        return f"ShapeProbe{self.shape}"
