# SPDX-License-Identifier: LGPL-2.1-or-later
"""Translate the portable core's compat vocabulary into kernel C.

compat/kernel.h is the one definition of what each rk_/RK_ word means in
the kernel.  This module reads its #defines (parse_compat()) and rewrites a
core source file (ridr/ridr.c, ridr/ridr.h, lockref/lockref.c) with the
kernel's own names, so the files written into a kernel tree carry no
compatibility layer (backport.py calls these on lib/ridr.c, the ridr/
parts joined, on ridr/ridr.h and on lockref/lockref.c):

  1. drop_flavor_blocks(): userspace-only API sits in #if RK_HAVE_FLAVORS
     blocks (compat/kernel.h defines it 0): the blocks go, their #else
     branches stay;
  2. translate(): every word of the vocabulary in code is expanded as its
     definition says (see the comment at the top of compat/kernel.h); in
     comments a word becomes the kernel name alone; C library types and
     builtins become the kernel's (LIBC); rk_export_symbol() follows the
     file's export policy;
  3. kernel_includes(): the #include "compat/compat.h" line becomes the
     kernel headers the translated file uses (HEADERS);
  4. check_output(): no rk_/RK_ word, no userspace or liburcu wording is
     left; any is an error, never a silent pass.

A word compat/kernel.h defines differently under #ifdef CONFIG_X and
#else (the lockdep words) may only be used in a #define of the core: that
#define is written twice, under #ifdef CONFIG_X and #else, each with its
own expansion (split_conditional_defines()).

Nothing here knows the meaning of a word except the few SPECIAL ones that
are not expressions (their kernel.h definitions produce the same code,
which verify.sh checks by comparing the machine code of both builds).
"""
import re

WORD = re.compile(r"\b_*(?:rk|RK)_\w*")
IDENT = re.compile(r"[A-Za-z_]\w*")
# An argument that needs no parentheses: an identifier or member chain,
# a number, or one of those behind & or *.
SIMPLE = re.compile(r"^[&*]?[A-Za-z_]\w*(?:(?:\.|->)[A-Za-z_]\w*)*$|^\d+[uUlL]*$")

# C library names the core uses -> the kernel's.
LIBC = {
    "uint64_t": "u64", "uint32_t": "u32", "uint16_t": "u16",
    "uint8_t": "u8", "int64_t": "s64", "int32_t": "s32", "int16_t": "s16",
    "int8_t": "s8", "UINT64_MAX": "U64_MAX", "UINT32_MAX": "U32_MAX",
    "__builtin_memset": "memset", "__builtin_memcpy": "memcpy",
    "__builtin_offsetof": "offsetof",
}

# Wording that must not reach a kernel file (userspace-only API and its
# documentation).
FORBIDDEN = re.compile(r"liburcu|\burcu|flavou?r|user ?space", re.I)

# Kernel header -> identifiers (in code) that need it.  Used to write the
# #include lines of a generated file.
HEADERS = [
    ("linux/atomic.h", r"try_cmpxchg64\w*|atomic\w*"),
    ("linux/bitops.h", r"__ffs64|hweight64|__ffs|fls64"),
    ("linux/bits.h", r"BITS_PER_LONG|BIT_ULL|GENMASK\w*"),
    ("linux/bug.h", r"BUG_ON|WARN_ON_ONCE|WARN_ON"),
    ("linux/build_bug.h", r"BUILD_BUG_ON|static_assert"),
    ("linux/cache.h", r"__ro_after_init"),
    ("linux/compiler.h", r"READ_ONCE|WRITE_ONCE|likely|unlikely"),
    ("linux/container_of.h", r"container_of"),
    ("linux/errno.h", r"E(?:INVAL|NOMEM|NOSPC|NOENT|AGAIN|BUSY|EXIST)"),
    ("linux/export.h", r"EXPORT_SYMBOL\w*"),
    ("linux/gfp.h", r"GFP_\w+|__GFP_\w+"),
    ("linux/init.h", r"__init|core_initcall"),
    ("linux/limits.h", r"ULONG_MAX|INT_MAX|UINT_MAX|LONG_MAX|U64_MAX"),
    ("linux/lockdep.h", r"lockdep_\w+|lock_is_held|lock_class_key"),
    ("linux/prefetch.h", r"prefetch"),
    ("linux/rcupdate.h", r"rcu_\w+|RCU_INIT_POINTER|call_rcu|synchronize_rcu"),
    ("linux/slab.h", r"kmem_cache\w*|kzalloc|kmalloc|kfree|SLAB_\w+"),
    ("linux/spinlock.h", r"spin_\w+|spinlock_t|__SPIN_LOCK_UNLOCKED|"
                         r"arch_spin_\w+|assert_spin_locked"),
    ("linux/stddef.h", r"offsetof"),
    ("linux/string.h", r"memset|memcpy"),
    ("linux/types.h", r"u64|u32|u16|u8|s64|s32|bool|size_t|aligned_u64|"
                      r"rcu_head"),
]
# A header needs only the lighter headers for some names (none: ridr.h
# includes what the compatibility header it replaces included).
HEADER_ONLY = {}
# What a header the generator does not write (the kernel's own) already
# brings in: a .c file including it needs none of these again.
IMPLIED = {
    "linux/lockref.h": {"linux/spinlock.h", "linux/compiler.h",
                        "linux/build_bug.h", "linux/types.h",
                        "linux/atomic.h"},
}

