"""rk_merged_archive: several cc_library archives as one static library."""

def rk_merged_archive(name, out, libs):
    """Merge the position-independent archives of @libs into @out.

    Writes @out (e.g. libridr.a) and a copy named like @out with
    "_whole.pic.lo" instead of ".a", an always-link archive for the
    shared library's cc_binary: a plain dependency on the cc_library
    targets would link only the members some other object references,
    i.e. none.  Same objects in both.

    With --config=opt Bazel builds a separate lib*.pic.a; in fastbuild its
    lib*.a already holds the .pic.o objects.  Either way only .pic.o
    members are accepted, at least one per library (ridr has several
    source files).
    """
    lo = out[:-len(".a")] + "_whole.pic.lo"
    native.genrule(
        name = name,
        srcs = libs,
        outs = [out, lo],
        cmd = """
set -e
a=$(location {out})
pick() {{
  pic=; plain=
  for f in "$$@"; do
    case $$f in *.pic.a) pic=$$f ;; *.a) plain=$$f ;; esac
  done
  echo "ADDLIB $${{pic:-$$plain}}"
}}
{{ echo "CREATE $$a"
{picks}
  echo SAVE
  echo END
}} | $(AR) -M
members=$$($(AR) t $$a)
[ "$$(echo "$$members" | grep -c '\\.pic\\.o$$')" -ge {n} ] &&
[ "$$(echo "$$members" | grep -vc '\\.pic\\.o$$')" -eq 0 ] || {{
  echo "{out}: expected only .pic.o members, at least {n}, got:" $$members >&2; exit 1; }}
cp $$a $(location {lo})
""".format(
            out = out,
            lo = lo,
            n = len(libs),
            picks = "\n".join(["  pick $(locations %s)" % l for l in libs]),
        ),
        toolchains = ["@bazel_tools//tools/cpp:current_cc_toolchain"],
    )
