# The wattlas Python package: a CPython extension over libwattlas (the same
# C library as the command line, built from this repository) and a thin
# Python layer. Only Debian packages are needed: python3-dev,
# python3-setuptools (python3-numpy and python3-pandas optional).
#   make python                                  builds it in place (python/)
#   pip install --no-build-isolation ./python    installs it
import os
import shlex
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# a position-independent build of the library, for linking into a module
LIB = os.environ.get("WATTLAS_LIB", os.path.join(ROOT, "build-pic", "libwattlas.a"))


def pkg_config(*args):
    out = subprocess.run(["pkg-config", *args, "gsl", "inih", "cairo", "libpng", "xgboost", "zlib"],
                         check=True, capture_output=True, text=True).stdout
    return shlex.split(out)


def version():
    with open(os.path.join(ROOT, "core", "wattlas_core.h"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#define WL_VERSION"):
                return line.split('"')[1]
    raise RuntimeError("no WL_VERSION in core/wattlas_core.h")


if not os.environ.get("WATTLAS_LIB"):
    # the library this package links, built with -fPIC by the repository's
    # Makefile (a no-op when it is up to date)
    subprocess.run(["make", "-C", ROOT, "--no-print-directory", "pic-lib"], check=True)

ext = Extension(
    "wattlas._wattlas",
    sources=["_wattlas.c", "errors.c", "columns.c", "sweep.c", "presets.c", "tables.c", "cluster.c",
             "fit.c"],
    include_dirs=[os.path.join(ROOT, "include")],
    extra_compile_args=["-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Wshadow",
                        "-Wconversion", "-Wstrict-prototypes",
                        "-fopenmp"] + pkg_config("--cflags"),
    extra_objects=[LIB],
    extra_link_args=pkg_config("--libs") + ["-lm", "-fopenmp"],
    depends=[LIB, "wattlas_py.h"],
)

setup(
    name="wattlas",
    version=version(),
    description="Time, power and energy of AI workloads on GPUs at any clock",
    packages=["wattlas"],
    ext_modules=[ext],
    python_requires=">=3.9",
)
