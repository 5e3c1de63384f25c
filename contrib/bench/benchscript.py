"""Load a sibling script of contrib/bench (they have no .py suffix) as a
module, so that the benchmarks share one set of contestants and helpers."""

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load(name):
    """contrib/bench/NAME as module NAME, loaded once."""
    if name in sys.modules:
        return sys.modules[name]
    loader = importlib.machinery.SourceFileLoader(name, str(HERE / name))
    spec = importlib.util.spec_from_loader(name, loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    loader.exec_module(mod)
    return mod
