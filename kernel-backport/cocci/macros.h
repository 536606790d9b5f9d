// SPDX-License-Identifier: GPL-2.0-only
// Macros spatch cannot parse on its own (cleanup.h guards, Linux 6.5+).
#define scoped_guard(_name, args...) if (1)