# Words only one core file may use, because their kernel mapping is
# specific to it (compat/kernel.h: lockref keeps the kernel's relaxed
# orderings).
RESTRICTED = {
    "rk_try_cmpxchg64_release": {"lockref/lockref.c"},
    "rk_try_cmpxchg64": {"lockref/lockref.c"},
}


class TranslateError(Exception):
    pass


# ---------------------------------------------------------------------------
# Lexing: which characters are code


def code_mask(text):
    """A copy of @text with comments and string/char literals blanked
    (same length, newlines kept), so searches see code only."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


def comment_spans(text):
    spans, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            spans.append((i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            spans.append((i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return spans


def split_args(masked, start):
    """@start indexes "(": return (args as (begin, end) spans, index after
    the matching ")")."""
    depth, args, begin = 0, [], start + 1
    for i in range(start, len(masked)):
        c = masked[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append((begin, i))
                return args, i + 1
        elif c == "," and depth == 1:
            args.append((begin, i))
            begin = i + 1
    raise TranslateError("unbalanced parentheses")


# ---------------------------------------------------------------------------
# compat/kernel.h


class Entry:
    def __init__(self, name, params, body, kind, dropped=()):
        self.name, self.params, self.body = name, params, body
        self.kind, self.dropped = kind, set(dropped)

    def kname(self):
        """The kernel name a comment mentioning the word gets: the first
        name of its expansion (RK_GFP_NOWAIT: GFP_NOWAIT)."""
        b = self.body.strip()
        if self.kind == "obj":
            m = IDENT.search(b)
            return m.group(0) if m else strip_parens(b)
        m = re.match(r"^(\w+)\s*\(", b)
        return m.group(1) if m else self.name


def strip_parens(s):
    s = s.strip()
    if s.startswith("(") and s.endswith(")"):
        depth = 0
        for i, c in enumerate(s):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(s) - 1:
                return s
        return s[1:-1].strip()
    return s


def top_split(s, sep):
    out, depth, cur = [], 0, ""
    for c in s:
        depth += c in "([{"
        depth -= c in ")]}"
        if c == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    out.append(cur)
    return out


def parse_compat(text):
    """{word: Entry} from the #defines of compat/kernel.h.

    A word defined under "#ifdef CONFIG_X" and again under its "#else"
    gets a Conditional entry holding both."""
    masked = code_mask(text)
    # Join continuation lines (on the masked copy: comments are gone).
    joined = re.sub(r"\\\n", " ", masked)
    table = {}
    conds = []	# stack: (config symbol or None, in the #else branch)
    for m in re.finditer(r"^[ \t]*#[ \t]*(\w+)(.*)$", joined, re.M):
        kw, rest = m.group(1), m.group(2).strip()
        if kw in ("if", "ifdef", "ifndef"):
            c = re.fullmatch(r"(CONFIG_\w+)", rest) if kw == "ifdef" else None
            if kw != "ifdef" and "CONFIG_" in rest:
                raise TranslateError("compat/kernel.h: only '#ifdef CONFIG_X'"
                                     f" conditionals: #{kw} {rest}")
            conds.append([c.group(1) if c else None, False])
            continue
        if kw == "else":
            conds[-1][1] = True
            continue
        if kw == "endif":
            conds.pop()
            continue
        if kw != "define":
            continue
        d = re.match(r"(\w+)(\([^)]*\))?[ \t]*(.*)$", rest)
        name, params, body = d.group(1), d.group(2), d.group(3).strip()
        if not WORD.fullmatch(name) or not body:
            continue	# the include guard, or not a vocabulary word
        cfg = [c for c in conds if c[0]]
        if len(cfg) > 1:
            raise TranslateError(f"compat/kernel.h: {name}: nested CONFIG_ "
                                 "conditionals")
        entry = parse_define(name, params, body)
        if not cfg:
            table[name] = entry
            continue
        cond = table.setdefault(name, Conditional(name, cfg[0][0]))
        if not isinstance(cond, Conditional) or cond.config != cfg[0][0]:
            raise TranslateError(f"compat/kernel.h: {name} defined both "
                                 "conditionally and not")
        cond.branch[not cfg[0][1]] = entry
    for name, e in table.items():
        if isinstance(e, Conditional) and None in e.branch.values():
            raise TranslateError(f"compat/kernel.h: {name} has no #else "
                                 "definition")
    return table


class Conditional:
    """A word with one definition under #ifdef CONFIG_X, one under #else."""
    def __init__(self, name, config):
        self.name, self.config = name, config
        self.branch = {True: None, False: None}
        self.kind, self.params = "conditional", ()

    def kname(self):
        return self.branch[True].kname()


