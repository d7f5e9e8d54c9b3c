"""setup.py - builds the C library with CMake, then the extension
tileconv._core against it; the shared library is installed inside the
package (found through an $ORIGIN rpath). Environment: TILECONV_CUDA=ON/OFF
(default OFF: the package's arrays live on the host), TILECONV_BUILD_JOBS."""
import os
import shutil
import subprocess
from pathlib import Path

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuildExt(build_ext):
    def run(self):
        bt = Path(self.build_temp).resolve() / "cmake"
        bt.mkdir(parents=True, exist_ok=True)
        cuda = os.environ.get("TILECONV_CUDA", "OFF")
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(bt), "-DCMAKE_BUILD_TYPE=Release",
                               "-DTC_BENCH_PEERS=OFF", f"-DTC_ENABLE_CUDA={cuda}"])
        jobs = os.environ.get("TILECONV_BUILD_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", str(bt), "-j", jobs, "--target", "tileconv"])
        for ext in self.extensions:
            ext.library_dirs.append(str(bt))
        super().run()
        # the shared library beside the extension, under its soname
        dest = Path(self.get_ext_fullpath(self.extensions[0].name)).parent
        dest.mkdir(parents=True, exist_ok=True)
        for lib in bt.glob("libtileconv.so*"):
            if lib.is_symlink():
                continue
            soname = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
            name = "libtileconv.so.0"
            for line in soname.splitlines():
                if "SONAME" in line:
                    name = line.split("[")[1].split("]")[0]
            shutil.copy2(lib, dest / name)


setup(
    ext_modules=[Extension(
        "tileconv._core", ["python/tileconv/_core.c"],
        # setuptools rebuilds only when a listed file is newer than the
        # object: a changed header (a grown tc_conv_desc) must rebuild it
        depends=["include/tileconv.h"],
        include_dirs=[str(ROOT / "include"), numpy.get_include()],
        libraries=["tileconv"],
        extra_compile_args=["-std=gnu11", "-O2"],
        extra_link_args=["-Wl,-rpath,$ORIGIN"],
    )],
    cmdclass={"build_ext": CMakeBuildExt},
)
