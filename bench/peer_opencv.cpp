/*
 * peer_opencv.cpp - OpenCV peers for `tileconv bench`, exposed to C.
 *
 * cv::filter2D (a correlation, anchor at the centre, BORDER_CONSTANT with
 * 0: the same problem as tileconv's correlate, mode constant, cval 0) and
 * cv::sepFilter2D, both float32 in and out, on cv::Mat headers that wrap
 * the benchmark's own buffers (no copies). cv::setNumThreads(threads) is
 * applied before each call. OpenCV picks its own algorithm: for float
 * kernels of 11x11 and up filter2D goes through its DFT path.
 */
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "bench.h"

namespace {

struct cv_state {
    const float *x;
    float *y;
    int rows, cols;
    cv::Mat kernel, kx, ky;
    int threads;
    int sep;
};

int cv_run(void *p, char *err, size_t errn) {
    cv_state *s = static_cast<cv_state *>(p);
    try {
        cv::Mat src(s->rows, s->cols, CV_32F, const_cast<float *>(s->x));
        cv::Mat dst(s->rows, s->cols, CV_32F, s->y);
        if (s->sep)
            cv::sepFilter2D(src, dst, CV_32F, s->kx, s->ky, cv::Point(-1, -1), 0.0,
                            cv::BORDER_CONSTANT);
        else
            cv::filter2D(src, dst, CV_32F, s->kernel, cv::Point(-1, -1), 0.0,
                         cv::BORDER_CONSTANT);
        if (dst.data != reinterpret_cast<uchar *>(s->y)) {
            std::snprintf(err, errn, "OpenCV reallocated the output");
            return -1;
        }
    } catch (const cv::Exception &e) {
        std::snprintf(err, errn, "OpenCV: %s", e.what());
        return -1;
    } catch (...) {
        std::snprintf(err, errn, "OpenCV: unknown exception");
        return -1;
    }
    return 0;
}

void cv_fini(void *p) {
    cv_state *s = static_cast<cv_state *>(p);
    if (!s) return;
    std::free(s->y);
    delete s;
}

int cv_setup(bench_runner *r, const float *x, int64_t rows, int64_t cols, int threads,
             cv_state **out) {
    if (rows > 0x7fffffff || cols > 0x7fffffff) {
        std::snprintf(r->na, sizeof r->na, "image too large for cv::Mat");
        return -1;
    }
    cv_state *s = new (std::nothrow) cv_state();
    if (!s) {
        std::snprintf(r->na, sizeof r->na, "out of memory");
        return -1;
    }
    s->x = x;
    s->rows = (int)rows;
    s->cols = (int)cols;
    s->threads = threads;
    s->y = static_cast<float *>(bench_alloc((size_t)(rows * cols) * sizeof(float)));
    if (!s->y) {
        delete s;
        std::snprintf(r->na, sizeof r->na, "out of memory");
        return -1;
    }
    cv::setNumThreads(threads);
    *out = s;
    r->run = cv_run;
    r->fini = cv_fini;
    r->st = s;
    r->y = s->y;
    r->ny = rows * cols;
    r->threads = threads;
    r->kind = BK_PEER;
    return 0;
}

} // namespace

extern "C" int peer_opencv_filter2d(bench_runner *r, const float *x, int64_t rows,
                                    int64_t cols, const float *mask, int kr, int kc,
                                    int threads) {
    cv_state *s;
    if (cv_setup(r, x, rows, cols, threads, &s)) return -1;
    s->kernel = cv::Mat(kr, kc, CV_32F, const_cast<float *>(mask)).clone();
    std::snprintf(r->name, sizeof r->name, "opencv.filter2D");
    std::snprintf(r->info, sizeof r->info, "OpenCV %s (%d threads)%s", CV_VERSION,
                  cv::getNumThreads(),
                  (kr * kc >= 130) ? ", DFT path (kernel >= 11x11)" : "");
    return 0;
}

extern "C" int peer_opencv_sepfilter2d(bench_runner *r, const float *x, int64_t rows,
                                       int64_t cols, const float *kx, const float *ky,
                                       int k, int threads) {
    cv_state *s;
    if (cv_setup(r, x, rows, cols, threads, &s)) return -1;
    s->sep = 1;
    s->kx = cv::Mat(1, k, CV_32F, const_cast<float *>(kx)).clone();
    s->ky = cv::Mat(k, 1, CV_32F, const_cast<float *>(ky)).clone();
    std::snprintf(r->name, sizeof r->name, "opencv.sepFilter2D");
    std::snprintf(r->info, sizeof r->info, "OpenCV %s, %d threads", CV_VERSION,
                  cv::getNumThreads());
    return 0;
}

extern "C" const char *peer_opencv_version(void) { return CV_VERSION; }

extern "C" void peer_opencv_init(int threads) {
    try {
        cv::setNumThreads(threads);
        cv::Mat a(512, 512, CV_32F, cv::Scalar(1)), b;
        cv::Mat k(3, 3, CV_32F, cv::Scalar(1.0f / 9));
        cv::filter2D(a, b, CV_32F, k);
    } catch (...) {
    }
}
