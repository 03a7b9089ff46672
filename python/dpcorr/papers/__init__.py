"""The papers' reproductions (``include/dpcorr/papers/``): the same library calls as ``dpcorr
repro TARGET``, so the numbers are the CLI's; the CLI writes them as CSV, JSON and plots, these
functions return them as numpy arrays and dicts.

* :mod:`dpcorr.papers.nu`: the nu-DP-FTRL paper's Figures 1, 2, 3 and Tables 1, 2, 4
  (``dpcorr repro nu-fig1``, ``nu-fig2``, ``nu-fig3``, ``nu-tables``).
* :mod:`dpcorr.papers.kan`: the KAN + DP-lambda-CGD paper's parts 1-3, 6, 7 (``dpcorr repro
  kan``).
* :mod:`dpcorr.papers.linreg`: the DP-AMBSSGD scaling study (``dpcorr repro ambssgd``).
* :mod:`dpcorr.papers.srgd`: the DP-SRGD paper's scalings (``dpcorr repro srgd``).
"""

from . import kan
from . import linreg
from . import nu
from . import srgd

__all__ = ["kan", "linreg", "nu", "srgd"]
