"""Argument checks made by the binding before a value reaches C. Every user value the package
hands to ctypes goes through one of these: ctypes silently wraps an out-of-range integer into a
size_t (2**64 - 5 for -5, 0 for 2**64) and passes NaN through, so a refusal has to happen here,
naming the Python argument. Semantics (which values a parameter admits) stay with the library.

Messages follow the library's style, ``"<name>: must be ..., got ..."``. A value of the wrong
type raises ``TypeError``; a value out of range raises :class:`dpcorr.DpcorrValueError` (a
``ValueError``) with ``field`` = the Python argument and status "invalid argument", like a
refusal by the library."""

import math
import numbers

import numpy as np

from ._errors import DpcorrValueError, E_INVALID

SIZE_MAX = (1 << 64) - 1

# The library's cap on a step count (dpc_account_max_count: DPC_ACCOUNT_MAX_COUNT = 2^40, the
# CLI's too), read from the library (set by _lib at load: _check cannot import _lib). A count the
# library refuses is refused here first, naming the Python argument.
STEPS_MAX = 1 << 40


def refuse(name, message):
    """Raises the binding's refusal of argument `name` (message without the name)."""
    raise DpcorrValueError(f"{name}: {message}", field=name, status="invalid argument",
                           code=E_INVALID)


def size(name, value, minimum=0, maximum=SIZE_MAX):
    """An integer in [minimum, maximum] (Python or numpy int, not bool; at most a size_t). A
    float with an integral value (1e12) is refused: it usually means a typo or a lost unit."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    maximum = min(maximum, SIZE_MAX)
    if value < minimum or value > maximum:
        bound = f"in [{minimum}, {maximum}]" if maximum < SIZE_MAX else f">= {minimum}"
        refuse(name, f"must be an integer {bound}, got {value}")
    return value


def steps(name, value, minimum=1):
    """A step count: an integer in [minimum, STEPS_MAX] (the CLI's range)."""
    return size(name, value, minimum, STEPS_MAX)


def real(name, value):
    """A finite real number as a Python float (NaN and infinities are refused: no parameter of
    the library admits them, and a NaN that reaches a comparison in C may pass it)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value):
        refuse(name, f"must be a finite number, got {value}")
    return value


def flag(name, value):
    """A boolean (bool, or the integers 0 and 1)."""
    if isinstance(value, (bool, np.bool_)) or value in (0, 1):
        return bool(value)
    raise TypeError(f"{name}: must be True or False, got {value!r}")


def vector(name, values):
    """A 1-D float64 C-contiguous array of finite reals (copied when needed)."""
    try:
        arr = np.ascontiguousarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected a sequence of real numbers ({exc})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence, got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        refuse(name, f"entry {int(bad[0])} is {arr[bad[0]]}: every entry must be finite")
    return arr


def choice(name, value, options):
    """One of a fixed set of strings."""
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a string, got {type(value).__name__} {value!r}")
    if value not in options:
        raise ValueError(f"{name}: expected one of {', '.join(options)}, got {value!r}")
    return value
