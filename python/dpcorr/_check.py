"""Argument checks made by the binding before a value reaches C (where a negative size would
silently wrap around). Messages follow the library's style: ``"<name>: must be ..., got ..."``."""

import numbers

import numpy as np

SIZE_MAX = (1 << 64) - 1


def size(name, value, minimum=0):
    """A non-negative integer (Python or numpy int, not bool) that fits a size_t."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if value < minimum or value > SIZE_MAX:
        raise ValueError(f"{name}: must be an integer >= {minimum}, got {value}")
    return value


def real(name, value):
    """A real number as a Python float (NaN and infinities pass: the library refuses them where
    they are invalid, with its own message)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def flag(name, value):
    """A boolean (bool, or the integers 0 and 1)."""
    if isinstance(value, (bool, np.bool_)) or value in (0, 1):
        return bool(value)
    raise TypeError(f"{name}: must be True or False, got {value!r}")


def vector(name, values):
    """A 1-D float64 C-contiguous array of finite or non-finite reals (copied when needed)."""
    try:
        arr = np.ascontiguousarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected a sequence of real numbers ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence, got shape {arr.shape}")
    return arr


def choice(name, value, options):
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name}: expected one of {', '.join(options)}, got {value!r}")
    return value
