"""Package-level contract: pure numpy/scipy, documented, frozen results."""

import ast
import dataclasses
import inspect
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import evaluation.stats as S

PKG = pathlib.Path(S.__file__).parent
#: numpy, scipy and the standard library, krippendorff (a numpy package, the reference for Krippendorff's alpha) and
#: sacrebleu (TER, for HTER).
ALLOWED_TOP = {"numpy", "scipy", "math", "dataclasses", "collections", "__future__", "warnings", "krippendorff",
               "sacrebleu"}


def test_modules_import_only_numpy_scipy_and_stdlib():
    for path in PKG.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative import inside the package
                    continue
                names = [node.module.split(".")[0]]
            else:
                continue
            assert set(names) <= ALLOWED_TOP, f"{path.name} imports {names}"


def test_importing_the_package_does_not_load_django():
    code = ("import sys, evaluation.stats; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'annotation', 'rest_framework')]; "
            "assert not bad, bad")
    root = PKG.parent.parent
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)


def test_every_public_function_documents_its_method_section():
    public = [getattr(S, name) for name in S.__all__]
    functions = [f for f in public if inspect.isfunction(f)]
    assert len(functions) >= 15
    for f in functions:
        doc = inspect.getdoc(f) or ""
        assert "§" in doc, f"{f.__name__} docstring does not cite a docs/methods.md section"


def test_results_are_frozen_and_read_only():
    res = S.reliability([0, 0, 0], [1, 2, 4], [5, 5, 5], n_workers=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.p = np.zeros(1)
    with pytest.raises(ValueError):
        res.p[0] = 0.0
    assert dataclasses.is_dataclass(res) and set(dataclasses.asdict(res)) >= {"p", "reliable"}
