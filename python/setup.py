"""Installs the dpcorr package with the libdpcorr.so that `make` copied into dpcorr/.

    make && /usr/bin/python3 -m pip install --no-build-isolation ./python

No compiler is needed: the package is pure Python over the shared library (ctypes)."""

import pathlib

from setuptools import setup
from setuptools.dist import Distribution

HERE = pathlib.Path(__file__).resolve().parent
if not (HERE / "dpcorr" / "libdpcorr.so").is_file():
    raise SystemExit("dpcorr: python/dpcorr/libdpcorr.so is missing; run `make` in the dpcorr "
                     "tree first (it copies build/libdpcorr.so next to the package)")


class BinaryDistribution(Distribution):
    """The wheel carries a platform-specific shared library."""

    def has_ext_modules(self):
        return True


setup(
    name="dpcorr",
    version="0.1.0",
    description="Differentially private ML with correlated noise (Python and PyTorch bindings "
                "of libdpcorr)",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    packages=["dpcorr", "dpcorr.papers", "dpcorr.torch"],
    package_data={"dpcorr": ["libdpcorr.so"]},
    python_requires=">=3.9",
    install_requires=["numpy"],
    extras_require={"torch": ["torch>=1.13"]},
    distclass=BinaryDistribution,
    zip_safe=False,
)
