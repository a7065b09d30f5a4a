#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#include "prelude.h"

__kernel void vadd(__global const float *a, __global const float *b, __global float *c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
__kernel void iarith(__global const int *a, __global const int *b, __global int *o, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  int x = a[i], y = b[i];
  // Signed overflow is undefined in C: wrap-around arithmetic in uint.
  uint r = (uint)x * 7u - (uint)y;
  r ^= (uint)((x >> 3) | (int)((uint)y << 2));
  r += (uint)x >> 5;
  r += (uint)(y != 0 && !(x == INT_MIN && y == -1) ? x / y : 0);
  r += (uint)(y != 0 && !(x == INT_MIN && y == -1) ? x % y : 0);
  r += (uint)(x > y ? x : y) - (uint)(x < y ? x : y);
  r += (uint)x * (uint)y >> 7;
  o[i] = (int)r;
}
__kernel void uarith64(__global const ulong *a, __global const ulong *b, __global ulong *o, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  ulong x = a[i], y = b[i];
  ulong r = x * y + (x >> 13) - (y << 3);
  r ^= y != 0 ? x / y : 7;
  r += (long)x >> 17;
  o[i] = r;
}
__kernel void farith(__global const float *a, __global const float *b, __global float *o, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  float x = a[i], y = b[i];
  o[4 * i + 0] = x * y + x;
  o[4 * i + 1] = x - y * 0.5f;
  o[4 * i + 2] = __builtin_fmaxf(x, y);
  o[4 * i + 3] = __builtin_fminf(x, y) * 2.0f;
}
__kernel void fdiv(__global const float *a, __global const float *b, __global float *o, int n) {
  int i = get_global_id(0);
  if (i < n) o[i] = a[i] / b[i];
}
__kernel void darith(__global const double *a, __global const double *b, __global double *o, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  double x = a[i], y = b[i];
  o[2 * i] = x * y + x - y;
  o[2 * i + 1] = __builtin_fmax(x, y) + __builtin_fmin(x, y) * 0.25;
}
__kernel void cvt(__global const float *a, __global int *oi, __global uint *ou, __global float *of, __global double *od, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  float x = a[i];
  oi[i] = (int)x;
  ou[i] = (uint)x;
  of[i] = (float)(int)(x * 3.0f);
  od[i] = (double)x * 2.0;
}
__kernel void cmpsel(__global const float *a, __global const float *b, __global int *o, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  float x = a[i], y = b[i];
  o[i] = (x < y) | (x == y) << 1 | (x > y) << 2 | (x != x) << 3 | (y != y) << 4 | __builtin_isinf(x) << 5;
}
__kernel void divergent(__global const int *a, __global int *o, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  int x = a[i];
  int r = 0;
  if (x & 1) {
    r = x * 3;
  } else if (x & 2) {
    r = x - 100;
  } else {
    r = -x;
  }
  for (int k = 0; k < (x & 15); k++) r += k * x;
  while (r > 1000) r >>= 1;
  o[i] = r;
}
__kernel void lds_reduce(__global const int *a, __global int *o) {
  __local int tmp[256];
  uint l = get_local_id(0);
  tmp[l] = a[get_global_id(0)];
  BARRIER();
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    BARRIER();
  }
  if (l == 0) o[get_group_id(0)] = tmp[0];
}
__kernel void atomics_global(__global const int *a, __global int *counters) {
  int x = a[get_global_id(0)];
  __opencl_atomic_fetch_add((volatile __global atomic_int *)&counters[0], x, memory_order_relaxed, memory_scope_device);
  __opencl_atomic_fetch_max((volatile __global atomic_int *)&counters[1], x, memory_order_relaxed, memory_scope_device);
  __opencl_atomic_fetch_min((volatile __global atomic_int *)&counters[2], x, memory_order_relaxed, memory_scope_device);
  __opencl_atomic_fetch_or((volatile __global atomic_int *)&counters[3], x, memory_order_relaxed, memory_scope_device);
  __opencl_atomic_fetch_xor((volatile __global atomic_int *)&counters[4], x, memory_order_relaxed, memory_scope_device);
}
__kernel void atomics_lds(__global const uint *a, __global uint *o) {
  __local uint hist[16];
  uint l = get_local_id(0);
  if (l < 16) hist[l] = 0;
  BARRIER();
  __opencl_atomic_fetch_add((volatile __local atomic_uint *)&hist[a[get_global_id(0)] & 15], 1u, memory_order_relaxed, memory_scope_work_group);
  BARRIER();
  if (l < 16) __opencl_atomic_fetch_add((volatile __global atomic_uint *)&o[l], hist[l], memory_order_relaxed, memory_scope_device);
}
__kernel void cas_counter(__global uint *c) {
  uint old = *c, seen;
  do {
    seen = old;
    old = __opencl_atomic_load((volatile __global atomic_uint *)c, memory_order_relaxed, memory_scope_device);
    if (__opencl_atomic_compare_exchange_strong((volatile __global atomic_uint *)c, &old, old + 1, memory_order_relaxed, memory_order_relaxed, memory_scope_device)) break;
  } while (1);
}
__kernel void wave_ops(__global const uint *a, __global uint *o) {
  uint x = a[get_global_id(0)];
  uint lane = __builtin_amdgcn_mbcnt_lo(~0u, 0u);
#if __AMDGCN_WAVEFRONT_SIZE == 64
  lane = __builtin_amdgcn_mbcnt_hi(~0u, lane);
#endif
  uint first = __builtin_amdgcn_readfirstlane(x);
  uint shuffled = __builtin_amdgcn_ds_bpermute((int)(((lane + 1) % __AMDGCN_WAVEFRONT_SIZE) * 4), (int)x);
  o[3 * get_global_id(0)] = lane;
  o[3 * get_global_id(0) + 1] = first;
  o[3 * get_global_id(0) + 2] = shuffled;
}
__kernel void private_array(__global const int *a, __global int *o, int n) {
  int buf[96];
  int i = get_global_id(0);
  if (i >= n) return;
  int x = a[i];
  for (int k = 0; k < 96; k++) buf[k] = x * k + (k ^ x);
  int s = 0;
  for (int k = 0; k < 96; k++) s += buf[(k * 37 + x) % 96] * (k + 1);
  o[i] = s;
}
__kernel void implicit_args(__global uint *o) {
  __constant uint *ia = (__constant uint *)__builtin_amdgcn_implicitarg_ptr();
  __constant ushort *ia16 = (__constant ushort *)__builtin_amdgcn_implicitarg_ptr();
  if (get_global_id(0) == 0) {
    o[0] = ia[0]; o[1] = ia[1]; o[2] = ia[2];     // hidden_block_count_x/y/z
    o[3] = ia16[6]; o[4] = ia16[7]; o[5] = ia16[8]; // hidden_group_size_x/y/z
    o[6] = ia16[9];                                // hidden_remainder_x
  }
}
__kernel void widths(__global const uchar *b8, __global const ushort *b16, __global const uint *b32, __global const ulong *b64, __global const uint4 *b128,
                     __global uchar *o8, __global ushort *o16, __global uint *o32, __global ulong *o64, __global uint4 *o128) {
  int i = get_global_id(0);
  o8[i] = b8[i] + 1;
  o16[i] = b16[i] * 3;
  o32[i] = b32[i] ^ 0xdeadbeef;
  o64[i] = b64[i] + 0x100000001ul;
  uint4 v = b128[i];
  o128[i] = (uint4)(v.w, v.z + 1, v.y, v.x ^ 5);
}
__kernel void signext(__global const char *c, __global const short *s, __global int *o) {
  int i = get_global_id(0);
  o[i] = (int)c[i] * 2 + (int)s[i];
}
__kernel void packed_f16(__global const half2 *a, __global const half2 *b, __global half2 *o) {
  int i = get_global_id(0);
  half2 x = a[i], y = b[i];
  o[i] = x * y + x;
}
__kernel void f16_scalar(__global const half *a, __global const half *b, __global float *o) {
  int i = get_global_id(0);
  half x = a[i], y = b[i];
  o[i] = (float)(x + y) + (float)(x * y);
}
__kernel void transcend(__global const float *a, __global float *o) {
  int i = get_global_id(0);
  float x = a[i];
  o[4 * i] = __builtin_amdgcn_rcpf(x);
  o[4 * i + 1] = __builtin_amdgcn_sqrtf(__builtin_fabsf(x));
  o[4 * i + 2] = __builtin_amdgcn_exp2f(x * 0.125f);
  o[4 * i + 3] = __builtin_amdgcn_logf(__builtin_fabsf(x) + 1.0f);
}
__kernel void racy(__global int *c) {
  // Non-atomic read-modify-write from every work-item: the result depends
  // on how the waves interleave.
  int v = *c;
  for (int k = 0; k < (int)(get_local_id(0) % 7); k++) v += k;
  *c = v + 1;
}
__kernel void grid2d(__global uint *o, uint w) {
  uint x = get_global_id(0), y = get_global_id(1);
  o[y * w + x] = x * 1000 + y;
}
__kernel void minmax_u(__global const uint *a, __global const uint *b, __global uint *o) {
  int i = get_global_id(0);
  uint x = a[i], y = b[i];
  o[i] = (x > y ? x : y) - (x < y ? x : y) + (x > y ? 1 : 0) + (x ? __builtin_clz(x) : 32) + __builtin_popcount(y);
}
__kernel void shifts64(__global const long *a, __global const uint *s, __global long *o) {
  int i = get_global_id(0);
  long x = a[i];
  uint k = s[i] & 63;
  o[3 * i] = x << k;
  o[3 * i + 1] = x >> k;
  o[3 * i + 2] = (long)((ulong)x >> k);
}
__kernel void scalar_loop(__global int *o, int n) {
  int s = 0;
  for (int k = 0; k < n; k++) s += k * k;
  o[get_global_id(0)] = s + (int)get_global_id(0);
}
__kernel void bitops(__global const uint *a, __global uint *o) {
  int i = get_global_id(0);
  uint x = a[i];
  o[i] = (x & 0xff00ff00u) | ((x >> 4) & 0x000f000fu) | ((x << 7) | (x >> 25)) ^ (x * 0x9e3779b9u);
}
__kernel void matmul16(__global const float *A, __global const float *B, __global float *C) {
  // 16x16 tiles through LDS; one workgroup of 16x16.
  __local float ta[16][16], tb[16][16];
  uint x = get_local_id(0), y = get_local_id(1);
  ta[y][x] = A[y * 16 + x];
  tb[y][x] = B[y * 16 + x];
  BARRIER();
  float s = 0.0f;
  for (int k = 0; k < 16; k++) s = s + ta[y][k] * tb[k][x];
  C[y * 16 + x] = s;
}
__kernel void scan_lds(__global const uint *a, __global uint *o) {
  __local uint t[256];
  uint l = get_local_id(0);
  t[l] = a[get_global_id(0)];
  BARRIER();
  for (uint off = 1; off < 256; off <<= 1) {
    uint v = l >= off ? t[l - off] : 0;
    BARRIER();
    t[l] += v;
    BARRIER();
  }
  o[get_global_id(0)] = t[l];
}
__kernel void atomic_inc_hist(__global const uint *a, __global uint *h) {
  __opencl_atomic_fetch_add((volatile __global atomic_uint *)&h[a[get_global_id(0)] % 64], 1u, memory_order_relaxed, memory_scope_device);
}
__kernel void atomic_u64(__global const ulong *a, __global ulong *sum) {
  __opencl_atomic_fetch_add((volatile __global atomic_ulong *)sum, a[get_global_id(0)], memory_order_relaxed, memory_scope_device);
}
__kernel void ddiv(__global const double *a, __global const double *b, __global double *o) {
  int i = get_global_id(0);
  o[i] = a[i] / b[i];
}
__kernel void short_ops(__global const short *a, __global const short *b, __global short *o) {
  int i = get_global_id(0);
  short x = a[i], y = b[i];
  o[i] = (short)(x * y + (x >> 2) - (short)(y & 0x7f));
}
__kernel void float4_ops(__global const float4 *a, __global const float4 *b, __global float4 *o) {
  int i = get_global_id(0);
  float4 x = a[i], y = b[i];
  o[i] = x * 2.0f + y - (float4)(1.0f, 2.0f, 3.0f, 4.0f);
}
__kernel void transpose_lds(__global const uint *a, __global uint *o, uint n) {
  __local uint t[16][17];
  uint x = get_local_id(0), y = get_local_id(1);
  uint gx = get_group_id(0) * 16, gy = get_group_id(1) * 16;
  t[y][x] = a[(gy + y) * n + gx + x];
  BARRIER();
  o[(gx + y) * n + gy + x] = t[x][y];
}
__kernel void grid_stride(__global const int *a, __global int *o, int n) {
  uint stride = get_local_size(0) * 4;
  for (uint i = get_global_id(0); i < (uint)n; i += stride) o[i] = a[i] * 3 + 1;
}
__kernel void clamp_sat(__global const int *a, __global uchar *o) {
  int i = get_global_id(0);
  int x = a[i];
  o[i] = (uchar)(x < 0 ? 0 : x > 255 ? 255 : x);
}
__kernel void to_half(__global const float *a, __global half *o) {
  int i = get_global_id(0);
  o[i] = (half)a[i];
}
__kernel void lds_pairs(__global const uint *a, __global uint *o) {
  __local uint t[257];
  uint l = get_local_id(0);
  t[l] = a[get_global_id(0)];
  if (l == 0) t[256] = 0;
  BARRIER();
  o[get_global_id(0)] = t[l] + t[l + 1];
}
__kernel void lds_minmax(__global const int *a, __global int *o) {
  __local int mn, mx;
  uint l = get_local_id(0);
  if (l == 0) { mn = 0x7fffffff; mx = (int)0x80000000; }
  BARRIER();
  int x = a[get_global_id(0)];
  __opencl_atomic_fetch_min((volatile __local atomic_int *)&mn, x, memory_order_relaxed, memory_scope_work_group);
  __opencl_atomic_fetch_max((volatile __local atomic_int *)&mx, x, memory_order_relaxed, memory_scope_work_group);
  BARRIER();
  if (l == 0) { o[2 * get_group_id(0)] = mn; o[2 * get_group_id(0) + 1] = mx; }
}
__kernel void dcvt(__global const double *a, __global int *oi, __global float *of) {
  int i = get_global_id(0);
  oi[i] = (int)a[i];
  of[i] = (float)a[i];
}
/* Flat (generic) addressing of LDS: each work-item stores through a
   generic pointer to its __local slot (in functions that take a generic
   pointer, so the stores and loads stay FLAT), reads its neighbour's
   back after the barrier, and reports the generic address of slot 0,
   whose high bits are the shared aperture (src_shared_base). */
__attribute__((noinline)) void put_flat(int *p, int v) { *p = v; }
__attribute__((noinline)) int get_flat(const int *p) { return *p; }
__kernel void flat_lds(__global const int *a, __global int *o, __global ulong *addr) {
  __local int t[256];
  uint l = get_local_id(0);
  put_flat((int *)&t[l], a[get_global_id(0)] * 3);
  BARRIER();
  o[get_global_id(0)] = get_flat((int *)&t[(l + 1) & 63]);
  if (get_global_id(0) == 0) addr[0] = (ulong)(int *)&t[0];
}
