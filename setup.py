"""Build hook: compile the first search's kernels ahead of time into the extension modules
``gpuppdp.kernels._aot`` and ``._aot_1`` (see ``gpuppdp/kernels/aot.py``).  Everything else
about the package is in ``pyproject.toml``.

Without a C compiler (or if Numba's ahead-of-time compiler fails), or with ``GPUPPDP_AOT=0``
in the environment, the package installs all the same, and its kernels compile on first use;
the wheel is then a pure-Python one (``py3-none-any``), and no extension of an earlier build
is left in the build folder to be shipped by mistake.
"""

import importlib.util
import os
import sys

from setuptools import Extension, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def _source_package() -> None:
    """Import ``gpuppdp`` from this source tree (the build's own imports do not see it)."""
    spec = importlib.util.spec_from_file_location(
        "gpuppdp", os.path.join(HERE, "gpuppdp", "__init__.py"),
        submodule_search_locations=[os.path.join(HERE, "gpuppdp")])
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpuppdp"] = module
    spec.loader.exec_module(module)


class BuildKernels(build_ext):
    """Builds the extension's modules, all at once, with :func:`gpuppdp.kernels.aot.build`
    (which compiles them in parallel processes)."""

    def build_extensions(self):
        if os.environ.get("GPUPPDP_AOT") == "0":
            print("gpuppdp: GPUPPDP_AOT=0: kernels not compiled ahead of time", file=sys.stderr)
            self._leave_out()
            return
        targets = [self.get_ext_fullpath(ext.name) for ext in self.extensions]
        for target in targets:
            os.makedirs(os.path.dirname(target), exist_ok=True)
        try:
            _source_package()
            from gpuppdp.kernels import aot

            meta = aot.build(targets)
        except Exception as exc:  # noqa: BLE001 - the kernels then compile on first use
            print(f"gpuppdp: kernels not compiled ahead of time ({type(exc).__name__}: {exc});"
                  " they compile on first use", file=sys.stderr)
            self._leave_out()
            return
        n = sum(len(v) for v in meta["exports"].values())
        print(f"gpuppdp: {n} kernel signatures compiled ahead of time for {meta['cpu']}",
              file=sys.stderr)

    def _leave_out(self):
        """Drop the extension's modules, not built, from the outputs that setuptools copies
        into the wheel or, for an editable install, into the source tree (it would fail on
        the missing files), remove an earlier build's files at their places, and leave the
        package without extension modules (a pure wheel, :class:`PureWithoutKernels`)."""
        for ext in self.extensions:
            stale = self.get_ext_fullpath(ext.name)
            if os.path.exists(stale):
                os.remove(stale)
        self.extensions = []
        self.distribution.ext_modules = []


class PureWithoutKernels(bdist_wheel):
    """A platform wheel only when the kernels were compiled: otherwise ``py3-none-any``."""

    def run(self):
        self.run_command("build")  # once: the command below finds it done
        self.root_is_pure = not self.distribution.ext_modules
        super().run()


#: gpuppdp.kernels.aot.PARTS, the extension's modules (the build imports the package only when
#: it compiles; tests/test_aot.py checks that the two agree)
PARTS = ("_aot", "_aot_1")

setup(ext_modules=[Extension(f"gpuppdp.kernels.{part}", sources=[]) for part in PARTS],
      cmdclass={"build_ext": BuildKernels, "bdist_wheel": PureWithoutKernels})
