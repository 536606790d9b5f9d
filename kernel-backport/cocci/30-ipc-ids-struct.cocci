// SPDX-License-Identifier: GPL-2.0-only
/// struct ipc_ids keeps its objects in a ridr instead of an IDR.
///
/// The field is renamed (ipcs_idr -> ipcs_ridr) so that any use the other
/// ipc rules do not convert fails to compile instead of silently calling
/// an idr_*() function on a ridr.
//
// Files: include/linux/ipc_namespace.h

@@
@@
- #include <linux/idr.h>
+ #include <linux/ridr.h>

@@
@@
struct ipc_ids {
	...
-	struct idr ipcs_idr;
+	struct ridr ipcs_ridr;
	...
};
