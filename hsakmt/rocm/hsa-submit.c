/*
 * Instructions per AQL submit through ROCR's HSA API for `cargo xtask
 * rocm-compare`:
 *
 *   hsa-submit <packets>
 *
 * <packets> barrier-AND packets on one ROCR queue, each published by
 * barebell_hsa_submit_one() (the function callgrind's --toggle-collect
 * counts): the slot reserved with hsa_queue_add_write_index_screlease,
 * the body written, the header stored with release, the packet index
 * stored into the doorbell signal (ROCR's 64-bit doorbell store), the
 * same protocol barebell's submit follows. Then a wait for the last
 * packet's signal. Exits non-zero, saying why, on anything else.
 */
#include <hsa/hsa.h>
#define PROGRAM "hsa-submit"
#include "hsa_common.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void barebell_hsa_submit_one(hsa_queue_t *q, hsa_signal_t signal)
{
    const uint16_t header =
        HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE |
        1 << HSA_PACKET_HEADER_BARRIER |
        HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE |
        HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
    uint64_t id = hsa_queue_add_write_index_screlease(q, 1);
    hsa_barrier_and_packet_t *p =
        (hsa_barrier_and_packet_t *)q->base_address + (id & (q->size - 1));
    memset((char *)p + sizeof(uint32_t), 0, sizeof(*p) - sizeof(uint32_t));
    p->completion_signal = signal;
    __atomic_store_n((uint32_t *)p, header, __ATOMIC_RELEASE);
    hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)id);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 0) : 100;
    CHECK(hsa_init());
    hsa_agent_t gpu = {0};
    if (hsa_iterate_agents(first_gpu, &gpu) != HSA_STATUS_INFO_BREAK) {
        fprintf(stderr, "hsa-submit: no GPU agent\n");
        return 1;
    }
    hsa_queue_t *q = NULL;
    CHECK(hsa_queue_create(gpu, 4096, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX,
                           UINT32_MAX, &q));
    hsa_signal_t done;
    CHECK(hsa_signal_create(n, 0, NULL, &done));
    for (long i = 0; i < n; i++) {
        /* never more than a ring's worth in flight */
        while (hsa_queue_load_write_index_relaxed(q) - hsa_queue_load_read_index_scacquire(q) >=
               q->size)
            ;
        barebell_hsa_submit_one(q, done);
    }
    hsa_signal_value_t v = n;
    for (int tries = 0; v != 0 && tries < 600; tries++)
        v = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                      HSA_WAIT_STATE_BLOCKED);
    if (v != 0) {
        fprintf(stderr, "hsa-submit: %ld packets did not complete (signal %ld)\n", n, (long)v);
        return 1;
    }
    printf("hsa-submit: %ld packets completed\n", n);
    CHECK(hsa_signal_destroy(done));
    CHECK(hsa_queue_destroy(q));
    CHECK(hsa_shut_down());
    return 0;
}
