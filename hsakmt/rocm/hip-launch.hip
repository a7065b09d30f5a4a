// Instructions per hipLaunchKernelGGL for `cargo xtask rocm-compare`:
//
//   hip-launch <launches>
//
// One launch of an empty kernel first (HIP loads its module and creates
// its queue lazily on it), then <launches> more, each through
// barebell_hip_launch_one(), the function callgrind's --toggle-collect
// counts, then hipDeviceSynchronize. Exits non-zero on any HIP error.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

__global__ void empty_kernel() {}

extern "C" __attribute__((noinline)) hipError_t barebell_hip_launch_one() {
  hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(64), 0, 0);
  return hipGetLastError();
}

int main(int argc, char **argv) {
  long n = argc > 1 ? std::strtol(argv[1], nullptr, 0) : 100;
  hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(64), 0, 0);
  if (hipDeviceSynchronize() != hipSuccess) {
    std::fprintf(stderr, "hip-launch: the first launch failed\n");
    return 1;
  }
  for (long i = 0; i < n; i++) {
    hipError_t e = barebell_hip_launch_one();
    if (e != hipSuccess) {
      std::fprintf(stderr, "hip-launch: launch %ld: %s\n", i, hipGetErrorString(e));
      return 1;
    }
  }
  hipError_t e = hipDeviceSynchronize();
  if (e != hipSuccess) {
    std::fprintf(stderr, "hip-launch: hipDeviceSynchronize: %s\n", hipGetErrorString(e));
    return 1;
  }
  std::printf("hip-launch: %ld launches completed\n", n + 1);
  return 0;
}
