/* What enforces each limit of a policy on this machine, for the OPENED
 * reply (issue 13): serve and chat say which limits are weaker. */
#ifndef WARDEN_SV_LIMREP_H
#define WARDEN_SV_LIMREP_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "warden/cgroup.h"
#include "warden/policy.h"
#include "warden/reason.h"

/* A JSON object, malloc'd: {"memory":"cgroup-v1","pids":"rlimit",
 * "cpus":"unavailable","cpu_time":"rlimit","wall_time":"timerfd",
 * "file_size":"rlimit","open_files":"rlimit","output":"supervisor"};
 * "none" for a limit the policy does not set.  The cgroup limits are what
 * wcg_create would choose (wcg_probe), the same choice each jail makes. */
char *limits_report_json(const struct wpolicy *p);

/* The same object for any source of the cgroup limits' mechanisms (the
 * probe above, or a run's own cgroup, supervisor/run.c): those four from
 * mech[], the others from what enforces them whatever the machine.  One
 * place for the names both reports use. */
json_object *limits_mech_object(const struct wpolicy *p, const enum wmech mech[WLIM__N]);

/* OPENED's jail JSON (include/warden/proto.h), malloc'd:
 * {"policy_source":...,"landlock_abi":N}. */
char *jail_report_json(const struct wpolicy *p, const char *ws);

/* The note for a run or block that failed (reason and exit_code: a
 * non-zero exit or a signal) while its memory limit was an rlimit (no
 * memory cgroup), into buf ("" otherwise): nothing
 * tells an allocation RLIMIT_AS refused from the program's own choice, so
 * it says what is known, more firmly when peak (the largest process's,
 * NULL: unknown) used half the limit or more.  who: "the program"; how:
 * " (exit 1)" or ""; raise: what raises the limit, for this front-end. */
void sv_memory_note(const struct wpolicy *p, struct wcg *cg, enum wblock_reason reason,
                    int exit_code, const char *who, const char *how, const uint64_t *peak,
                    const char *raise, char *buf, size_t len);

#endif
