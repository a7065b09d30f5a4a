/* Kernels `barebell latency --kernel empty|vadd` times, built from this
   source by cli/build.rs with clang-19 (-nogpulib: clang builtins only)
   for gfx1100 and gfx1201, code object v5. */

__kernel void empty(void) {}

__kernel void vadd(__global const float *a, __global const float *b, __global float *c, unsigned n) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x();
  if (i < n) c[i] = a[i] + b[i];
}
