// SPDX-License-Identifier: GPL-2.0-only
/// ipc: remove, iterate, initialise and destroy ids->ipcs_ridr.
///
/// Writers of the map (ipc_addid(), ipc_rmid(), shm_destroy_orphaned(),
/// namespace teardown) all hold ids->rwsem for writing, which serializes
/// them: the caller-serialized __ridr_*() functions are used and the map's
/// own spinlock is never taken.  ipc_remove_idx() (ipc/util.h) keeps
/// idr_remove()'s convention (the entry removed, or NULL).  A removed
/// object is still freed after a grace period (ipc_rcu_putref() ->
/// call_rcu()), and ridr frees the nodes it empties after one too, so
/// concurrent RCU lookups stay safe.  ipc_for_each() keeps idr_for_each()'s
/// callback; shm_destroy_orphaned() removes entries from inside it, which
/// the iteration allows (it restarts from the root at the next index).
//
// Files: ipc/util.c, ipc/msg.c, ipc/sem.c, ipc/shm.c

// The "." forms first: tried after "->", Coccinelle's isomorphisms
// match &ns->ids[IPC_MSG_IDS].ipcs_idr as &E->ipcs_idr with E = ns->ids,
// dropping the index (the test covers all three namespaces' maps).
@@
expression E, I, F, D;
@@
(
- idr_destroy(&E.ipcs_idr)
+ ridr_destroy(&E.ipcs_ridr)
|
- idr_for_each(&E.ipcs_idr, F, D)
+ ipc_for_each(&E, F, D)
|
- idr_remove(&E->ipcs_idr, I)
+ ipc_remove_idx(E, I)
|
- idr_init(&E->ipcs_idr)
+ ridr_init(&E->ipcs_ridr)
|
- idr_destroy(&E->ipcs_idr)
+ ridr_destroy(&E->ipcs_ridr)
|
- idr_for_each(&E->ipcs_idr, F, D)
+ ipc_for_each(E, F, D)
)

// Lockdep: ids->rwsem serializes the writers (above), so the map's writer
// loads check it (ridr_set_external_lock(), like the maple tree's
// mt_set_external_lock()); without lockdep the line compiles to nothing
// but the store of NULL.
@@
expression E;
@@
  ridr_init(&E->ipcs_ridr);
+ ridr_set_external_lock(&E->ipcs_ridr, &E->rwsem);
