/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CORE_H
#define SM_CORE_H

/*
 * lib/core: the shard-per-core runtime. Include this header for all of it:
 * shards and reactors (sm_shard.h), tasks, timers, cross-shard rings,
 * per-shard memory and pools, counters, clocks and logging, byte order and
 * per-shard random numbers.
 */

#include "sm_byteorder.h"
#include "sm_clock.h"
#include "sm_common.h"
#include "sm_log.h"
#include "sm_mem.h"
#include "sm_random.h"
#include "sm_shard.h"
#include "sm_stats.h"
#include "sm_task.h"
#include "sm_timer.h"
#include "sm_xring.h"

#endif /* SM_CORE_H */
