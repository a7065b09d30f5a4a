/*
 * An HSA program for `cargo xtask rocm`: ROCR's own queue on the GPU
 * agent, barrier-AND packets published as the HSA spec says (slot
 * reserved with the write index, body first, header stored last with
 * release, packet index stored into the doorbell signal), then a wait on
 * the completion signal. Verified: the signal reached 0 (each packet
 * decrements it once) and the queue's read index passed every packet.
 * It exits non-zero, saying why, on anything else.
 */
#include <hsa/hsa.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define PACKETS 16
#define WAIT_SECONDS 30

#define CHECK(call)                                                    \
    do {                                                               \
        hsa_status_t s_ = (call);                                      \
        if (s_ != HSA_STATUS_SUCCESS) {                                \
            const char *m_ = "?";                                      \
            hsa_status_string(s_, &m_);                                \
            fprintf(stderr, "hsa-barriers: %s: %s\n", #call, m_);      \
            return 1;                                                  \
        }                                                              \
    } while (0)

static hsa_status_t first_gpu(hsa_agent_t agent, void *out)
{
    hsa_device_type_t type;
    hsa_status_t s = hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type);
    if (s != HSA_STATUS_SUCCESS)
        return s;
    if (type != HSA_DEVICE_TYPE_GPU)
        return HSA_STATUS_SUCCESS;
    *(hsa_agent_t *)out = agent;
    return HSA_STATUS_INFO_BREAK;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void)
{
    CHECK(hsa_init());
    hsa_agent_t gpu = {0};
    if (hsa_iterate_agents(first_gpu, &gpu) != HSA_STATUS_INFO_BREAK) {
        fprintf(stderr, "hsa-barriers: no GPU agent\n");
        return 1;
    }
    char name[64] = {0};
    CHECK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name));
    uint64_t freq = 0;
    CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq));

    double t0 = now();
    hsa_queue_t *q = NULL;
    CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL,
                           UINT32_MAX, UINT32_MAX, &q));
    double created = now() - t0;
    hsa_signal_t done;
    CHECK(hsa_signal_create(PACKETS, 0, NULL, &done));

    const uint16_t header =
        HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE |
        1 << HSA_PACKET_HEADER_BARRIER |
        HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE |
        HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
    for (int i = 0; i < PACKETS; i++) {
        uint64_t id = hsa_queue_add_write_index_screlease(q, 1);
        hsa_barrier_and_packet_t *p =
            (hsa_barrier_and_packet_t *)q->base_address + (id % q->size);
        memset((char *)p + sizeof(uint32_t), 0, sizeof(*p) - sizeof(uint32_t));
        p->completion_signal = done;
        /* header and reserved0 in one release store, the body already out */
        __atomic_store_n((uint32_t *)p, header, __ATOMIC_RELEASE);
        hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)id);
    }

    hsa_signal_value_t v = PACKETS;
    double t1 = now();
    while (v != 0 && now() - t1 < WAIT_SECONDS)
        v = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0,
                                      freq / 10, HSA_WAIT_STATE_BLOCKED);
    uint64_t read = hsa_queue_load_read_index_scacquire(q);
    if (v != 0 || read != PACKETS) {
        fprintf(stderr,
                "hsa-barriers: after %d s the signal is %ld (want 0) and the "
                "read index %lu (want %d)\n",
                WAIT_SECONDS, (long)v, (unsigned long)read, PACKETS);
        return 1;
    }
    printf("hsa barriers: %d barrier-AND packets on %s completed (signal %d "
           "-> 0, read index %lu; hsa_queue_create %.2f ms)\n",
           PACKETS, name, PACKETS, (unsigned long)read, created * 1e3);
    CHECK(hsa_signal_destroy(done));
    CHECK(hsa_queue_destroy(q));
    CHECK(hsa_shut_down());
    return 0;
}
