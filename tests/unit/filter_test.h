/* Shared by the two suites of the syscall filter (jail/filter.c):
 * test_filter.c (its decisions, run by a BPF interpreter) and
 * test_filter_live.c (the filter loaded in a forked child). */
#ifndef WARDEN_TEST_FILTER_TEST_H
#define WARDEN_TEST_FILTER_TEST_H

#include <stdbool.h>
#include <string.h>

#include "warden/filter.h"
#include "warden/policy.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#define X32_BIT 0x40000000

/* A policy with nothing but its deny action and audit flag. */
static inline struct wpolicy policy(enum wdeny_action act, bool audit)
{
	struct wpolicy p;

	memset(&p, 0, sizeof(p));
	p.name = (char *)"test";
	p.deny_action = act;
	p.audit = audit;
	return p;
}

#endif
