"""The exceptions of the package.

Errors reported by the C library keep its message (which names the parameter at fault with the
library's name for it, e.g. ``"mech.nu: must be in [0, 1), got 1.5"``) and carry:

* ``field``: the library's name of the parameter at fault ("" when no single parameter is);
* ``status``: the library's status name ("invalid argument", "privacy", ...);
* ``code``: the numeric dpc_status.

Bad input (an invalid, unsupported or out-of-range value, an impossible privacy budget, a
malformed file) raises :class:`DpcorrValueError`, a ``ValueError``; everything else (I/O, memory,
numerical failure, an object used in the wrong state) raises :class:`DpcorrRuntimeError`, a
``RuntimeError``. Checks made by the binding itself (Python types, negative sizes, array dtypes
and layouts) raise plain ``TypeError`` / ``ValueError`` with the same ``name: message`` style.
"""

# dpc_status codes (include/dpcorr/common.h)
OK, E_INVALID, E_NOMEM, E_IO, E_FORMAT, E_NUMERIC, E_PRIVACY, E_UNSUPPORTED, E_RANGE, E_STATE = \
    range(10)

_VALUE_CODES = {E_INVALID, E_FORMAT, E_PRIVACY, E_UNSUPPORTED, E_RANGE}


class DpcorrError(Exception):
    """Base of the errors raised for a failed library call."""

    def __init__(self, message, field="", status="", code=0):
        super().__init__(message)
        self.field = field
        self.status = status
        self.code = code


class DpcorrValueError(DpcorrError, ValueError):
    """The library refused an input (invalid, unsupported, out of range, impossible budget)."""


class DpcorrRuntimeError(DpcorrError, RuntimeError):
    """The library failed for another reason (I/O, memory, numerics, state)."""


def raise_for(code, field, msg, status):
    """Raises the exception for a failed library call."""
    cls = DpcorrValueError if code in _VALUE_CODES else DpcorrRuntimeError
    raise cls(msg or status, field=field, status=status, code=code)
