// SPDX-License-Identifier: GPL-2.0-only
/// ipc: look objects up in ids->ipcs_ridr.
///
/// ipc_obtain_object_idr() runs inside the caller's RCU read-side section
/// and calls ridr_find() directly: no lock, no store to shared memory.
/// Every other lookup (free_ipcs(), shm_get_stat(), ipc_search_maxidx(),
/// sysvipc_find_ipc()) runs with ids->rwsem held but possibly outside RCU;
/// ridr's lookups are RCU readers (rcu_dereference(), checked by
/// PROVE_RCU), so those call the _locked helpers of ipc/util.h, which
/// assert the rwsem and enter a read-side section around the lookup only:
/// the object found stays valid after it, since removing it needs the
/// rwsem for writing.
//
// Files: ipc/util.c, ipc/namespace.c, ipc/shm.c

@rcu@
identifier ids, idx;
@@
struct kern_ipc_perm *ipc_obtain_object_idr(...)
{
	<...
-	idr_find(&ids->ipcs_idr, idx)
+	ridr_find(&ids->ipcs_ridr, idx)
	...>
}

// The "." forms first: tried after "->", Coccinelle's isomorphisms
// would match &ns->ids[IPC_SHM_IDS].ipcs_idr as &E->ipcs_idr with
// E = ns->ids, dropping the index (tests/33-ipc-remove.c guards this).
@locked@
expression E, I;
@@
(
- idr_find(&E.ipcs_idr, I)
+ ipc_find_locked(&E, I)
|
- idr_get_next(&E.ipcs_idr, I)
+ ipc_get_next_locked(&E, I)
|
- idr_find(&E->ipcs_idr, I)
+ ipc_find_locked(E, I)
|
- idr_get_next(&E->ipcs_idr, I)
+ ipc_get_next_locked(E, I)
)
