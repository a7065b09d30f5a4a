/* OpenCL C work-item and synchronization functions for kernels built with
 * clang-19 -nogpulib, where no device library provides them.
 *
 * Each function is defined from clang's AMDGPU builtins, with the meaning
 * the OpenCL C specification gives it (section 6.15.1, "Work-Item
 * Functions", and 6.15.8, "Synchronization Functions") for a dispatch with
 * no global offset (AQL packets have none):
 *   get_global_id(d)   = get_group_id(d) * get_local_size(d) + get_local_id(d)
 *   get_local_size(d)  = the workgroup's size, smaller for the last group
 *                        when the grid is not a multiple (OpenCL 2.0
 *                        non-uniform workgroups; clang's
 *                        __builtin_amdgcn_workgroup_size_* reads the hidden
 *                        argument or the packet and does not shrink it, so
 *                        the remainder is computed here)
 *   get_global_size(d) = the packet's grid size in work-items
 *   barrier(flags)     = a workgroup-scope release fence, s_barrier, an
 *                        acquire fence (what clang's device library does).
 *
 * Use: clang-19 -target amdgcn-amd-amdhsa -mcpu=gfx1100 -nogpulib -O2
 *        -I gpu-kernels/include -include barebell_opencl.h -x cl k.cl
 * Tested by cli/tests/opencl_cli.rs on gfx1100, gfx1201 and gfx942.
 */
#ifndef BAREBELL_OPENCL_H
#define BAREBELL_OPENCL_H

#define BAREBELL_OCL_FN __attribute__((overloadable, always_inline)) inline

BAREBELL_OCL_FN size_t get_local_id(uint d) {
  return d == 0 ? __builtin_amdgcn_workitem_id_x()
       : d == 1 ? __builtin_amdgcn_workitem_id_y()
       : d == 2 ? __builtin_amdgcn_workitem_id_z() : 0;
}

BAREBELL_OCL_FN size_t get_group_id(uint d) {
  return d == 0 ? __builtin_amdgcn_workgroup_id_x()
       : d == 1 ? __builtin_amdgcn_workgroup_id_y()
       : d == 2 ? __builtin_amdgcn_workgroup_id_z() : 0;
}

BAREBELL_OCL_FN size_t get_enqueued_local_size(uint d) {
  return d == 0 ? __builtin_amdgcn_workgroup_size_x()
       : d == 1 ? __builtin_amdgcn_workgroup_size_y()
       : d == 2 ? __builtin_amdgcn_workgroup_size_z() : 1;
}

BAREBELL_OCL_FN size_t get_global_size(uint d) {
  return d == 0 ? __builtin_amdgcn_grid_size_x()
       : d == 1 ? __builtin_amdgcn_grid_size_y()
       : d == 2 ? __builtin_amdgcn_grid_size_z() : 1;
}

BAREBELL_OCL_FN size_t get_local_size(uint d) {
  size_t size = get_enqueued_local_size(d);
  size_t start = get_group_id(d) * size;
  size_t left = get_global_size(d) - start;
  return left < size ? left : size;
}

BAREBELL_OCL_FN size_t get_num_groups(uint d) {
  size_t size = get_enqueued_local_size(d);
  return (get_global_size(d) + size - 1) / size;
}

BAREBELL_OCL_FN size_t get_global_id(uint d) {
  return get_group_id(d) * get_enqueued_local_size(d) + get_local_id(d);
}

BAREBELL_OCL_FN size_t get_global_offset(uint d) {
  (void)d;
  return 0;
}

BAREBELL_OCL_FN uint get_work_dim(void) {
  /* hsa_kernel_dispatch_packet_t.setup, bits 1:0 (hsa.h). */
  const __constant ushort *packet = (const __constant ushort *)__builtin_amdgcn_dispatch_ptr();
  return packet[1] & 3;
}

BAREBELL_OCL_FN void barrier(cl_mem_fence_flags flags) {
  (void)flags;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

BAREBELL_OCL_FN void work_group_barrier(cl_mem_fence_flags flags) {
  barrier(flags);
}

#endif
