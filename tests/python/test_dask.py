"""tileconv.dask against the in-memory tileconv.ndimage call (and scipy),
on dask arrays split into awkward chunks, every mode; once on a distributed
LocalCluster with worker processes."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask not installed (python3-dask)")
import scipy.ndimage as S  # noqa: E402

import tileconv.dask as TD  # noqa: E402
import tileconv.ndimage as T  # noqa: E402

MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]
R = np.random.default_rng(5)
X = R.uniform(-1, 1, (37, 29, 11))


def close(a, b, tol=1e-12):
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(1, np.abs(b).max()))


@pytest.mark.parametrize("mode", MODES)
def test_nd_filters(mode):
    x = da.from_array(X, chunks=(10, 8, 11))
    w = R.uniform(-1, 1, (5, 4, 3))
    for origin in (0, (1, -2, 1)):
        close(TD.correlate(x, w, mode=mode, cval=0.3, origin=origin).compute(),
              S.correlate(X, w, mode=mode, cval=0.3, origin=origin))
        close(TD.convolve(x, w, mode=mode, cval=0.3, origin=origin).compute(),
              S.convolve(X, w, mode=mode, cval=0.3, origin=origin))


@pytest.mark.parametrize("mode", MODES)
def test_nd_filters_axes(mode):
    """axes= (scipy's rule, as tileconv.ndimage): the unlisted axes are
    batch axes; against the in-memory call."""
    x = da.from_array(X, chunks=(10, 8, 11))
    w = R.uniform(-1, 1, (5, 3))
    for axes, origin in (((0, 2), (1, -1)), ((2, 0), 0), ((1, 2), (0, 1))):
        close(TD.correlate(x, w, mode=mode, cval=0.3, origin=origin, axes=axes).compute(),
              T.correlate(X, w, mode=mode, cval=0.3, origin=origin, axes=axes))
        close(TD.convolve(x, w, mode=mode, cval=0.3, origin=origin, axes=axes).compute(),
              T.convolve(X, w, mode=mode, cval=0.3, origin=origin, axes=axes))


@pytest.mark.parametrize("mode", MODES)
def test_separable_and_1d(mode):
    x = da.from_array(X, chunks=(9, 7, 6))
    close(TD.gaussian_filter(x, (1.5, 2.0, 0.8), mode=mode).compute(),
          S.gaussian_filter(X, (1.5, 2.0, 0.8), mode=mode))
    close(TD.uniform_filter(x, (3, 4, 5), mode=mode, origin=(1, 0, -1)).compute(),
          S.uniform_filter(X, (3, 4, 5), mode=mode, origin=(1, 0, -1)))
    close(TD.correlate1d(x, [1.0, -2.0, 0.5, 0.25], axis=1, mode=mode, origin=-1).compute(),
          S.correlate1d(X, [1.0, -2.0, 0.5, 0.25], axis=1, mode=mode, origin=-1))
    close(TD.sobel(x, 0, mode=mode).compute(), S.sobel(X, 0, mode=mode))
    close(TD.laplace(x, mode=mode).compute(), S.laplace(X, mode=mode))


def test_matches_in_memory_float32():
    x32 = X.astype(np.float32)
    y = TD.gaussian_filter(da.from_array(x32, chunks=(12, 10, 11)), 1.2).compute()
    close(y, T.gaussian_filter(x32, 1.2), 2e-6)


def test_distributed_local_cluster():
    distributed = pytest.importorskip("distributed", reason="python3-distributed not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cl, distributed.Client(cl):
        x = da.from_array(X, chunks=(10, 10, 11))
        close(TD.gaussian_filter(x, 1.7, mode="wrap").compute(), S.gaussian_filter(X, 1.7, mode="wrap"))
