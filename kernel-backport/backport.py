#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Generate the ridr-kit kernel patch series for a Linux tree, or apply it.

    backport.py generate (--tree DIR | --tarball FILE) [--out DIR]
    backport.py apply --tree DIR [--out DIR]
    backport.py test-rules
    backport.py test-translate
    backport.py core --out DIR

generate: reads the few files of the kernel tree (or Debian linux-source
tarball) the series touches, builds the series in a private scratch git
repository (the input is never written to) and writes
    OUT/NNNN-*.patch        one `git format-patch` file per logical change
    OUT/ridr-kit-<ver>.patch the combined diff
    OUT/series              the patch file names, in order
apply: generates for the tree, then applies the combined patch with
`git apply`, which applies every hunk of every file or nothing: the tree is
either fully patched or untouched.
test-rules: runs every Coccinelle rule cocci/NN-topic.cocci on its test
input cocci/tests/NN-topic.c and compares the result with the expected
cocci/tests/NN-topic.res (exit 1 on any difference).
test-translate: runs translate.py's cases (the rk_ -> kernel translation
read from compat/kernel.h).
core: writes to DIR the core as the kernel build compiles it through
compat/kernel.h, untranslated (ridr/, lockref/, compat/, and lib/ridr.c:
the ridr parts joined as lib/ridr.c joins them): verify.sh compiles it and
requires the same machine code as the generated files.

