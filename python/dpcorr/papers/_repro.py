"""What the paper bindings share: declaring their functions, the reproduction parameters built
from the library's table (keywords left None are the library's defaults), the claim lists and
results as Python values."""

import ctypes
import math

import numpy as np

from .. import _check
from .. import _lib
from .._lib import c_size_t


def declare(lib, signatures):
    """Sets restype and argtypes of each (name, restype, argtypes) of lib."""
    for name, restype, argtypes in signatures:
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


def params(mirror, init, **given):
    """A reproduction's parameters: the library's _init, then each keyword that is not None
    through its table row (an ENUM by name; an integer within the row's range, any one when the
    row has none), refused by the keyword's name."""
    p = mirror()
    init(ctypes.byref(p))
    for name, value in given.items():
        if value is None:
            continue
        f = _lib.row(mirror, name)
        if f.type == _lib.FIELD_ENUM:
            names = _lib.enum_names(mirror, name)
            setattr(p, name, _lib.enum_value(mirror, name, _check.choice(name, value, names)))
        elif math.isinf(f.hi) or (f.lo == 0 and f.hi == 0):
            setattr(p, name, _check.size(name, value))
        else:
            setattr(p, name, _check.size(name, value, int(f.lo), int(f.hi)))
    return p


def strings(fn):
    """The strings of a `const char **fn(size_t *n)` list."""
    n = c_size_t()
    arr = fn(ctypes.byref(n))
    return [arr[i].decode() for i in range(n.value)]


def value(v):
    """A ctypes value as Python: numbers as they are, strings decoded, a struct as a dict of its
    members, an array of structs as a list, an array of numbers (nested: 2-D) as a numpy copy."""
    if isinstance(v, ctypes.Structure):
        return {name: value(getattr(v, name)) for name, _ in v._fields_}
    if isinstance(v, ctypes.Array):
        if issubclass(v._type_, ctypes.Structure):
            return [value(e) for e in v]
        return np.ctypeslib.as_array(v).copy()
    if isinstance(v, bytes):
        return v.decode()
    return v
