"""ctest's python_pytest: run the Python tests on the module built in the build tree.

What the tests need and is missing makes this exit 77, which ctest reports as skipped
with the reason printed; pytest finding no test (exit 5) is a failure, never a pass.
"""
import importlib.util
import os
import sys

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    missing = [m for m in ("numpy", "scipy", "pytest") if importlib.util.find_spec(m) is None]
    if missing:
        print("SKIP: python_pytest needs " + ", ".join(missing) +
              " (pip install numpy scipy pytest)", flush=True)
        return SKIP
    import pytest
    args = [HERE, "-q", "-p", "no:cacheprovider"] + sys.argv[1:]
    rc = pytest.main(args)
    if rc == 5:
        print("python_pytest: pytest collected no test", flush=True)
        return 1
    return int(rc)


if __name__ == "__main__":
    sys.exit(main())
