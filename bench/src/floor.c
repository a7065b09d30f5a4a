/*
 * The floor for one AQL submission: the work no submit path can avoid.
 * Copy the 60 bytes after the header word into the slot, store-release
 * the 32-bit header|setup word, store the 64-bit doorbell. No reservation,
 * no full check, no slot arithmetic: the caller hands in the slot.
 */
#include <stdint.h>
#include <string.h>

void barebell_floor_submit(uint8_t *slot, const uint8_t *packet,
                           uint64_t *doorbell, uint64_t id)
{
    uint32_t header;
    memcpy(slot + 4, packet + 4, 60);
    memcpy(&header, packet, 4);
    __atomic_store_n((uint32_t *)slot, header, __ATOMIC_RELEASE);
    __atomic_store_n(doorbell, id, __ATOMIC_RELEASE);
}

/*
 * For context only (not the floor of record): the whole ROCR protocol
 * written by hand in C, i.e. reservation, full check, slot arithmetic,
 * publish and doorbell, with no bounded wait (a full ring returns 0).
 */
struct barebell_c_queue {
    uint8_t *ring;
    uint64_t mask;
    uint64_t *write_index;
    uint64_t *read_index;
    uint64_t *doorbell;
};

int barebell_floor_protocol_submit(const struct barebell_c_queue *q,
                                   const uint8_t *packet)
{
    uint64_t id = __atomic_fetch_add(q->write_index, 1, __ATOMIC_RELAXED);
    if (id - __atomic_load_n(q->read_index, __ATOMIC_ACQUIRE) > q->mask)
        return 0;
    uint8_t *slot = q->ring + (id & q->mask) * 64;
    uint32_t header;
    memcpy(slot + 4, packet + 4, 60);
    memcpy(&header, packet, 4);
    __atomic_store_n((uint32_t *)slot, header, __ATOMIC_RELEASE);
    __atomic_store_n(q->doorbell, id, __ATOMIC_RELEASE);
    return 1;
}
