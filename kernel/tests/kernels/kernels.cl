/* Test kernels for barebell-kernel (built by the tests and by
   `cargo xtask kernel-corpus`). clang builtins only: -nogpulib. */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define GID0 (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())
__kernel void vadd(__global const float *a, __global const float *b, __global float *c, uint n) {
  uint i = GID0;
  if (i < n) c[i] = a[i] + b[i];
}
/* Reads the implicit block counts (hidden_block_count_x/y/z, the first
   three implicit dwords in code object v5+) and the group sizes
   (clang lowers __builtin_amdgcn_workgroup_size_* to loads of
   hidden_group_size_*), one record per workgroup. */
__kernel void dims(__global uint *out) {
  __constant uint *imp = (__constant uint *)__builtin_amdgcn_implicitarg_ptr();
  uint i = __builtin_amdgcn_workgroup_id_x() + __builtin_amdgcn_workgroup_id_y() * imp[0];
  out[i * 6 + 0] = imp[0];
  out[i * 6 + 1] = imp[1];
  out[i * 6 + 2] = imp[2];
  out[i * 6 + 3] = __builtin_amdgcn_workgroup_size_x();
  out[i * 6 + 4] = __builtin_amdgcn_workgroup_size_y();
  out[i * 6 + 5] = __builtin_amdgcn_workgroup_size_z();
}
__kernel void empty(void) {}
__kernel void withlds(__global int *o, __local int *l) {
  l[__builtin_amdgcn_workitem_id_x()] = 1;
  __builtin_amdgcn_s_barrier();
  o[GID0] = l[0];
}
__kernel void priv(__global int *o, int n) {
  volatile int a[64];
  for (int i = 0; i < 64; i++) a[i] = i * n;
  o[GID0] = a[n & 63];
}
__kernel __attribute__((reqd_work_group_size(64, 2, 1)))
void fixed(__global int *o) { o[GID0] = 1; }
__kernel void scalars(char a, short b, long c, double d, __global half *h, float f, uchar2 v) {
  h[0] = (half)(a + b + c + d + f + v.x);
}
