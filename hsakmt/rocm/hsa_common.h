/*
 * What the HSA programs of `cargo xtask rocm` share: a status check that
 * names the failed call and ROCR's words for its status, and the first
 * GPU agent.
 */
#ifndef BAREBELL_HSA_COMMON_H
#define BAREBELL_HSA_COMMON_H

#include <hsa/hsa.h>
#include <stdio.h>

/* Returns 1 from the caller, after saying why, unless `call` succeeded. */
#define CHECK(call)                                                    \
    do {                                                               \
        hsa_status_t s_ = (call);                                      \
        if (s_ != HSA_STATUS_SUCCESS) {                                \
            const char *m_ = "?";                                      \
            hsa_status_string(s_, &m_);                                \
            fprintf(stderr, "%s: %s: %s\n", PROGRAM, #call, m_);       \
            return 1;                                                  \
        }                                                              \
    } while (0)

/* hsa_iterate_agents callback: the first GPU agent into *out. */
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

#endif
