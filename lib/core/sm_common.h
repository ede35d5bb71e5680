/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_COMMON_H
#define SM_COMMON_H

#include <stddef.h>

#include "sm_build_config.h"

#define SM_CACHE_ALIGNED __attribute__((aligned(SM_CACHE_LINE)))
#define SM_LIKELY(x) __builtin_expect(!!(x), 1)
#define SM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SM_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SM_MAX(a, b) ((a) > (b) ? (a) : (b))

#define sm_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* Relaxed loads/stores for counters that one shard writes and others read. */
#define SM_READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define SM_WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#endif /* SM_COMMON_H */
