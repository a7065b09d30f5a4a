/* Kernels for `barebell run`'s acceptance tests (cli/tests/run_cli.rs),
   built with clang-19 -nogpulib: clang builtins only. */
#define GID0 (__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() + __builtin_amdgcn_workitem_id_x())

__kernel void saxpy(__global float *y, __global const float *x, float a, unsigned n) {
  unsigned i = GID0;
  if (i < n) y[i] = a * x[i] + y[i];
}

/* Code object v5/v6: the first three implicit dwords are
   hidden_block_count_x/y/z; __builtin_amdgcn_workgroup_size_* loads
   hidden_group_size_*. One record of six per workgroup. */
__kernel void dims(__global unsigned *out) {
  __constant unsigned *imp = (__constant unsigned *)__builtin_amdgcn_implicitarg_ptr();
  unsigned g = __builtin_amdgcn_workgroup_id_x() + imp[0] * (__builtin_amdgcn_workgroup_id_y() + imp[1] * __builtin_amdgcn_workgroup_id_z());
  if (__builtin_amdgcn_workitem_id_x() == 0 && __builtin_amdgcn_workitem_id_y() == 0 && __builtin_amdgcn_workitem_id_z() == 0) {
    out[g * 6 + 0] = imp[0];
    out[g * 6 + 1] = imp[1];
    out[g * 6 + 2] = imp[2];
    out[g * 6 + 3] = __builtin_amdgcn_workgroup_size_x();
    out[g * 6 + 4] = __builtin_amdgcn_workgroup_size_y();
    out[g * 6 + 5] = __builtin_amdgcn_workgroup_size_z();
  }
}

/* Code object v4 has no block counts: the dispatch packet (read through
   the dispatch pointer) gives workgroup and grid sizes. */
__kernel void packet_dims(__global unsigned *out) {
  __constant unsigned short *p16 = (__constant unsigned short *)__builtin_amdgcn_dispatch_ptr();
  __constant unsigned *p32 = (__constant unsigned *)__builtin_amdgcn_dispatch_ptr();
  unsigned g = __builtin_amdgcn_workgroup_id_x();
  if (__builtin_amdgcn_workitem_id_x() == 0) {
    out[g * 4 + 0] = p16[2];  /* workgroup_size_x */
    out[g * 4 + 1] = p32[3];  /* grid_size_x */
    out[g * 4 + 2] = __builtin_amdgcn_workgroup_size_x();
    out[g * 4 + 3] = g;
  }
}

/* A private array indexed at run time lives in scratch. */
__kernel void private_rev(__global unsigned *out, unsigned k) {
  unsigned a[48];
  unsigned i = GID0;
  for (unsigned j = 0; j < 48; j++) a[j] = i * 100 + j;
  out[i] = a[(i + k) % 48];
}

// Reads the word at `addr`, an address the job passes as a plain u64: a
// kernel touching memory its queue's page tables may not map.
kernel void peek(global uint *out, ulong addr) {
    out[0] = *(global const uint *)addr;
}

/* Spins until x[0] becomes non-zero, which nothing does: a hung kernel
   for the wall-clock bound and the stop signal. */
__kernel void spin(__global volatile unsigned *x) {
  while (x[0] == 0) x[1] += 1;
}