The kernel sources are produced mechanically from the portable core
(ridr/, lockref/) and compat/kernel.h, in the kernel's own names:
translate.py reads the #defines of compat/kernel.h (the one definition of
the mapping) and expands every rk_/RK_ word of the core as it says
(rcu_dereference(), spin_lock(), kmem_cache_zalloc(), READ_ONCE(), u64,
...); the userspace-only API (#if RK_HAVE_FLAVORS blocks, which
compat/kernel.h turns off) is dropped, the #include lines are the kernel
headers the result uses, and any rk_/RK_ word or userspace/liburcu/flavor
wording left stops the generator.  Besides that only the include guard,
C++ linkage blocks, the C++-only RK_POSITIONAL_INIT initializer variants
(the #else branch is kept) and lockref.c's userspace-only parts
(RK_LOCKREF_IMPL, the RK_LOCKREF_INLINE block) are rewritten, and each
rewrite is checked to have happened exactly as expected, so a core change
that the rules do not cover stops the generator instead of producing a
wrong patch.  The
conversions of existing kernel code (ipc, posix-timers) are Coccinelle
semantic patches (cocci/), one topic per file, each with a test; every
file a rule is given must come out changed, and what must be gone
afterwards (e.g. any use of the old IDR) is checked, so a tree the rules
no longer match is refused, not half-converted.

Exit status: 0 done; 2 unsupported tree (version or an anchor line not
found); 3 tree already carries ridr-kit; 1 anything else.
"""
import argparse
import email.utils
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

import translate as tr

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SUPPORTED = {(6, 1), (6, 12)}

# Files the series reads (and, but for the new ones, modifies): the
# top-level Makefile (version) and the files of each patch (PATCHES).
READ_FILES = ["Makefile"]
# Files the series adds: their presence means "already patched"
# (include/linux/rk_compat.h: by an older series, which installed it).
NEW_FILES = ["include/linux/rk_compat.h", "include/linux/ridr.h",
             "lib/ridr.c", "lib/ridr_kunit.c",
             "lib/test_ridr.c"]


class Refuse(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# ---------------------------------------------------------------------------
# Input: a tree or a tarball, reduced to {path: text or None}


def files_from_tree(tree):
    if not os.path.isfile(os.path.join(tree, "Makefile")):
        raise Refuse(2, f"{tree}: not a kernel source tree (no Makefile)")
    out = {}
    for p in READ_FILES + NEW_FILES:
        full = os.path.join(tree, p)
        out[p] = read(full) if os.path.isfile(full) else None
    return out


def files_from_tarball(tarball):
    """One streaming pass over the tarball, keeping only what we read."""
    want = set(READ_FILES + NEW_FILES)
    out = {p: None for p in want}
    top = None
    with tarfile.open(tarball, "r|*") as tf:
        for m in tf:
            parts = m.name.split("/", 1)
            if top is None:
                top = parts[0]
            if len(parts) < 2 or parts[0] != top or parts[1] not in want:
                continue
            if m.isfile():
                out[parts[1]] = tf.extractfile(m).read().decode("utf-8")
    if out["Makefile"] is None:
        raise Refuse(2, f"{tarball}: no kernel Makefile under {top}/")
    return out


def kernel_version(makefile):
    v = {}
    for key in ("VERSION", "PATCHLEVEL", "SUBLEVEL"):
        m = re.search(rf"^{key} = (\d+)$", makefile, re.M)
        if not m:
            raise Refuse(2, f"top-level Makefile has no {key} line")
        v[key] = int(m.group(1))
    return v["VERSION"], v["PATCHLEVEL"], v["SUBLEVEL"]


def check_tree(files):
    ver = kernel_version(files["Makefile"])
    if ver[:2] not in SUPPORTED:
        sup = ", ".join(f"{a}.{b}" for a, b in sorted(SUPPORTED))
        raise Refuse(2, f"unsupported kernel {ver[0]}.{ver[1]}.{ver[2]} "
                        f"(supported: {sup})")
    for p in NEW_FILES:
        if files[p] is not None:
            raise Refuse(3, f"tree already carries ridr-kit: {p} exists")
    if files["lib/lockref.c"] and "rk_compat.h" in files["lib/lockref.c"]:
        raise Refuse(3, "tree already carries ridr-kit: lib/lockref.c "
                        "includes rk_compat.h (an older series)")
    for p in READ_FILES:
        if files[p] is None:
            raise Refuse(2, f"unsupported tree: {p} is missing")
    return ver


# ---------------------------------------------------------------------------
# Mechanical rewrites


def sub_exact(text, old, new, count, what):
    """Replace @old by @new; insist it occurs exactly @count times."""
    n = text.count(old)
    if n != count:
        raise Refuse(2, f"{what}: expected {count} x {old!r}, found {n}")
    return text.replace(old, new)


def insert_before(text, anchor, block, what):
    return sub_exact(text, anchor, block + anchor, 1, what)


def insert_after(text, anchor, block, what):
    return sub_exact(text, anchor, anchor + block, 1, what)


CXX_OPEN = '\n#ifdef __cplusplus\nextern "C" {\n#endif\n'
CXX_CLOSE = '\n#ifdef __cplusplus\n}\n#endif\n'
COMPAT_INCLUDE = '#include "compat/compat.h"\n'


def compat_table():
    """The rk_ -> kernel mapping, read from compat/kernel.h."""
    try:
        return tr.parse_compat(core("compat/kernel.h"))
    except tr.TranslateError as e:
        raise Refuse(1, f"reading compat/kernel.h: {e}")


def drop_positional(text, name):
    """Userspace C++ (before C++20) variants of static initializers
    (compat/user.h defines RK_POSITIONAL_INIT, the kernel never does):
    keep the #else branch.  Blocks hold no nested conditional."""
    def positional(m):
        if re.search(r'^#\s*(if|else|elif|endif)', m.group(1) + m.group(2),
                     re.M):
            raise Refuse(1, f"{name}: nested conditional in an "
                            "RK_POSITIONAL_INIT block")
        return m.group(2)
    text = re.sub(r'^#ifdef RK_POSITIONAL_INIT\n(.*?)^#else\n(.*?)^#endif\n',
                  positional, text, flags=re.M | re.S)
    if "RK_POSITIONAL_INIT" in text:
        raise Refuse(1, f"{name}: unexpected RK_POSITIONAL_INIT use")
    return text


# Kernel-doc lines of struct ridr's @flavor member (the member itself is
# in an #if RK_HAVE_FLAVORS block): the line and its continuation lines.
FLAVOR_DOC = re.compile(r"^ \* @flavor: .*\n(?: \*  +\S.*\n)*", re.M)


def core_to_kernel(text, name, own, exports, guard=None, implied=(),
                   rewritten=frozenset()):
    """Rewrite core file @name for the kernel tree, in the kernel's names.

    @own: (core include line, kernel header) of the file's own header, or
    None; @exports: translate.translate()'s export policy; @guard: (old,
    new) include guard; @implied: headers @own already brings in;
    @rewritten: translate.translate()'s, lines the caller rewrote."""
    if guard:
        old, new = guard
        text = sub_exact(text, old, new, 3, name)
    if CXX_OPEN in text or CXX_CLOSE in text:
        text = sub_exact(text, CXX_OPEN, "", 1, name)
        text = sub_exact(text, CXX_CLOSE, "", 1, name)
    if "__cplusplus" in text:
        raise Refuse(1, f"{name}: unexpected __cplusplus block")
    text = drop_positional(text, name)
    text = FLAVOR_DOC.sub("", text)
    try:
        text = tr.drop_flavor_blocks(text, name)
        text = tr.translate(text, name, compat_table(), exports, rewritten)
    except tr.TranslateError as e:
        raise Refuse(1, f"translating the core: {e}")
    need = tr.needed_headers(text, name.endswith(".h")) - set(implied)
    if own:
        old, hdr = own
        need.discard(hdr)
        text = sub_exact(text, COMPAT_INCLUDE, "", 1, name)
        text = sub_exact(text, old + "\n", tr.include_block(need | {hdr}),
                         1, name)
    else:
        text = sub_exact(text, COMPAT_INCLUDE, tr.include_block(need), 1,
                         name)
    text = re.sub(r"(#include <[^>]+>\n)\n+(#include)", r"\1\2", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    left = re.findall(r'^#include\s+".*"', text, re.M)
    if left:
        raise Refuse(1, f"{name}: include the generator does not map: {left}")
    try:
        tr.check_output(text, name)
    except tr.TranslateError as e:
        raise Refuse(1, f"translating the core: {e}")
    return text


KCONFIG_RIDR = """\
config RIDR
	bool
	help
	  ridr, an id map and id allocator whose lookups run under RCU
	  without a lock or any store to shared memory (lib/ridr.c,
	  include/linux/ridr.h).  Selected by its users.

"""

KCONFIG_RIDR_KUNIT_TEST = """\
config RIDR_KUNIT_TEST
	tristate "KUnit tests for the ridr id map" if !KUNIT_ALL_TESTS
	depends on KUNIT
	select RIDR
	default KUNIT_ALL_TESTS
	help
	  Builds the KUnit tests of the ridr id map and id allocator
	  (lib/ridr.c): allocation, reservation, cyclic allocation, removal
	  and shrinking, iteration, preloading under a spinlock, and RCU
	  readers running concurrently with a writer.

	  For more information on KUnit and unit tests in general please refer
	  to the KUnit documentation in Documentation/dev-tools/kunit/.

	  If unsure, say N.

"""

# ---------------------------------------------------------------------------
# The core, plus the fixes still pending on ridr-kit's main branch
#
# kernel-backport/core-fixes/*.patch are exact diffs against ridr/,
# lockref/ or compat/, each also proposed in CORE-CHANGES.md.  One that is
# already in the core (it reverse-applies) is skipped; one that applies is
# applied to a scratch copy (the worktree is never written); one that does
# neither stops the generator.  Once main carries them all, the directory
# is empty and the kernel sources are the core byte for byte.

CORE = ROOT
CORE_FIXES = []


def prepare_core(scratch):
    global CORE
    fixdir = os.path.join(HERE, "core-fixes")
    fixes = sorted(f for f in os.listdir(fixdir) if f.endswith(".patch")) \
        if os.path.isdir(fixdir) else []
    for d in ("ridr", "lockref", "compat"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(scratch, d))
    for f in fixes:
        path = os.path.join(fixdir, f)

        def ok(*extra):
            return subprocess.run(["git", "apply", "--check", *extra, path],
                                  cwd=scratch, stderr=subprocess.DEVNULL
                                  ).returncode == 0
        if ok("-R"):
            print(f"backport: core fix {f}: already in the core, skipped",
                  file=sys.stderr)
        elif ok():
            subprocess.run(["git", "apply", path], cwd=scratch, check=True)
            CORE_FIXES.append(f)
            print(f"backport: core fix {f}: applied (pending on main, see "
                  "CORE-CHANGES.md)", file=sys.stderr)
        else:
            raise Refuse(1, f"core fix {f} neither applies to nor is in the "
                            "core: update kernel-backport/core-fixes/")
    CORE = scratch


def core(path):
    return read(os.path.join(CORE, path))


# The ridr sources, in the order lib/ridr.c holds them (after internal.h).
RIDR_PARTS = ["ridr/read.c", "ridr/mem.c", "ridr/bucket.c", "ridr/write.c",
              "ridr/ida.c", "ridr/handle.c"]


def ridr_joined():
    """ridr/internal.h and the ridr/*.c parts in one file, still in the
    core's vocabulary (what `backport.py core` writes as lib/ridr.c).

    The parts' own includes go; what they share (RK_HIDDEN, hidden from a
    shared library's symbols in userspace) becomes static in the kernel.
    Returns the text and unhide()'s rewritten lines.
    """
    spdx = "// SPDX-License-Identifier: LGPL-2.1-or-later\n"
    internal = core("ridr/internal.h")
    internal = sub_exact(internal, "/* SPDX-License-Identifier: "
                         "LGPL-2.1-or-later */\n", "", 1, "ridr/internal.h")
    for old in ("#ifndef RK_RIDR_INTERNAL_H\n#define RK_RIDR_INTERNAL_H\n",
                "#endif /* RK_RIDR_INTERNAL_H */\n",
                '#include "ridr/ridr.h"\n', '#include "compat/compat.h"\n'):
        internal = sub_exact(internal, old, "", 1, "ridr/internal.h")
    internal = sub_exact(
        internal, "/*\n * Functions shared between the parts: RK_HIDDEN keeps "
        "them out of a\n * shared library's dynamic symbols (userspace), where"
        " the version script\n * would otherwise export every ridr_* name.\n"
        " */\n", "/* Functions shared between the parts. */\n", 1,
        "ridr/internal.h")
    parts = []
    for name in RIDR_PARTS:
        text = core(name)
        for old in (spdx, '#include "ridr/internal.h"\n',
                    '#include "compat/compat.h"\n'):
            text = sub_exact(text, old, "", 1, name)
        # A blank line between one part's last function and the next
        # part's opening comment (core_to_kernel() folds runs of them).
        parts.append("\n" + text.lstrip("\n"))
    text = (spdx + "/*\n * ridr, an RCU-readable id map and "
            "id allocator: internal.h,\n * then " + ", ".join(
                p.split("/")[1] for p in RIDR_PARTS) +
            " of the ridr-kit core, in one file.\n */\n"
            '#include "ridr/ridr.h"\n#include "compat/compat.h"\n' +
            internal + "".join(parts))
    return unhide(text)


def unhide(text):
    """RK_HIDDEN [extern] -> static.  Returns the text and the lines it
    rewrote at the start of a declaration: translate.translate() realigns
    their continuation lines after the parenthesis that moved, as it does
    for the words it shortens itself (checkpatch --strict's
    PARENTHESIS_ALIGNMENT)."""
    lines, rewritten = text.split("\n"), set()
    for i, line in enumerate(lines):
        new = re.sub(r"^RK_HIDDEN (extern )?", "static ", line)
        if new != line:
            lines[i] = new
            rewritten.add(new)
    return ("\n".join(lines).replace("RK_HIDDEN ", "static "),
            frozenset(rewritten))


def modular_users(header):
    """Symbols of the core that in-tree code which may be built as a
    module calls: lib/ridr_kunit.c (tristate), including through the
    macros and inline functions of @header (the generated
    include/linux/ridr.h) it uses.  ipc/ and kernel/time/ are built in
    and need no export."""
    src = read(os.path.join(HERE, "kernel/ridr_kunit.c"))
    used = set(re.findall(r"\b\w+\b", tr.code_mask(src)))
    code = tr.code_mask(header)
    # name -> the words of its body: macros, and static inline functions.
    bodies = dict(re.findall(
        r"^#define (\w+)\(?[^)\n]*\)?((?:.*\\\n)*.*)$", code, re.M))
    for m in re.finditer(r"^static inline [^;{]*?\b(\w+)\([^;{]*\)\s*\{",
                         code, re.M):
        depth, i = 0, m.end() - 1
        for j in range(i, len(code)):
            depth += code[j] == "{"
            depth -= code[j] == "}"
            if depth == 0:
                break
        bodies[m.group(1)] = code[i:j + 1]
    grew = True
    while grew:
        grew = False
        for name, body in bodies.items():
            if name in used:
                new = set(re.findall(r"\b\w+\b", body)) - used
                if new:
                    used |= new
                    grew = True
    return used


def patch1(files, tree):
    hdr = core_to_kernel(core("ridr/ridr.h"), "ridr/ridr.h", None, "plain",
                         ("RK_RIDR_H", "_LINUX_RIDR_H"))
    tree["include/linux/ridr.h"] = hdr
    ridr_c, rewritten = ridr_joined()
    tree["lib/ridr.c"] = core_to_kernel(
        ridr_c, "lib/ridr.c",
        ('#include "ridr/ridr.h"', "linux/ridr.h"), modular_users(hdr),
        implied=set(re.findall(r"^#include <([^>]+)>", hdr, re.M)),
        rewritten=rewritten)
    tree["lib/ridr_kunit.c"] = read(os.path.join(HERE, "kernel/ridr_kunit.c"))
    tree["lib/Kconfig"] = insert_before(
        tree["lib/Kconfig"], "config BITREVERSE\n", KCONFIG_RIDR,
        "lib/Kconfig")
    tree["lib/Kconfig.debug"] = insert_before(
        tree["lib/Kconfig.debug"], "config OVERFLOW_KUNIT_TEST\n",
        KCONFIG_RIDR_KUNIT_TEST, "lib/Kconfig.debug")
    mk = insert_after(tree["lib/Makefile"], "obj-y\t+= lockref.o\n",
                      "obj-$(CONFIG_RIDR) += ridr.o\n", "lib/Makefile")
    tree["lib/Makefile"] = insert_after(
        mk, "obj-$(CONFIG_OVERFLOW_KUNIT_TEST) += overflow_kunit.o\n",
        "obj-$(CONFIG_RIDR_KUNIT_TEST) += ridr_kunit.o\n", "lib/Makefile")


# lockref/lockref.c's userspace-only parts: the define that selects its
# out-of-line functions over lockref.h's inline fast paths, and the slow
# paths those call (the kernel has neither: no inline fast path).
LOCKREF_IMPL_DEFINE = ("#define RK_LOCKREF_IMPL\t/* the out-of-line functions, "
                       "not lockref.h's inline ones */\n")
LOCKREF_USER_BLOCK = re.compile(
    r'\n#ifdef RK_LOCKREF_INLINE\n.*?^#endif /\* RK_LOCKREF_INLINE \*/\n',
    re.M | re.S)


def lockref_c():
    text = core("lockref/lockref.c")
    text = sub_exact(text, LOCKREF_IMPL_DEFINE, "", 1, "lockref/lockref.c")
    text, n = LOCKREF_USER_BLOCK.subn("", text)
    if n != 1 or "RK_LOCKREF" in text:
        raise Refuse(1, "lockref/lockref.c: expected one RK_LOCKREF_INLINE "
                        "block and no other RK_LOCKREF_* use")
    return core_to_kernel(
        text, "lockref/lockref.c",
        ('#include "lockref/lockref.h"', "linux/lockref.h"), "plain",
        implied=tr.IMPLIED["linux/lockref.h"])


def patch2(files, tree):
    """lib/lockref.c from lockref/lockref.c: the kernel's own orderings
    (compat/kernel.h), kernel-doc and EXPORT_SYMBOLs; no new API (the
    userspace helpers are in the dropped RK_LOCKREF_INLINE block), so
    include/linux/lockref.h is untouched."""
    tree["lib/lockref.c"] = lockref_c()


# ---------------------------------------------------------------------------
# Coccinelle

COCCI = os.path.join(HERE, "cocci")


def spatch(rule, path, out):
    """Run semantic patch @rule on C file @path, writing @out."""
    r = subprocess.run(["spatch", "--sp-file", rule, "--very-quiet",
                        "--macro-file", os.path.join(COCCI, "macros.h"),
                        "--no-includes", "--no-show-diff", path, "-o", out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode:
        raise Refuse(1, f"spatch {os.path.basename(rule)} on "
                        f"{os.path.basename(path)} failed:\n{r.stdout}")


def retab(old, new):
    """Leading runs of 8 spaces -> tabs, on lines spatch wrote (not in @old)."""
    seen = set(old.split("\n"))
    out = []
    for line in new.split("\n"):
        if line not in seen:
            m = re.match(r"^(\t*)((?: {8})+)", line)
            if m:
                line = (m.group(1) + "\t" * (len(m.group(2)) // 8)
                        + line[m.end():])
        out.append(line)
    return "\n".join(out)


def cocci(tree, rule, paths):
    """Apply cocci/@rule to each of @paths in @tree (in memory).

    Every path must come out changed: a rule that no longer matches a
    file of the tree stops the generator (unsupported tree).  Lines the
    rule wrote get kernel indentation (retab())."""
    with tempfile.TemporaryDirectory(prefix="rk-cocci-") as d:
        for i, p in enumerate(paths):
            src = os.path.join(d, f"{i}-{os.path.basename(p)}")
            dst = src + ".out"
            with open(src, "w", encoding="utf-8") as f:
                f.write(tree[p])
            spatch(os.path.join(COCCI, rule), src, dst)
            new = read(dst) if os.path.exists(dst) else tree[p]
            if new == tree[p]:
                raise Refuse(2, f"cocci/{rule}: no match in {p}")
            tree[p] = retab(tree[p], new)


def forbid(tree, paths, pattern, what):
    """After a conversion: @pattern must occur in none of @paths."""
    for p in paths:
        m = re.search(pattern, tree[p], re.M)
        if m:
            raise Refuse(2, f"{what}: {p} still has {m.group(0)!r} (a use "
                            "the rules do not convert)")


def test_rules():
    """cocci/NN-topic.cocci on cocci/tests/NN-topic.c must give .res."""
    rules = sorted(f for f in os.listdir(COCCI) if f.endswith(".cocci"))
    bad = 0
    with tempfile.TemporaryDirectory(prefix="rk-cocci-test-") as d:
        for r in rules:
            base = os.path.join(COCCI, "tests", r[:-len(".cocci")])
            if not (os.path.isfile(base + ".c") and
                    os.path.isfile(base + ".res")):
                print(f"FAIL {r}: no tests/{os.path.basename(base)}.c/.res")
                bad += 1
                continue
            out = os.path.join(d, os.path.basename(base) + ".out")
            try:
                spatch(os.path.join(COCCI, r), base + ".c", out)
            except Refuse as e:
                print(f"FAIL {r}: {e}")
                bad += 1
                continue
            got = read(out) if os.path.exists(out) else read(base + ".c")
            if got == read(base + ".c"):
                print(f"FAIL {r}: changes nothing in its test input")
                bad += 1
            elif got != read(base + ".res"):
                diff = subprocess.run(["diff", "-u", base + ".res", out],
                                      stdout=subprocess.PIPE, text=True)
                print(f"FAIL {r}: result differs from the .res\n"
                      + diff.stdout)
                bad += 1
            else:
                print(f"PASS {r}")
    print(f"cocci rules: {len(rules) - bad} passed, {bad} failed")
    return 1 if bad or not rules else 0


IPC_HELPERS = r"""
/*
 * ids->ipcs_ridr maps an ipc index to its kern_ipc_perm.
 *
 * Writers (ipc_addid(), ipc_rmid(), shm_destroy_orphaned(), namespace
 * teardown) hold ids->rwsem for writing, which serializes them: they use
 * the caller-serialized __ridr_*() functions, never the map's spinlock.
 *
 * Readers: ipc_obtain_object_idr() looks up under the caller's
 * rcu_read_lock() alone (ridr_find(): no lock, no store to shared memory).
 * What it finds stays valid until rcu_read_unlock(): a removed object is
 * freed by ipc_rcu_putref() after a grace period, and ridr frees the nodes
 * a removal empties after one as well.
 *
 * Holders of ids->rwsem may also look up outside RCU (/proc/sysvipc,
 * SHM_INFO, free_ipcs(), ipc_search_maxidx()).  ridr's lookups are RCU
 * readers (rcu_dereference(), checked by PROVE_RCU), so the _locked
 * helpers enter a read-side section around the lookup only; the object
 * stays valid after it because removing it needs ids->rwsem for writing.
 */
static inline struct kern_ipc_perm *ipc_find_locked(struct ipc_ids *ids,
						    int idx)
{
	struct kern_ipc_perm *ipcp;

	lockdep_assert_held(&ids->rwsem);
	rcu_read_lock();
	ipcp = ridr_find(&ids->ipcs_ridr, idx);
	rcu_read_unlock();
	return ipcp;
}

/* The first object at an index >= *@idx (its index in *@idx), or NULL. */
static inline struct kern_ipc_perm *ipc_get_next_locked(struct ipc_ids *ids,
							int *idx)
{
	struct kern_ipc_perm *ipcp;
	unsigned long i = *idx;

	lockdep_assert_held(&ids->rwsem);
	if (*idx < 0)
		return NULL;
	rcu_read_lock();
	ipcp = ridr_get_next(&ids->ipcs_ridr, &i);
	rcu_read_unlock();
	/* Indexes are below ipc_mni, so i fits an int. */
	if (ipcp)
		*idx = i;
	return ipcp;
}

/*
 * @fn(index, object, @data) for every object in index order, up to the
 * first non-zero return, which is returned.  @fn may remove the object it
 * is given (the caller then holds ids->rwsem for writing): each step
 * looks up the next index afresh.
 */
static inline int ipc_for_each(struct ipc_ids *ids,
			       int (*fn)(int id, void *p, void *data),
			       void *data)
{
	struct kern_ipc_perm *ipcp;
	int idx = 0, ret;

	while ((ipcp = ipc_get_next_locked(ids, &idx))) {
		ret = fn(idx, ipcp, data);
		if (ret)
			return ret;
		idx++;
	}
	return 0;
}

/* Frees index @idx: the object it held, or NULL if it held none. */
static inline struct kern_ipc_perm *ipc_remove_idx(struct ipc_ids *ids,
						   int idx)
{
	void *old;

	lockdep_assert_held_write(&ids->rwsem);
	if (__ridr_remove(&ids->ipcs_ridr, idx, &old))
		return NULL;
	return old;
}

/*
 * An index in [@start, @end) for @new: the lowest free one, or (cyclic)
 * the first free one after the last index handed out, wrapping to
 * @start; or -ENOSPC, -ENOMEM (-EINVAL for a negative @start).  Called by
 * ipc_addid() under ids->rwsem (write) and new->lock, so it must not
 * sleep: nodes come from @pl (ridr_preload() before new->lock), what is
 * missing is allocated with GFP_NOWAIT.  The cyclic cursor is the map's
 * own.
 */
static inline int __ipc_alloc_idx(struct ipc_ids *ids,
				  struct kern_ipc_perm *new, int start,
				  int end, struct ridr_preload *pl,
				  bool cyclic)
{
	unsigned long idx;
	int err;

	lockdep_assert_held_write(&ids->rwsem);
	if (start < 0)
		return -EINVAL;
	if (start >= end)
		return -ENOSPC;
	if (cyclic)
		err = __ridr_alloc_cyclic(&ids->ipcs_ridr, new, start, end - 1,
					  &idx, pl);
	else
		err = __ridr_alloc(&ids->ipcs_ridr, new, start, end - 1, &idx,
				   pl);
	return err ? err : idx;
}

static inline int ipc_alloc_idx(struct ipc_ids *ids,
				struct kern_ipc_perm *new, int start, int end,
				struct ridr_preload *pl)
{
	return __ipc_alloc_idx(ids, new, start, end, pl, false);
}

static inline int ipc_alloc_idx_cyclic(struct ipc_ids *ids,
				       struct kern_ipc_perm *new, int start,
				       int end, struct ridr_preload *pl)
{
	return __ipc_alloc_idx(ids, new, start, end, pl, true);
}
"""

IPC_C = ["ipc/util.c", "ipc/namespace.c", "ipc/shm.c", "ipc/msg.c",
         "ipc/sem.c"]

# Comments of ipc that name the IDR (the same text in 6.1 and 6.12), as
# (file, old, new[, count]).  Function names keep "idr" (e.g.
# ipc_obtain_object_idr()): renaming them is not part of this series.
IPC_COMMENTS = [
    ("ipc/util.c", "inside idr_replace, as part of",
     "inside __ridr_replace(), as part of"),
    ("ipc/util.c", " *          obtain the ipc object (kern_ipc_perm) by "
     "looking up the id in an idr\n *\t    tree.\n",
     " *          obtain the ipc object (kern_ipc_perm) by looking up the id "
     "in a\n *\t    ridr.\n"),
    ("ipc/util.c", "then initialise the keys hashtable and ids idr.",
     "then initialise the keys hashtable and ids ridr."),
    ("ipc/util.c", " * Insert new IPC object into idr tree, and set",
     " * Insert new IPC object into the ridr, and set"),
    ("ipc/util.c", "before inserting the object into the idr,\n",
     "before inserting the object into the ridr,\n"),
    ("ipc/util.c", "after inserting the object into the idr.\n",
     "after inserting the object into the ridr.\n"),
    ("ipc/util.c", "As soon as a new object is inserted into the idr,\n",
     "As soon as a new object is inserted into the ridr,\n"),
    ("ipc/util.c", "Add an entry 'new' to the ipc ids idr.",
     "Add an entry 'new' to the ipc ids ridr."),
    ("ipc/util.c", " * ds IDR.\n", " * namespace.\n"),
    ("ipc/util.c", "Look for an id in the ipc ids idr and return",
     "Look for an id in the ipc ids ridr and return"),
    ("ipc/util.c", "/* convert from position to idr index -> \"-1\" */",
     "/* convert from position to ridr index -> \"-1\" */"),
    ("ipc/util.c", "/* convert from idr index to position  -> \"+1\" */",
     "/* convert from ridr index to position -> \"+1\" */"),
    ("ipc/util.h", "doesn't scan the idr tree, it uses a cached value.",
     "doesn't scan the ridr, it uses a cached value."),
    ("ipc/msg.c", "removes the message queue from message queue ID IDR,",
     "removes the message queue from the message queue ID ridr,"),
    ("ipc/sem.c", "/* Remove the semaphore set from the IDR */",
     "/* Remove the semaphore set from the ridr */"),
    ("ipc/shm.c", "We raced in the idr lookup or with shm_destroy().",
     "We raced in the ridr lookup or with shm_destroy().", 2),
    ("ipc/shm.c", "idr/kht while we have waited.",
     "ridr/kht while we have waited."),
]


def patch3(files, tree):
    """ipc: struct ipc_ids on a ridr (Coccinelle rules 30-33)."""
    cocci(tree, "30-ipc-ids-struct.cocci", ["include/linux/ipc_namespace.h"])
    cocci(tree, "31-ipc-alloc.cocci", ["ipc/util.c"])
    cocci(tree, "32-ipc-lookup.cocci",
          ["ipc/util.c", "ipc/namespace.c", "ipc/shm.c"])
    cocci(tree, "33-ipc-remove.cocci",
          ["ipc/util.c", "ipc/msg.c", "ipc/sem.c", "ipc/shm.c"])
    # Comments the rules cannot reach: each must occur as often as given.
    for path, old, new, *n in IPC_COMMENTS:
        tree[path] = sub_exact(tree[path], old, new, n[0] if n else 1, path)
    tree["ipc/util.h"] = insert_after(
        tree["ipc/util.h"],
        "struct kern_ipc_perm *ipc_obtain_object_idr(struct ipc_ids *ids, "
        "int id);\n", IPC_HELPERS, "ipc/util.h")
    tree["init/Kconfig"] = insert_after(
        tree["init/Kconfig"], 'config SYSVIPC\n\tbool "System V IPC"\n',
        "\tselect RIDR\n", "init/Kconfig")
    forbid(tree, IPC_C + ["include/linux/ipc_namespace.h", "ipc/util.h"],
           r"\bidr_\w+\(|\bipcs_idr\b|\bstruct idr\b|<linux/idr\.h>|"
           r"\b[Ii][Dd][Rr]\b",
           "ipc on ridr")
    # An index dropped by an isomorphism (see the rules) would compile.
    forbid(tree, IPC_C, r"->ids->ipcs_ridr", "ipc on ridr")


# ---------------------------------------------------------------------------
# Patch 4: POSIX timers on a per-process ridr

PT = "kernel/time/posix-timers.c"
PATCH4_FILES = ["include/linux/sched/signal.h", "include/linux/posix-timers.h",
                PT, "kernel/fork.c", "init/init_task.c", "init/Kconfig"]


def patch4(files, tree):
    ver = kernel_version(files["Makefile"])[:2]
    cocci(tree, "40-posix-timers-struct.cocci",
          ["include/linux/sched/signal.h", "include/linux/posix-timers.h"])
    cocci(tree, "41-posix-timers-lookup.cocci", [PT])
    cocci(tree, "42-posix-timers-remove.cocci", [PT])
    cocci(tree, "43-posix-timers-signal-init.cocci", ["kernel/fork.c"])
    # Not C code, or C that spatch does not parse whole (struct
    # signal_struct, init_signals' initializer): exact-count text edits.
    sig = "include/linux/sched/signal.h"
    tree[sig] = sub_exact(
        tree[sig], "\tunsigned int\t\tnext_posix_timer_id;\n",
        "\t/*\n\t * Timer ids -> struct k_itimer (kernel/time/posix-timers.c):"
        "\n\t * ridr_find() under rcu_read_lock(); writers take the map's own"
        "\n\t * spinlock.  Its cursor is the next id to try.\n\t */\n"
        "\tstruct ridr\t\tposix_timer_ids;\n", 1, sig)
    pth = "include/linux/posix-timers.h"
    tree[pth] = sub_exact(
        tree[pth], " * @t_hash:\t\tEntry in the posix timer hash table\n", "",
        1, pth)
    it = "init/init_task.c"
    initializer = {(6, 1): "\t.posix_timers = LIST_HEAD_INIT("
                           "init_signals.posix_timers),\n",
                   (6, 12): "\t.posix_timers\t= HLIST_HEAD_INIT,\n"}[ver]
    tree[it] = insert_after(tree[it], initializer,
                            "\t.posix_timer_ids = RIDR_INIT,\n", it)
    tree["init/Kconfig"] = insert_after(
        tree["init/Kconfig"],
        'config POSIX_TIMERS\n\tbool "Posix Clocks & timers" if EXPERT\n'
        "\tdefault y\n", "\tselect RIDR\n", "init/Kconfig")
    tree[PT] = sub_exact(
        tree[PT], " * Delete a timer if it is armed, remove it from the hash and"
        " schedule it\n", " * Delete a timer if it is armed, remove its id from"
        " the id map and schedule it\n", 1, PT)
    tree[PT] = sub_exact(
        tree[PT], "/* Relock the timer. It might be not longer hashed. */",
        "/* Relock the timer. It might no longer be in the id map. */", 1, PT)
    if ver == (6, 1):
        for a, b in [
                (" * The timer ID is turned into a timer address by idr_find()."
                 "\n * Verifying a valid ID consists of:\n *\n * a) checking"
                 " that idr_find() returns other than -1.\n * b) checking "
                 "that the timer id matches the one in the timer itself.\n"
                 " * c) that the timer owner is in the callers thread group."
                 "\n",
                 " * The timer ID is turned into a timer address by ridr_find()"
                 " in the\n * process' own id map, signal_struct::"
                 "posix_timer_ids.  Verifying a valid\n * ID consists of:\n"
                 " *\n * a) checking that ridr_find() returns a timer.\n"
                 " * b) checking, with the timer's it_lock held, that it still"
                 " belongs to\n *    the caller's thread group (it_signal =="
                 " current->signal; timer_delete()\n *    sets it to NULL).\n"),
                (" * we get the timer locked down so it is not deleted under us."
                 "  The\n * removal is done under the idr spinlock so we use "
                 "that here to bridge\n * the find to the timer lock.  To "
                 "avoid a dead lock, the timer id MUST\n * be release with "
                 "out holding the timer lock.\n",
                 " * we get the timer locked down so it is not deleted under us."
                 "  The\n * lookup runs under rcu_read_lock(), and a deleted "
                 "timer is freed only\n * after a grace period "
                 "(release_posix_timer()): that bridges the find to\n * the "
                 "timer lock, under which it_signal tells whether the timer is"
                 " still\n * live.  The id is removed without holding the "
                 "timer lock.\n")]:
            tree[PT] = sub_exact(tree[PT], a, b, 1, PT)
        tree[PT] = sub_exact(
            tree[PT], " * Management arrays for POSIX timers. Timers are now kept"
            " in static hash table\n * with 512 entries.\n * Timer ids are"
            " allocated by local routine, which selects proper hash head by\n"
            " * key, constructed from current->signal address and per signal"
            " struct counter.\n * This keeps timer ids unique per process, but"
            " now they can intersect between\n * processes.\n",
            " * Timer ids are per process: each signal_struct has its own id"
            " map (see\n * posix_timer_add()), so ids are unique within a"
            " process and can\n * intersect between processes.\n", 1, PT)
    if ver == (6, 12):
        for a, b in [
                ("\t * The hash lookup and the timers are RCU protected.",
                 "\t * The ridr lookup and the timers are RCU protected."),
                ("\t * Timers are added to the hash in invalid state where",
                 "\t * Timers are added to the ridr in invalid state where"),
                ("\t *  3) Remove from the hash under hash_lock\n",
                 "\t *  3) Remove the id from the process' ridr\n"),
                ("\t * Add the timer to the hash table. The timer is not yet",
                 "\t * Add the timer to the id map. The timer is not yet"),
                ("\t * The lookup validates locklessly that timr::it_signal ==\n"
                 "\t * current::it_signal and timr::it_id == @timer_id. "
                 "timr::it_id\n\t * can't change, but timr::it_signal becomes"
                 " NULL during\n\t * destruction.\n",
                 "\t * The id map is current's own, so the timer found has\n"
                 "\t * timr::it_id == @timer_id, which can't change.\n"
                 "\t * timr::it_signal becomes NULL during destruction: it is\n"
                 "\t * validated under timr::it_lock below.\n"),
                ("/* This makes the timer valid in the hash table */",
                 "/* This makes the timer valid in the id map */"),
                ("\t * here as nothing can access the timer anymore legitimately"
                 " via\n\t * the hash table.",
                 "\t * here as nothing can access the timer anymore legitimately"
                 " via\n\t * the id map.")]:
            tree[PT] = sub_exact(tree[PT], a, b, 1, PT)
    forbid(tree, PATCH4_FILES, r"\bhash_lock\b|posix_timers_hashtable|"
           r"\bt_hash\b|next_posix_timer_id|posix_timer_by_id|"
           r"__posix_timers_find|\bidr|hashed|locklessly", "posix-timers")


# (commit message file, function, files it modifies)
PATCHES = [
    ("0001-lib-ridr.txt", patch1,
     ["lib/Kconfig", "lib/Kconfig.debug", "lib/Makefile"]),
    ("0002-lockref.txt", patch2,
     ["lib/lockref.c"]),
    ("0003-ipc-ridr.txt", patch3,
     ["include/linux/ipc_namespace.h", "ipc/util.h", "init/Kconfig"] + IPC_C),
    ("0004-posix-timers-ridr.txt", patch4, PATCH4_FILES),
]
READ_FILES += [f for _, _, files in PATCHES for f in files
               if f not in READ_FILES]


# ---------------------------------------------------------------------------
# Series


def git(repo, *args, env=None, capture=False):
    e = dict(os.environ)
    e.update(env or {})
    r = subprocess.run(["git", "-C", repo, *args], env=e, check=True,
                       stdout=subprocess.PIPE if capture else
                       subprocess.DEVNULL, text=True)
    return r.stdout if capture else None


def identity(args):
    if args.signoff:
        name, mail = email.utils.parseaddr(args.signoff)
    else:
        def cfg(key):
            r = subprocess.run(["git", "-C", ROOT, "config", key],
                               stdout=subprocess.PIPE, text=True)
            return r.stdout.strip()
        name, mail = cfg("user.name"), cfg("user.email")
    if not name or not mail:
        raise Refuse(1, "no identity for From:/Signed-off-by: (pass "
                        "--signoff 'Name <mail>' or set git user.name and "
                        "user.email)")
    return name, mail


def generate(files, ver, out, who):
    name, mail = who
    # Reproducible: the dates are the ridr-kit commit's, not the clock's.
    date = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%cI"],
                          stdout=subprocess.PIPE, text=True).stdout.strip()
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": mail,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": mail,
           "GIT_AUTHOR_DATE": date or "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": date or "2026-01-01T00:00:00Z",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}
    vstr = "%d.%d.%d" % ver
    with tempfile.TemporaryDirectory(prefix="rk-backport-") as repo:
        git(repo, "init", "-q")
        tree = {p: t for p, t in files.items() if t is not None}

        def write_tree():
            for p, t in tree.items():
                full = os.path.join(repo, p)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w", encoding="utf-8") as f:
                    f.write(t)
            git(repo, "add", "-A")

        write_tree()
        git(repo, "commit", "-q", "-m", f"Linux {vstr} (files the series "
            "touches)", env=env)
        for msgfile, fn, _ in PATCHES:
            fn(files, tree)
            write_tree()
            msg = read(os.path.join(HERE, "msg", msgfile)).rstrip("\n")
            msg += f"\n\nSigned-off-by: {name} <{mail}>\n"
            subprocess.run(["git", "-C", repo, "commit", "-q", "-F", "-"],
                           input=msg, text=True, check=True,
                           env={**os.environ, **env})
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.makedirs(out)
        names = git(repo, "format-patch", "--numbered",
                    "--zero-commit", "--signature",
                    f"ridr-kit kernel-backport, Linux {vstr}",
                    "-o", out, "HEAD~%d" % len(PATCHES), env=env,
                    capture=True)
        series = [os.path.basename(n) for n in names.split()]
        combined = git(repo, "diff", "HEAD~%d" % len(PATCHES), "HEAD",
                       capture=True)
    with open(os.path.join(out, "series"), "w") as f:
        f.write("\n".join(series) + "\n")
    comb = os.path.join(out, f"ridr-kit-{vstr}.patch")
    with open(comb, "w") as f:
        f.write(f"ridr-kit kernel backport for Linux {vstr}: the "
                f"{len(series)} patches listed in 'series', combined.\n")
        if CORE_FIXES:
            f.write("Generated with these fixes to the ridr-kit core, "
                    "pending on its main branch\n(kernel-backport/"
                    "core-fixes/, CORE-CHANGES.md): "
                    + ", ".join(CORE_FIXES) + "\n")
        f.write("\n")
        f.write(combined)
    return series, comb


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["generate", "apply", "test-rules",
                                        "test-translate", "core"])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--tree", help="kernel source tree")
    src.add_argument("--tarball", help="Debian linux-source-*.tar.xz")
    ap.add_argument("--out", help="output directory "
                    "(default: out/kernel/<version> in ridr-kit)")
    ap.add_argument("--signoff", help="'Name <mail>' for From: and "
                    "Signed-off-by: (default: git user of ridr-kit)")
    args = ap.parse_args()
    if args.command == "test-rules":
        return test_rules()
    if args.command == "test-translate":
        return tr.selftest(read(os.path.join(ROOT, "compat/kernel.h")))
    if args.command == "core":
        if not args.out or os.path.exists(args.out):
            ap.error("core needs --out DIR (a directory that does not exist)")
        try:
            os.makedirs(args.out)
            prepare_core(args.out)
            os.makedirs(os.path.join(args.out, "lib"))
            with open(os.path.join(args.out, "lib", "ridr.c"), "w") as f:
                f.write(ridr_joined()[0])
        except Refuse as e:
            print(f"backport: {e}", file=sys.stderr)
            return e.code
        return 0
    if not (args.tree or args.tarball):
        ap.error("generate and apply need --tree or --tarball")
    try:
        if args.command == "apply" and not args.tree:
            raise Refuse(1, "apply needs --tree")
        files = (files_from_tree(args.tree) if args.tree
                 else files_from_tarball(args.tarball))
        ver = check_tree(files)
        out = args.out or os.path.join(ROOT, "out", "kernel",
                                       "%d.%d.%d" % ver)
        with tempfile.TemporaryDirectory(prefix="rk-core-") as scratch:
            prepare_core(scratch)
            series, comb = generate(files, ver, out, identity(args))
        print(f"backport: Linux %d.%d.%d: {len(series)} patches in {out}, "
              f"combined {comb}" % ver, file=sys.stderr)
        if args.command == "apply":
            # git apply is all-or-nothing: --check first for a clear
            # message, then the real run, which also refuses as a whole.
            for extra in (["--check"], []):
                r = subprocess.run(["git", "apply", *extra, comb],
                                   cwd=args.tree)
                if r.returncode:
                    raise Refuse(1, f"{args.tree}: the series does not "
                                    "apply; tree left unchanged")
            print(f"backport: applied to {args.tree}", file=sys.stderr)
    except Refuse as e:
        print(f"backport: {e}", file=sys.stderr)
        return e.code
    except subprocess.CalledProcessError as e:
        print(f"backport: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
