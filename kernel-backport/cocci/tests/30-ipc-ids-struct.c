/* SPDX-License-Identifier: GPL-2.0 */
/* From include/linux/ipc_namespace.h (Linux 6.1 and 6.12). */
#ifndef __IPC_NAMESPACE_H__
#define __IPC_NAMESPACE_H__

#include <linux/err.h>
#include <linux/idr.h>
#include <linux/rwsem.h>

struct ipc_ids {
	int in_use;
	unsigned short seq;
	struct rw_semaphore rwsem;
	struct idr ipcs_idr;
	int max_idx;
	int last_idx;	/* For wrap around detection */
#ifdef CONFIG_CHECKPOINT_RESTORE
	int next_id;
#endif
	struct rhashtable key_ht;
};

/* Not an ipc_ids: left alone. */
struct other_ids {
	struct idr ipcs_idr;
};

#endif
