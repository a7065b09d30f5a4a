// A HIP kernel with a private array for `cargo xtask rocm`: each
// work-item fills 64 ints in private memory (scratch on gfx90a: the
// compiler cannot keep a dynamically indexed volatile array in VGPRs),
// reads them back in another order and stores the sum. ROCR creates the
// queue without scratch; the first dispatch asks for it through the
// queue's inactive signal and ROCR's dynamic-scratch handler maps it.
// Exits non-zero, saying why, on any HIP error or wrong sum.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <vector>

__global__ void private_sums(int *out, int n) {
  volatile int slots[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < 64; j++) slots[j] = i * 3 + j;
  int s = 0;
  for (int j = 0; j < 64; j++) s += slots[(j * 7 + i) & 63];
  if (i < n) out[i] = s;
}

int main() {
  const int n = 4096;
  int *d = nullptr;
  if (hipMalloc(&d, n * sizeof(int)) != hipSuccess) {
    std::fprintf(stderr, "private: hipMalloc failed\n");
    return 1;
  }
  hipLaunchKernelGGL(private_sums, dim3(n / 256), dim3(256), 0, 0, d, n);
  hipError_t e = hipDeviceSynchronize();
  if (e != hipSuccess) {
    std::fprintf(stderr, "private: hipDeviceSynchronize: %s\n", hipGetErrorString(e));
    return 1;
  }
  std::vector<int> h(n);
  if (hipMemcpy(h.data(), d, n * sizeof(int), hipMemcpyDeviceToHost) != hipSuccess) {
    std::fprintf(stderr, "private: hipMemcpy failed\n");
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < n; i++) {
    // The 64 slots hold i*3 + j for j = 0..63, each read once.
    long want = 64L * i * 3 + 63L * 64 / 2;
    if (h[i] != want) bad++;
  }
  if (bad != 0) {
    std::fprintf(stderr, "private: %d of %d sums wrong\n", bad, n);
    return 1;
  }
  std::printf("hip private: %d work-items, 64 private ints each, every sum correct\n", n);
  return 0;
}
