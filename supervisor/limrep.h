/* What enforces each limit of a policy on this machine, for the OPENED
 * reply (issue 13): serve and chat say which limits are weaker. */
#ifndef WARDEN_SV_LIMREP_H
#define WARDEN_SV_LIMREP_H

#include "warden/policy.h"

/* A JSON object, malloc'd: {"memory":"cgroup-v1","pids":"rlimit",
 * "cpus":"unavailable","cpu_time":"rlimit","wall_time":"timerfd",
 * "file_size":"rlimit","open_files":"rlimit","output":"supervisor"};
 * "none" for a limit the policy does not set.  The cgroup limits are what
 * wcg_create would choose (wcg_probe), the same choice each jail makes. */
char *limits_report_json(const struct wpolicy *p);

#endif
