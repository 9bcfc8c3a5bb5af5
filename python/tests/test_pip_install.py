#!/usr/bin/env python3
"""`pip install ./python` into a fresh virtual environment, offline: Debian's
python3-venv and python3-setuptools build it (--no-build-isolation, --no-index,
--no-deps: the package has no runtime dependencies). Then, from the
installed copy (outside the repository, which must not be on sys.path),
`import attn_mlir` must report pyproject's version and find attn-translate
through ATTN_TRANSLATE and through PATH, and compile a kernel.

    test_pip_install.py ATTN_TRANSLATE
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)

CHECK = r"""
import importlib.metadata, os, sys, tempfile
import attn_mlir
from attn_mlir import compiler
assert attn_mlir.__file__.startswith(sys.prefix), attn_mlir.__file__
assert importlib.metadata.version("attn-mlir") == attn_mlir.__version__
found = compiler.find_attn_translate()
a = compiler.compile(compiler.Signature("f16", (None, 4, None, 64), (None, 4, None, 64),
                                        (None, 4, None, 64)), cache_dir=tempfile.mkdtemp())
print("installed", attn_mlir.__version__, "translate", os.path.basename(found),
      "kernel", a.manifest().kernel)
"""


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        sys.exit(f"test_pip_install: {' '.join(cmd)} failed ({proc.returncode}): "
                 f"{(proc.stderr or proc.stdout).strip()}")
    return proc.stdout


def main():
    translate = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        # A copy, so that the build's egg-info and build/ stay out of the tree.
        source = os.path.join(tmp, "src")
        shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns(
            "tests", "build", "*.egg-info", "__pycache__"))
        venv = os.path.join(tmp, "venv")
        # Debian's pip from the system site-packages installs into the venv.
        run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv])
        python = os.path.join(venv, "bin", "python")
        run([python, "-m", "pip", "install", "--no-index", "--no-build-isolation",
             "--no-deps", "--disable-pip-version-check", "-q", source])
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "ATTN_TRANSLATE", "ATTN_MLIR_CACHE_DIR")}
        # Through ATTN_TRANSLATE ...
        print(run([python, "-c", CHECK], cwd=tmp, env=dict(env, ATTN_TRANSLATE=translate)),
              end="")
        # ... and through PATH.
        path = os.path.dirname(translate) + os.pathsep + env.get("PATH", "")
        print(run([python, "-c", CHECK], cwd=tmp, env=dict(env, PATH=path)), end="")
        # Without either, one clear error.
        proc = subprocess.run([python, "-c", CHECK], cwd=tmp, capture_output=True, text=True,
                              env=dict(env, PATH="/usr/bin:/bin"))
        print(proc.stderr.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
