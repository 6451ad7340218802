/* CLBlast SGEMM client: C = A*B (row-major, M=N=K=512 by default), repeated REPS times on one
 * in-order queue, then checked against a host reference on a few entries.
 * Build: cc clblast_sgemm.c -lclblast -lOpenCL -o clblast_sgemm
 * Usage: clblast_sgemm [REPS=300] [SIZE=512]   (exit 1 on a wrong result, 2 on an OpenCL error)
 * stdout: one line that is the same every run; stderr: one line with the time. */
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, (int)e_); return 2; } } while (0)

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 300;
    size_t n = argc > 2 ? (size_t)atol(argv[2]) : 512, bytes = n * n * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    for (size_t i = 0; i < n * n; ++i) {            /* small integers: exact in fp32 sums */
        a[i] = (float)((i * 7 + 3) % 13) - 6.0f;
        b[i] = (float)((i * 5 + 1) % 11) - 5.0f;
    }
    cl_platform_id platform; cl_device_id device; cl_int err;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err); CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err); CHECK(err);
    cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &err); CHECK(err);
    cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b, &err); CHECK(err);
    cl_mem dc = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err); CHECK(err);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < reps; ++r) {
        CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo,
                                           n, n, n, 1.0f, da, 0, n, db, 0, n, 0.0f, dc, 0, n, &q, NULL);
        if (s != CLBlastSuccess) { fprintf(stderr, "CLBlastSgemm failed: %d\n", (int)s); return 2; }
    }
    CHECK(clFinish(q));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
    size_t rows[] = {0, 1, n / 2, n - 1}, cols[] = {0, n / 3, n - 2, n - 1};
    for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) {
        double ref = 0;
        for (size_t k = 0; k < n; ++k) ref += (double)a[rows[i] * n + k] * b[k * n + cols[j]];
        float got = c[rows[i] * n + cols[j]];
        if (fabs(got - ref) > 1e-3 * (fabs(ref) + 1)) {
            fprintf(stderr, "wrong C[%zu][%zu]: %g, expected %g\n", rows[i], cols[j], got, ref);
            return 1;
        }
    }
    double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("clblast sgemm n=%zu reps=%d: result ok\n", n, reps);   /* stdout: the same every run */
    fprintf(stderr, "time: %.3f s, %.1f GFLOP/s\n", s, 2.0 * n * n * n * reps / s * 1e-9);
    clReleaseMemObject(da); clReleaseMemObject(db); clReleaseMemObject(dc);
    clReleaseCommandQueue(q); clReleaseContext(ctx);
    free(a); free(b); free(c);
    return 0;
}
