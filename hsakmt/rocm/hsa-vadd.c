/*
 * An HSA program for `cargo xtask rocm`: ROCR's own code-object loader and
 * queue run a vector add on the GPU agent, checked on the host.
 *
 *   hsa-vadd <code object> [elements]
 *
 * The code object holds `vadd(a, b, c, n)` (hsakmt/rocm/vadd.cl, built by
 * clang-19 for gfx90a). The program loads it with ROCR's executable API
 * (which places the code in the agent's memory), puts a, b and c in
 * system memory from the kernarg region (reachable by the GPU), fills a
 * and b, dispatches one kernel packet (256-wide workgroups) and waits on
 * its completion signal. Verified: every c[i] equals a[i] + b[i].
 * It exits non-zero, saying why, on anything else.
 */
#include <hsa/hsa.h>
#define PROGRAM "hsa-vadd"
#include "hsa_common.h"
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_SECONDS 120
#define WORKGROUP 256

static hsa_status_t kernarg_region(hsa_region_t region, void *out)
{
    hsa_region_global_flag_t flags;
    hsa_status_t s = hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags);
    if (s != HSA_STATUS_SUCCESS)
        return s;
    if (!(flags & HSA_REGION_GLOBAL_FLAG_KERNARG))
        return HSA_STATUS_SUCCESS;
    *(hsa_region_t *)out = region;
    return HSA_STATUS_INFO_BREAK;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = n > 0 ? malloc((size_t)n) : NULL;
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return p;
}

struct args {
    const float *a;
    const float *b;
    float *c;
    uint32_t n;
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: hsa-vadd <code object> [elements]\n");
        return 2;
    }
    uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 65536;
    size_t co_len = 0;
    void *co = read_file(argv[1], &co_len);
    if (!co) {
        fprintf(stderr, "hsa-vadd: cannot read %s\n", argv[1]);
        return 1;
    }

    CHECK(hsa_init());
    hsa_agent_t gpu = {0};
    if (hsa_iterate_agents(first_gpu, &gpu) != HSA_STATUS_INFO_BREAK) {
        fprintf(stderr, "hsa-vadd: no GPU agent\n");
        return 1;
    }
    char name[64] = {0};
    CHECK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name));
    hsa_region_t kernarg = {0};
    if (hsa_agent_iterate_regions(gpu, kernarg_region, &kernarg) != HSA_STATUS_INFO_BREAK) {
        fprintf(stderr, "hsa-vadd: no kernarg region\n");
        return 1;
    }

    double t0 = now();
    hsa_code_object_reader_t reader;
    CHECK(hsa_code_object_reader_create_from_memory(co, co_len, &reader));
    hsa_executable_t exe;
    CHECK(hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                    NULL, &exe));
    CHECK(hsa_executable_load_agent_code_object(exe, gpu, reader, NULL, NULL));
    CHECK(hsa_executable_freeze(exe, NULL));
    double loaded = now() - t0;
    hsa_executable_symbol_t sym;
    CHECK(hsa_executable_get_symbol_by_name(exe, "vadd.kd", &gpu, &sym));
    uint64_t kernel_object = 0;
    uint32_t kernarg_size = 0, group = 0, priv = 0;
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                         &kernel_object));
    CHECK(hsa_executable_symbol_get_info(
        sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernarg_size));
    CHECK(hsa_executable_symbol_get_info(
        sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &group));
    CHECK(hsa_executable_symbol_get_info(
        sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &priv));

    float *a, *b, *c;
    struct args *ka;
    size_t bytes = (size_t)n * sizeof(float);
    CHECK(hsa_memory_allocate(kernarg, bytes, (void **)&a));
    CHECK(hsa_memory_allocate(kernarg, bytes, (void **)&b));
    CHECK(hsa_memory_allocate(kernarg, bytes, (void **)&c));
    CHECK(hsa_memory_allocate(kernarg, kernarg_size > sizeof(*ka) ? kernarg_size : sizeof(*ka),
                              (void **)&ka));
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)(n - i);
        c[i] = -1.0f;
    }
    ka->a = a;
    ka->b = b;
    ka->c = c;
    ka->n = n;

    hsa_queue_t *q = NULL;
    double tq = now();
    CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX,
                           &q));
    double queue_ms = (now() - tq) * 1e3;
    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));

    uint64_t id = hsa_queue_add_write_index_screlease(q, 1);
    hsa_kernel_dispatch_packet_t *p =
        (hsa_kernel_dispatch_packet_t *)q->base_address + (id % q->size);
    memset((char *)p + sizeof(uint32_t), 0, sizeof(*p) - sizeof(uint32_t));
    p->workgroup_size_x = WORKGROUP;
    p->workgroup_size_y = 1;
    p->workgroup_size_z = 1;
    p->grid_size_x = (n + WORKGROUP - 1) / WORKGROUP * WORKGROUP;
    p->grid_size_y = 1;
    p->grid_size_z = 1;
    p->private_segment_size = priv;
    p->group_segment_size = group;
    p->kernel_object = kernel_object;
    p->kernarg_address = ka;
    p->completion_signal = done;
    uint32_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
    uint32_t header =
        HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE |
        1 << HSA_PACKET_HEADER_BARRIER |
        HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE |
        HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
    double t1 = now();
    /* header and setup in one release store, the body already out */
    __atomic_store_n((uint32_t *)p, header | setup << 16, __ATOMIC_RELEASE);
    hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)id);

    hsa_signal_value_t v = 1;
    while (v != 0 && now() - t1 < WAIT_SECONDS)
        v = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                      HSA_WAIT_STATE_BLOCKED);
    double ran = now() - t1;
    if (v != 0) {
        fprintf(stderr, "hsa-vadd: the dispatch did not complete in %d s (signal %ld)\n",
                WAIT_SECONDS, (long)v);
        return 1;
    }
    uint32_t wrong = 0, first = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (c[i] != a[i] + b[i]) {
            if (!wrong)
                first = i;
            wrong++;
        }
    }
    if (wrong) {
        fprintf(stderr, "hsa-vadd: %u of %u results wrong, first c[%u] = %g (want %g)\n", wrong,
                n, first, c[first], a[first] + b[first]);
        return 1;
    }
    printf("hsa vadd: %u floats added by vadd on %s, every c[i] == a[i] + b[i] (code object "
           "loaded in %.1f ms, hsa_queue_create %.2f ms, dispatch to signal %.1f ms)\n",
           n, name, loaded * 1e3, queue_ms, ran * 1e3);
    CHECK(hsa_signal_destroy(done));
    CHECK(hsa_queue_destroy(q));
    CHECK(hsa_executable_destroy(exe));
    CHECK(hsa_code_object_reader_destroy(reader));
    CHECK(hsa_shut_down());
    free(co);
    return 0;
}
