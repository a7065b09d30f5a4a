// The seeds' HIP vectorAdd for `cargo xtask rocm`: 1M floats through
// hipMalloc, hipMemcpy host-to-device, one hipLaunchKernelGGL,
// hipDeviceSynchronize and hipMemcpy back, every sum checked on the host.
// Built by Debian's hipcc --offload-arch=gfx90a. Exits non-zero, saying
// why, on any HIP error or wrong sum; prints each phase's host time.
#include <hip/hip_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>

#define CHECK(call)                                                          \
  do {                                                                       \
    hipError_t e_ = (call);                                                  \
    if (e_ != hipSuccess) {                                                  \
      std::fprintf(stderr, "vectoradd: %s: %s\n", #call, hipGetErrorString(e_)); \
      return 1;                                                              \
    }                                                                        \
  } while (0)

__global__ void vector_add(const float *a, const float *b, float *c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

static double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

int main() {
  const unsigned n = 1u << 20;
  const size_t bytes = n * sizeof(float);
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (unsigned i = 0; i < n; i++) {
    a[i] = float(i);
    b[i] = 0.25f * float(n - i);
  }
  auto t = std::chrono::steady_clock::now();
  int devices = 0;
  CHECK(hipGetDeviceCount(&devices));
  hipDeviceProp_t prop;
  CHECK(hipGetDeviceProperties(&prop, 0));
  double init = ms_since(t);
  float *da, *db, *dc;
  t = std::chrono::steady_clock::now();
  CHECK(hipMalloc(&da, bytes));
  CHECK(hipMalloc(&db, bytes));
  CHECK(hipMalloc(&dc, bytes));
  double malloc_ms = ms_since(t);
  t = std::chrono::steady_clock::now();
  CHECK(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
  double h2d = ms_since(t);
  t = std::chrono::steady_clock::now();
  hipLaunchKernelGGL(vector_add, dim3((n + 255) / 256), dim3(256), 0, 0, da, db, dc, n);
  CHECK(hipGetLastError());
  double launch = ms_since(t);
  t = std::chrono::steady_clock::now();
  CHECK(hipDeviceSynchronize());
  double sync = ms_since(t);
  t = std::chrono::steady_clock::now();
  CHECK(hipMemcpy(c.data(), dc, bytes, hipMemcpyDeviceToHost));
  double d2h = ms_since(t);
  unsigned wrong = 0, first = 0;
  for (unsigned i = 0; i < n; i++)
    if (c[i] != a[i] + b[i] && wrong++ == 0) first = i;
  if (wrong) {
    std::fprintf(stderr, "vectoradd: %u of %u sums wrong, first c[%u] = %g (want %g)\n", wrong, n,
                 first, c[first], a[first] + b[first]);
    return 1;
  }
  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dc));
  std::printf("hip vectorAdd: %u floats on %s (%s), every sum correct; host ms: init %.1f, "
              "hipMalloc x3 %.2f, H2D %.1f, first hipLaunchKernelGGL %.3f, "
              "hipDeviceSynchronize %.1f, D2H %.1f\n",
              n, prop.gcnArchName, prop.name, init, malloc_ms, h2d, launch, sync, d2h);
  return 0;
}
