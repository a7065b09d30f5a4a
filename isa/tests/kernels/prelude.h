// barebell-isa test prelude: the few OpenCL work-item functions the suite's
// kernels use, written on clang's AMDGPU builtins (the suite builds with
// -nogpulib, so there is no device library).
typedef unsigned int uint;
static inline uint bb_lid(uint d) { return d == 0 ? __builtin_amdgcn_workitem_id_x() : d == 1 ? __builtin_amdgcn_workitem_id_y() : __builtin_amdgcn_workitem_id_z(); }
static inline uint bb_gid(uint d) { return d == 0 ? __builtin_amdgcn_workgroup_id_x() : d == 1 ? __builtin_amdgcn_workgroup_id_y() : __builtin_amdgcn_workgroup_id_z(); }
// hsa_kernel_dispatch_packet_t: workgroup_size_x at byte 4 (u16 index 2).
static inline uint bb_lsize(uint d) { __constant ushort *p = (__constant ushort *)__builtin_amdgcn_dispatch_ptr(); return p[2 + d]; }
#define get_local_id bb_lid
#define get_group_id bb_gid
#define get_local_size bb_lsize
#define get_global_id(d) (bb_gid(d) * bb_lsize(d) + bb_lid(d))
#define BARRIER() do { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); } while (0)
