// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tbprof.c - a QEMU TCG plugin (plugin API version 1, QEMU 7.2) that
 * counts how often each translated block of the guest kernel runs.
 *
 *   qemu-system-x86_64 -accel tcg,thread=single \
 *       -plugin tbprof.so,out=FILE ...
 *
 * At exit FILE gets one line per kernel block that ran:
 * "vaddr instructions executions translations" (hex, then decimal).
 * kernel-backport/prof.sh symbolizes it with the vmlinux.  Under TCG a
 * guest's time follows the blocks it runs (each ends at a branch; an
 * indirect jump or return needs a lookup, a `rep` string instruction
 * runs as one block per iteration), so blocks and instructions per
 * operation, function by function, show where a patched kernel spends
 * more than the unpatched one.  The counts are inline additions, not
 * atomic: use thread=single (one host thread for all vCPUs), where they
 * are exact.
 *
 * The few declarations below are those of QEMU's
 * include/qemu/qemu-plugin.h at API version 1 (Debian 12's qemu 7.2
 * ships no header for plugins).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;
struct qemu_plugin_tb;
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = 1;
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv);

/* x86-64 kernel text lives at and above this address. */
#define KERNEL_TEXT 0xffffffff80000000ULL
/* Open addressing over (vaddr, length): ~37,000 kernel blocks in a run. */
#define SLOTS (1u << 20)

struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t execs;	/* added to by the translated code itself */
	uint64_t trans;
};

static struct block **table;
static uint64_t *keys;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *out = "tbprof.txt";

/* One struct per (vaddr, length): a block translated again (after a
 * flush) counts into the same one.
 */
static struct block *lookup(uint64_t vaddr, uint64_t insns)
{
	uint64_t key = vaddr ^ (insns << 56);
	uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ULL) >> 40) &
		     (SLOTS - 1);

	while (table[h] && keys[h] != key)
		h = (h + 1) & (SLOTS - 1);
	if (!table[h]) {
		table[h] = calloc(1, sizeof(*table[h]));
		if (!table[h])
			abort();
		table[h]->vaddr = vaddr;
		table[h]->insns = insns;
		keys[h] = key;
	}
	return table[h];
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	(void)id;
	if (vaddr < KERNEL_TEXT)
		return;
	pthread_mutex_lock(&lock);
	b = lookup(vaddr, qemu_plugin_tb_n_insns(tb));
	b->trans++;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
}

static void at_exit(qemu_plugin_id_t id, void *data)
{
	FILE *f = fopen(out, "w");

	(void)id;
	(void)data;
	if (!f)
		return;
	for (uint32_t i = 0; i < SLOTS; i++)
		if (table[i] && table[i]->execs)
			fprintf(f, "%llx %llu %llu %llu\n",
				(unsigned long long)table[i]->vaddr,
				(unsigned long long)table[i]->insns,
				(unsigned long long)table[i]->execs,
				(unsigned long long)table[i]->trans);
	fclose(f);
}

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	table = calloc(SLOTS, sizeof(*table));
	keys = calloc(SLOTS, sizeof(*keys));
	if (!table || !keys)
		return 1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
