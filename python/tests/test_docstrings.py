"""Every docstring example runs and prints what it says (NumPy, the CPU or the GPU)."""
import doctest

import numpy as np
import pytest

import parprim

NAMES = sorted(n for n in parprim.__all__ if getattr(parprim, n).__doc__ and ">>>" in getattr(parprim, n).__doc__)


def test_every_function_has_an_example():
    functions = [n for n in parprim.__all__ if callable(getattr(parprim, n)) and n not in ("Array", "TopK")]
    missing = [n for n in functions if ">>>" not in (getattr(parprim, n).__doc__ or "")]
    assert not missing, f"no example in the docstring of {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_docstring_example(name):
    obj = getattr(parprim, name)
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(obj, name, globs={"np": np, "parprim": parprim}):
        runner.run(test)
    assert runner.failures == 0