def parse_define(name, params, body):
    if True:
        body = re.sub(r"\s+", " ", body)
        if name in SPECIAL:	# written out by hand, whatever the body
            return Entry(name, None if params is None else [], body,
                         "special")
        if params is None:
            kind = "special" if ";" in body or "{" in body else "obj"
            return Entry(name, None, body, kind)
        plist = [p.strip() for p in params[1:-1].split(",") if p.strip()]
        dm = re.fullmatch(r"do \{(.*)\} while \(0\)", body)
        if dm:
            stmts = [s.strip() for s in top_split(dm.group(1), ";")
                     if s.strip()]
            drop = [s for s in stmts
                    if re.fullmatch(r"\(void\)\((\w+)\)", s)]
            rest = [s for s in stmts if s not in drop]
            if len(rest) == 1:
                dropped = [re.fullmatch(r"\(void\)\((\w+)\)", s).group(1)
                           for s in drop]
                return Entry(name, plist, rest[0], "drop", dropped)
        kind = "special" if ";" in body or "{" in body else "expr"
        # A parameter the body never names is dropped (not evaluated).
        used = set(IDENT.findall(body))
        unused = [p for p in plist if p not in used]
        if unused and kind == "expr":
            return Entry(name, plist, body, "drop", unused)
        return Entry(name, plist, body, kind)


def substitute(entry, args, in_define=False):
    """The body of @entry with @args for its parameters (inside a
    #define, parentheses around an argument are always kept: it may be a
    parameter of that macro)."""
    if len(args) != len(entry.params):
        raise TranslateError(f"{entry.name}: {len(args)} arguments, "
                             f"definition takes {len(entry.params)}")
    params = dict(zip(entry.params, args))
    for p in entry.dropped:
        params[p] = None
    out, body, i = [], entry.body, 0
    for m in IDENT.finditer(body):
        if m.group(0) not in params:
            continue
        arg = params[m.group(0)]
        if arg is None:
            raise TranslateError(f"{entry.name}: dropped parameter "
                                 f"{m.group(0)} used")
        s, e = m.span()
        # "(param)" around a simple argument: no parentheses needed.
        if (not in_define and SIMPLE.match(arg) and s > 0 and
                body[s - 1] == "(" and
                e < len(body) and body[e] == ")" and
                (s < 2 or not re.match(r"[\w)\]]", body[s - 2]))):
            out.append(body[i:s - 1])
            out.append(arg)
            i = e + 1
        else:
            out.append(body[i:s])
            out.append(arg)
            i = e
    out.append(body[i:])
    res = "".join(out)
    # *(&x) -> x (the cache words take &cache).
    res = re.sub(r"\*&([A-Za-z_]\w*)\b", r"\1", res)
    return res


# ---------------------------------------------------------------------------
# Special words: not expressions in compat/kernel.h


INVERSE = {"!=": "==", "==": "!=", "<": ">=", ">": "<=", "<=": ">",
           ">=": "<"}


