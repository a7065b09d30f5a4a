/* Program-scope pointers: ld.lld emits R_AMDGPU_RELATIVE64. Needs -cl-std=CL2.0. */
__global int counter = 5;
__global int table[4] = {1, 2, 3, 4};
__global int *ptrs[2] = { &table[1], &table[3] };
__global int *gp = &counter;
__kernel void reloc(__global int *o) { o[0] = *ptrs[0] + *ptrs[1] + *gp; *gp += 1; }
