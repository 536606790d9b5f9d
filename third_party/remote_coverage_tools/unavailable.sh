#!/bin/sh
echo "remote_coverage_tools is not available offline; bazel coverage is unsupported here" >&2
exit 1