def negate(cond):
    """!(cond), written as the kernel would: a != b -> a == b, a > b ->
    a <= b (one comparison at the top level, no && || ?: there)."""
    masked = code_mask(cond)
    top, depth = [], 0
    i = 0
    while i < len(masked):
        c = masked[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            two = masked[i:i + 2]
            if two in ("&&", "||", "<<", ">>") or c == "?":
                if two in ("<<", ">>"):
                    i += 2
                    continue
                return f"!({cond})"
            if two in INVERSE:
                top.append((i, 2, two))
                i += 2
                continue
            if c in "<>":
                top.append((i, 1, c))
        i += 1
    if len(top) != 1:
        return f"!({cond})"
    pos, n, op = top[0]
    rest = cond[pos + n:]
    nl = "\n" if "\n" in rest[:len(rest) - len(rest.lstrip())] else ""
    return f"{cond[:pos].rstrip()} {INVERSE[op]}{nl or ' '}{rest.lstrip()}"


def reflow(head, arg, indent):
    """head + arg + ")": continuation lines of @arg aligned after the
    opening parenthesis of @head (which starts at column @indent)."""
    lines = [ln.strip() for ln in arg.split("\n")]
    pad = tabs_to(vis_width(indent + head))
    return head + ("\n" + pad).join(lines) + ")"


def special_build_bug_on(args, at_line_start, indent):
    """RK_BUILD_BUG_ON(cond): static_assert(cond's negation) at file scope
    (kernel.h's own definition is static_assert(!(cond))); inside a
    function or macro body the kernel's BUILD_BUG_ON(cond)."""
    (cond,) = args
    if at_line_start:
        return reflow("static_assert(", negate(cond), indent)
    return reflow("BUILD_BUG_ON(", cond, indent)


def special_define_cache_size(args, at_line_start, indent):
    """RK_DEFINE_CACHE_SIZE(name, bytes, align): kernel.h's definition,
    laid out as kernel code."""
    name, size, align = args
    if not IDENT.fullmatch(name) or not at_line_start:
        raise TranslateError(f"RK_DEFINE_CACHE_SIZE: cache name {name!r}, "
                             "or not at file scope")
    lead = f"\t{name} = kmem_cache_create("
    pad = tabs_to(vis_width(lead))
    return (f"static struct kmem_cache *{name} __ro_after_init;\n\n"
            f"static int __init {name}_create(void)\n{{\n"
            f"{lead}\"{name}\", {size}, {align},\n"
            f"{pad}SLAB_PANIC, NULL);\n"
            f"\treturn 0;\n}}\n"
            f"core_initcall({name}_create)")


def tabs_to(col):
    return "\t" * (col // 8) + " " * (col % 8)


SPECIAL = {
    "RK_BUILD_BUG_ON": special_build_bug_on,
    "RK_DEFINE_CACHE_SIZE": special_define_cache_size,
}


# ---------------------------------------------------------------------------
# Passes


def drop_flavor_blocks(text, what):
    """Remove #if RK_HAVE_FLAVORS blocks, keep their #else branches
    (#if !RK_HAVE_FLAVORS: the reverse)."""
    out, stack = [], []	# stack: None (other #if) or [keep]
    for line in text.split("\n"):
        d = re.match(r"^\s*#\s*(\w+)\s*(.*?)\s*$", line)
        kw = d.group(1) if d else None
        arg = d.group(2) if d else ""
        if kw == "if" and re.fullmatch(r"!?\s*RK_HAVE_FLAVORS", arg):
            stack.append([arg.startswith("!")])
            continue
        if d and "RK_HAVE_FLAVORS" in line:
            raise TranslateError(f"{what}: RK_HAVE_FLAVORS only as "
                                 f"'#if RK_HAVE_FLAVORS' or "
                                 f"'#if !RK_HAVE_FLAVORS': {line.strip()}")
        if kw in ("if", "ifdef", "ifndef"):
            stack.append(None)
        elif kw in ("else", "elif", "endif") and stack and stack[-1]:
            if kw == "elif":
                raise TranslateError(f"{what}: #elif in an RK_HAVE_FLAVORS "
                                     "block")
            if kw == "else":
                stack[-1][0] = not stack[-1][0]
            else:
                stack.pop()
            continue
        elif kw == "endif":
            stack.pop()
        if all(f is None or f[0] for f in stack):
            out.append(line)
    if stack:
        raise TranslateError(f"{what}: unterminated #if")
    res = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", res)


def translate(text, what, table, exports, rewritten=frozenset()):
    """Expand every vocabulary word of @text (a core file named @what).

    @exports: "plain" (EXPORT_SYMBOL), or a set of symbols to export with
    EXPORT_SYMBOL_GPL (the others lose their export line).  @rewritten:
    lines of @text the caller already rewrote, laid out as the lines this
    translation changes (wrap_long_lines())."""
    orig = set(text.split("\n")) - set(rewritten)
    masked = code_mask(text)
    for word, allowed in RESTRICTED.items():
        if what not in allowed and re.search(rf"\b{word}\b", masked):
            raise TranslateError(f"{what}: {word} is reserved to "
                                 f"{', '.join(sorted(allowed))} (its kernel "
                                 "mapping keeps lockref's orderings)")
    # Export lines first: they are whole lines.
    def export(m):
        sym = m.group(2)
        if exports == "plain":
            return f"{m.group(1)}EXPORT_SYMBOL({sym});\n"
        if sym in exports:
            return f"{m.group(1)}EXPORT_SYMBOL_GPL({sym});\n"
        return ""
    text = re.sub(r"^([ \t]*)rk_export_symbol\((\w+)\);[ \t]*\n", export,
                  text, flags=re.M)
    text = split_conditional_defines(text, what, table)
    text = expand(text, what, table)
    # Comments: the kernel name of each word.
    spans = comment_spans(text)
    pieces, last = [], 0
    for s, e in spans:
        pieces.append(text[last:s])
        pieces.append(WORD.sub(lambda m: comment_word(m, table, what),
                               text[s:e]))
        last = e
    pieces.append(text[last:])
    text = "".join(pieces)
    for a, b in LIBC.items():
        text = re.sub(rf"\b{a}\b", b, text)
    return wrap_long_lines(align_continuations(text, orig), orig)


DEFINE_BLOCK = re.compile(r"^[ \t]*#[ \t]*define\b(?:.*\\\n)*.*\n", re.M)


def split_conditional_defines(text, what, table):
    """A #define of the core that uses a word compat/kernel.h defines per
    CONFIG_X: written under #ifdef CONFIG_X with the first definition and
    under #else with the other."""
    cond = {n: e for n, e in table.items() if isinstance(e, Conditional)}

    def one(m):
        block = m.group(0)
        used = {w for w in WORD.findall(code_mask(block)) if w in cond}
        if not used:
            return block
        configs = {cond[w].config for w in used}
        if len(configs) != 1:
            raise TranslateError(f"{what}: a #define uses words of two "
                                 f"configs: {sorted(used)}")
        (config,) = configs
        out = f"#ifdef {config}\n"
        for branch in (True, False):
            t = dict(table)
            for w in cond:
                t[w] = cond[w].branch[branch]
            out += expand(block, what, t)
            out += "#else\n" if branch else "#endif\n"
        return out
    return DEFINE_BLOCK.sub(one, text)


def comment_word(m, table, what):
    e = table.get(m.group(0))
    if e is None or e.kind == "special":
        return m.group(0)	# reported by check_output()
    return e.kname()


def expand(text, what, table, in_define=None):
    """Expand the vocabulary words in the code of @text (outermost first;
    arguments recursively).  @in_define: whether all of @text is in a
    #define body (None: find out per word)."""
    masked = code_mask(text)
    defines = [] if in_define is not None else \
        [m.span() for m in DEFINE_BLOCK.finditer(masked)]
    edits, pos = [], 0
    while True:
        m = WORD.search(masked, pos)
        if not m:
            break
        word, s = m.group(0), m.start()
        e = table.get(word)
        if e is None:
            raise TranslateError(f"{what}: {word} is not defined in "
                                 "compat/kernel.h")
        if isinstance(e, Conditional):
            raise TranslateError(f"{what}: {word} depends on {e.config}: "
                                 "use it only in a #define")
        end = m.end()
        ctx = in_define if in_define is not None else \
            any(a <= s < b for a, b in defines)
        if e.params is None:
            if e.kind == "special":
                raise TranslateError(f"{what}: {word} has no translation")
            rep = e.body
            # (x) as a whole argument or statement needs no parentheses.
            before = masked[:s].rstrip()[-1:]
            after = masked[end:].lstrip()[:1]
            if before in ("(", ",", "=") and after in (")", ",", ";"):
                rep = strip_parens(rep)
            edits.append((s, end, rep))
            pos = end
            continue
        j = end
        while j < len(masked) and masked[j] in " \t\n":
            j += 1
        if j >= len(masked) or masked[j] != "(":
            # A function-like word used as a name (a macro argument):
            # only a pure rename can be.
            m2 = re.fullmatch(r"(\w+)\((.*)\)", e.body)
            if not (e.kind == "expr" and m2 and
                    [a.strip() for a in m2.group(2).split(",")] == e.params):
                raise TranslateError(f"{what}: {word} used without "
                                     "arguments, but it is not a rename")
            edits.append((s, end, m2.group(1)))
            pos = end
            continue
        spans, after = split_args(masked, j)
        args = [expand(text[a:b], what, table, ctx).strip()
                for a, b in spans]
        if args == [""] and not e.params:
            args = []
        if e.kind == "special":
            fn = SPECIAL.get(word)
            if fn is None:
                raise TranslateError(f"{what}: {word} has no translation "
                                     "(backport.py SPECIAL)")
            line_start = masked.rfind("\n", 0, s) + 1
            rep = fn(args, s == line_start, text[line_start:s])
        else:
            rep = substitute(e, args, ctx)
            if WORD.search(code_mask(rep)):	# a word defined by another
                rep = expand(rep, what, table, ctx)
        edits.append((s, after, rep))
        pos = after
    for s, e, rep in reversed(edits):
        text = text[:s] + rep + text[e:]
    return text


def vis_width(s):
    w = 0
    for c in s:
        w = (w // 8 + 1) * 8 if c == "\t" else w + 1
    return w


def align_continuations(text, orig=frozenset()):
    """Backslashes of multi-line macros: aligned with tabs past the
    longest line of each macro (the expansion changed line lengths)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].endswith("\\"):
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].endswith("\\"):
            j += 1
        if all(lines[k] in orig for k in range(i, j + 1) if k < len(lines)):
            i = j
            continue
        body = [lines[k][:-1].rstrip() for k in range(i, j)]
        width = max(vis_width(b) for b in body)
        col = (width // 8 + 1) * 8
        for k, b in zip(range(i, j), body):
            if col > 96:
                lines[k] = b + " \\"
                continue
            while vis_width(b) < col:
                b += "\t"
            lines[k] = b + "\\"
        i = j
    return "\n".join(lines)


WRAP_AT = 80


def wrap_long_lines(text, orig):
    """Kernel layout for the lines the translation changed (not in @orig,
    the input's lines): a line inside parentheses opened on a changed line
    is aligned after the innermost open parenthesis (the call's name may
    have changed length) if it was aligned (spaces after its tabs), and
    a changed line longer than WRAP_AT columns
    is broken after a comma or before a | || && inside parentheses, the
    rest aligned the same way.  Comments, preprocessor lines and macro
    bodies (backslash lines) are left alone."""
    lines = text.split("\n")
    masks = code_mask(text).split("\n")
    out = []
    stack = []	# open parentheses: (visual column, opened on a changed line)

    def scan(line, masked, changed):
        for i, c in enumerate(masked):
            if c in "([":
                stack.append((vis_width(line[:i + 1]),
                              changed and i < len(masked.rstrip()) - 1))
            elif c in ")]" and stack:
                stack.pop()

    def plain(line, masked):
        return not (line.rstrip().endswith("\\") or
                    line.lstrip().startswith(("#", "*")) or
                    "/*" in line or "*/" in line or "//" in line)

    prev_changed = False
    for line, masked in zip(lines, masks):
        changed = line not in orig
        # Only an alignment indent is realigned: tabs then spaces, or
        # tabs alone ending less than a tab to the right of the
        # parenthesis (aligned with it before the kernel's shorter words
        # moved it left: rk_always_inline, uint64_t) on a line that is
        # an argument (it ends with a comma, or closes the parenthesis).
        # A block indent is not: CMPXCHG_LOOP's code arguments are
        # statements.
        if stack and stack[-1][1] and plain(line, masked) and \
                line.strip() and (re.match(r"\t* +\S", line) or (
                    re.match(r"\t+\S", line) and
                    0 < vis_width(line[:len(line) - len(line.lstrip())]) -
                    stack[-1][0] < 8 and
                    (masked.rstrip().endswith(",") or
                     masked.count(")") > masked.count("(")))):
            body = line.lstrip()
            new = tabs_to(stack[-1][0]) + body
            if new != line:
                masked = " " * (len(new) - len(body)) + masked.lstrip()
                line, changed = new, True
        while changed and plain(line, masked) and \
                vis_width(line) > WRAP_AT:
            best, st = None, list(stack)
            for i, c in enumerate(masked):
                if c in "([":
                    st.append((vis_width(line[:i + 1]), True))
                elif c in ")]":
                    if st:
                        st.pop()
                elif st and (c == "," or masked.startswith(" | ", i) or
                             masked.startswith(" || ", i) or
                             masked.startswith(" && ", i)):
                    # After the comma or the operator (kernel style).
                    cut = i + 1 if c == "," else \
                        masked.index(" ", i + 1)
                    if vis_width(line[:cut].rstrip()) <= WRAP_AT and \
                            line[cut:].strip():
                        best = (cut, st[-1][0])
            if best is None or vis_width(tabs_to(best[1]) +
                                         line[best[0]:].lstrip()) >= \
                    vis_width(line):
                break
            cut, col = best
            head, hmask = line[:cut].rstrip(), masked[:cut].rstrip()
            out.append(head)
            scan(head, hmask, True)
            rest = line[cut:].lstrip()
            masked = " " * len(tabs_to(col)) + masked[cut:].lstrip()
            line = tabs_to(col) + rest
        out.append(line)
        scan(line, masked, changed)
        prev_changed = changed
    return "\n".join(out)


def needed_headers(text, is_header):
    code = code_mask(text)
    code = re.sub(r"^\s*#\s*include.*$", "", code, flags=re.M)
    need = set()
    for hdr, pat in HEADERS:
        if re.search(rf"\b(?:{pat})\b", code):
            need.add(HEADER_ONLY.get(hdr, hdr) if is_header else hdr)
    return need


def include_block(headers):
    return "".join(f"#include <{h}>\n" for h in sorted(headers))


def check_output(text, what):
    m = WORD.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise TranslateError(f"{what}:{line}: {m.group(0)} left in the "
                             "generated file")
    m = FORBIDDEN.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise TranslateError(f"{what}:{line}: userspace-only wording "
                             f"{m.group(0)!r} in a kernel file")
    for bad in ('#include "', "__cplusplus", "__builtin_"):
        if bad in text:
            raise TranslateError(f"{what}: {bad!r} left in a kernel file")


# ---------------------------------------------------------------------------
# Self-test (backport.py test-translate): each case is (what, input,
# expected output or the start of the expected error).

CASES = [
    ("ridr/x.c", "rk_call_rcu(map->flavor, &n->rcu, f);",
     "call_rcu(&n->rcu, f);"),
    ("ridr/x.c", "rk_free(p, sizeof(*p));", "kfree(p);"),
    ("ridr/x.c", "rk_write_once(a->n, rk_read_once(a->n) + 1);",
     "WRITE_ONCE(a->n, READ_ONCE(a->n) + 1);"),
    ("ridr/x.c", "x = rk_new(RK_GFP_NOWAIT);",
     "ERROR: ridr/x.c: rk_new is not defined"),
    ("ridr/x.c", "n = ridr_node_new(RK_GFP_NOWAIT);",
     "n = ridr_node_new(GFP_NOWAIT | __GFP_NOWARN);"),
    ("lockref/lockref.c", "b = rk_spin_value_unlocked(old.lock);",
     "b = arch_spin_value_unlocked(old.lock.rlock.raw_lock);"),
    ("lockref/lockref.c", "LOOP(rk_try_cmpxchg64_release, x);",
     "LOOP(try_cmpxchg64_relaxed, x);"),
    ("lockref/lockref.c", "LOOP(rk_try_cmpxchg64, x);",
     "LOOP(try_cmpxchg64_relaxed, x);"),
    ("ridr/x.c", "LOOP(rk_try_cmpxchg64_release, x);",
     "ERROR: ridr/x.c: rk_try_cmpxchg64_release is reserved"),
    ("ridr/x.c", "RK_BUILD_BUG_ON(RIDR_SLOTS != 64);",
     "static_assert(RIDR_SLOTS == 64);"),
    ("ridr/x.c", "RK_BUILD_BUG_ON(sizeof(a) + 8 * N +\n\t\tsizeof(b) > M);",
     "static_assert(sizeof(a) + 8 * N +\n\t      sizeof(b) <= M);"),
    ("ridr/x.c", "RK_BUILD_BUG_ON((1 << 3) > 8 || x);",
     "static_assert(!((1 << 3) > 8 || x));"),
    ("ridr/x.c", "RK_DEFINE_CACHE(c, struct n);",
     "static struct kmem_cache *c __ro_after_init;\n\n"
     "static int __init c_create(void)\n{\n"
     "\tc = kmem_cache_create(\"c\", sizeof(struct n), __alignof__(struct n),"
     "\n\t\t\t      SLAB_PANIC, NULL);\n"
     "\treturn 0;\n}\ncore_initcall(c_create);"),
    ("ridr/x.c", "#define held(m) rk_lockdep_map_held((m)->l)\nint x;\n",
     "#ifdef CONFIG_DEBUG_LOCK_ALLOC\n#define held(m) (((m)->l) && "
     "lock_is_held((m)->l))\n#else\n#define held(m) ((void)((m)->l), 1)\n"
     "#endif\nint x;\n"),
    ("ridr/x.c", "x = rk_lockdep_map_held(m);",
     "ERROR: ridr/x.c: rk_lockdep_map_held depends on CONFIG_DEBUG_LOCK_ALLOC"),
    ("ridr/x.c", "rk_call_rcu(ridr_flavor(map), &n->rcu, f);",
     "call_rcu(&n->rcu, f);"),
    ("ridr/x.c", "\tRK_BUILD_BUG_ON(sizeof(x) > 8);",
     "\tBUILD_BUG_ON(sizeof(x) > 8);"),
    ("ridr/x.c", "p = rk_cache_zalloc(&c, RK_GFP_KERNEL);",
     "p = kmem_cache_zalloc(c, GFP_KERNEL);"),
    ("ridr/x.c", "rk_cache_free(&c, p);", "kmem_cache_free(c, p);"),
    ("ridr/x.c", "uint64_t b; __builtin_memset(&b, 0, 8);",
     "u64 b; memset(&b, 0, 8);"),
    ("ridr/x.c", "/* rk_read_once() and RK_GFP_NOWAIT */",
     "/* READ_ONCE() and GFP_NOWAIT */"),
    ("ridr/x.c", "int a;\n#if RK_HAVE_FLAVORS\nint f;\n#else\nint k;\n"
     "#endif\n", "int a;\nint k;\n"),
    ("ridr/x.c", "#if !RK_HAVE_FLAVORS\nint k;\n#endif\n", "int k;\n"),
    ("ridr/x.c", "#ifdef RK_HAVE_FLAVORS\n#endif\n",
     "ERROR: ridr/x.c: RK_HAVE_FLAVORS only"),
    ("ridr/x.c", "void f(void)\n{\n}\nrk_export_symbol(f);\n"
     "void g(void)\n{\n}\nrk_export_symbol(g);\n",
     "void f(void)\n{\n}\nEXPORT_SYMBOL_GPL(f);\nvoid g(void)\n{\n}\n"),
    ("ridr/x.c", "/* registered with the liburcu flavor */",
     "ERROR: ridr/x.c:1: userspace-only wording"),
    ("ridr/x.c", "/* see rk_unknown_word */",
     "ERROR: ridr/x.c:1: rk_unknown_word left"),
    ("ridr/x.c", "static rk_always_inline int fgh(int a,\n\t\t\t\tint b)\n",
     "static __always_inline int fgh(int a,\n\t\t\t       int b)\n"),
    ("lockref/lockref.c", "\tLOOP(rk_try_cmpxchg64_relaxed,\n"
     "\t\tx = f(x);\n\t\tif (x)\n\t\t\treturn 0;\n\t);\n",
     "\tLOOP(try_cmpxchg64_relaxed,\n"
     "\t\tx = f(x);\n\t\tif (x)\n\t\t\treturn 0;\n\t);\n"),
]


def selftest(kernel_h):
    table = parse_compat(kernel_h)
    bad = 0
    for what, src, want in CASES:
        try:
            got = drop_flavor_blocks(src, what)
            got = translate(got, what, table, {"f"})
            check_output(got, what)
        except TranslateError as e:
            got = f"ERROR: {e}"
        ok = got.startswith(want) if want.startswith("ERROR") else \
            got == want
        if not ok:
            bad += 1
            print(f"FAIL translate {src!r}\n  want {want!r}\n  got  {got!r}")
    print(f"translate cases: {len(CASES) - bad} passed, {bad} failed")
    return 1 if bad else 0
